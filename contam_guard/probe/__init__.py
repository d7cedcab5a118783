"""``contam-guard probe``: membership inference from the model alone, when the training data is not at
hand (docs/how-to/probe.md).

``scores`` defines the methods (loss, zlib, lowercase, Min-K% Prob, Min-K%++); ``backends`` give
token log-probabilities (a local transformers model, or an OpenAI-compatible endpoint);
``items`` reads the golden files and labels; ``evaluate`` compares members with non-members
(AUROC, TPR at low FPR, Mann–Whitney); ``report`` writes the CSV, summaries and ROC plot.
"""

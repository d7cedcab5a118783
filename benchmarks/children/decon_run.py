"""allenai decon (``pip install decontaminate``, ``import decon``) with its default settings.

    python decon_run.py EVALS_DIR TRAINING_DIR REPORT_DIR

decon reads folders: TRAINING_DIR holds the corpus, EVALS_DIR the test questions in decon's
reference format; the report is one JSONL line per (training line, eval item) it judged
contaminated.
"""

from __future__ import annotations

import sys

import decon


def main() -> None:
    evals_dir, training_dir, report_dir = sys.argv[1:4]
    decon.detect(decon.Config(training_dir=training_dir, evals_dir=evals_dir, report_output_dir=report_dir))


if __name__ == "__main__":
    main()

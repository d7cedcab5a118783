"""MADE-UP per-item scores for GSM8K's 1,319 test questions, for the README's worked example.

Not the output of any model: a pretend model that answers 55% of the questions right at random,
and every question a train-vs-test scan finds partly in GSM8K's training split (at least 20% of
its words in shared runs of 10+) right, as a model that had memorised them would. Written in the
shape of lm-evaluation-harness's ``--log_samples`` lines (``doc_id``, ``filter``, ``metrics``,
``exact_match``), without the documents. Usage: python made_up_scores.py > samples_gsm8k_MADE_UP.jsonl
"""

import json
import random
import sys

REMEMBERED = {9, 24, 409, 581, 602, 632, 824, 880, 918}
"""The test items at or over Llama 2's 20% line against the training split (the scan's items CSV)."""

rng = random.Random(17)
for doc_id in range(1319):
    right = doc_id in REMEMBERED or rng.random() < 0.55
    record = {"doc_id": doc_id, "filter": "strict-match", "metrics": ["exact_match"]}
    record |= {"exact_match": 1.0 if right else 0.0, "made_up": True}
    sys.stdout.write(json.dumps(record) + "\n")

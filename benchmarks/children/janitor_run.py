"""lm-eval-harness janitor (python path), as lm-eval runs it: register each test question,
then ``clean_python(doc)`` per training document.

    python janitor_run.py clean   EVAL.jsonl CORPUS.jsonl OUT.json   # the timed run
    python janitor_run.py verdict EVAL.jsonl CORPUS.jsonl OUT.json   # which items, untimed

``clean`` reports how many documents came back changed (a removed span, dropped as too dirty,
or, a known defect, emptied because they are 200 characters or shorter). The janitor does not
say which test item matched, so ``verdict`` repeats its own detection test
(``normalize_string(ngram) in dirt_ngrams`` over ``word_ngrams_indices``) with each registered
n-gram mapped back to the test items that produced it.
"""

from __future__ import annotations

import json
import sys

from lm_eval.decontamination.janitor import Janitor, word_ngrams, word_ngrams_indices


def main() -> None:
    mode, eval_path, corpus_path, out_path = sys.argv[1:5]
    with open(eval_path, encoding="utf-8") as handle:
        questions = [json.loads(line)["question"] for line in handle]
    janitor = Janitor()
    for question in questions:
        janitor.register_contaminant_python(question)
    changed = documents = matched = 0
    flagged: set[int] = set()
    if mode == "verdict":
        owners: dict[str, set[int]] = {}
        for index, question in enumerate(questions):
            for ngram in word_ngrams(janitor.normalize_string(question), janitor.ngram_n):
                owners.setdefault(ngram, set()).add(index)
    with open(corpus_path, encoding="utf-8") as handle:
        for line in handle:
            text = json.loads(line)["text"]
            documents += 1
            if mode == "clean":
                chunks = janitor.clean_python(text)
                changed += chunks != [text]
            else:
                hits: set[int] = set()
                for ngram, _ in word_ngrams_indices(text, janitor.ngram_n):
                    hits |= owners.get(janitor.normalize_string(ngram), set())
                matched += bool(hits)
                flagged |= hits
    with open(out_path, "w", encoding="utf-8") as out:
        result = {"documents": documents, "changed": changed, "matched": matched, "flagged": sorted(flagged)}
        json.dump(result, out)


if __name__ == "__main__":
    main()

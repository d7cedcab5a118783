"""datatrove's NGramsDecontFilter (12-grams) on one JSONL file, index building included.

    python datatrove_run.py EVAL.jsonl CORPUS.jsonl WORKDIR

datatrove's own indexer needs lighteval to fetch tasks from the Hub, so the index file
``gsm8k.index.hashes`` is built here exactly as ``NGramsDecontIndexer.compute_hashes`` does for
a label with no query: xxhash64 of each space-joined 12-gram of spaCy blank-English tokens of
``simplify_text(question)``. Removed documents go to WORKDIR/removed (the exclusion writer), which
records the first contaminated n-gram of each; WORKDIR/verdict.json maps those back to items.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import numpy as np
from datatrove.executor.local import LocalPipelineExecutor
from datatrove.pipeline.decont.n_grams import NGramsDecontConfig, NGramsDecontFilter
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter
from datatrove.utils.hashing import create_hash_func
from datatrove.utils.text import ngrams, simplify_text
from datatrove.utils.typeshelper import Languages
from datatrove.utils.word_tokenizers import load_word_tokenizer


def question_ngrams(questions: list[str], config: NGramsDecontConfig) -> dict[str, set[int]]:
    tokenizer = load_word_tokenizer(Languages.english)
    owners: dict[str, set[int]] = {}
    for index, question in enumerate(questions):
        tokens = tokenizer.word_tokenize(simplify_text(question, config.norm_config))
        for gram in map(" ".join, ngrams(tokens, config.n_grams)):
            owners.setdefault(gram, set()).add(index)
    return owners


def main() -> None:
    eval_path, corpus_path, work_dir = sys.argv[1:4]
    work = Path(work_dir)
    corpus = Path(corpus_path)
    with open(eval_path, encoding="utf-8") as handle:
        questions = [json.loads(line)["question"] for line in handle]
    config = NGramsDecontConfig(n_grams=12)
    owners = question_ngrams(questions, config)
    hash_func = create_hash_func(config.hash_config)
    index = work / "index"
    index.mkdir(parents=True, exist_ok=True)
    hashes = np.array(sorted({hash_func(gram) for gram in owners}), dtype=config.hash_config.np_descr)
    hashes.tofile(index / "gsm8k.index.hashes")
    pipeline = [
        JsonlReader(str(corpus.parent), glob_pattern=corpus.name, text_key="text", id_key="id"),
        NGramsDecontFilter(str(index), config, exclusion_writer=JsonlWriter(str(work / "removed"))),
    ]
    LocalPipelineExecutor(pipeline, tasks=1, workers=1, logging_dir=str(work / "logs")).run()
    flagged: set[int] = set()
    removed = 0
    for path in sorted((work / "removed").glob("*")):
        with gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open() as handle:
            for line in handle:
                removed += 1
                flagged |= owners.get(json.loads(line)["metadata"]["contaminated_ngram"], set())
    (work / "verdict.json").write_text(json.dumps({"removed": removed, "flagged": sorted(flagged)}))


if __name__ == "__main__":
    main()

"""Scan throughput on a GSM8K-shaped corpus: MB/s, records/s and peak RSS, medians of 3.

Corpus (as in ../shared/docs/peers.md): GSM8K train "question + answer" documents repeated 10
times (74,730 JSONL records, about 39 MB), against the 1,319 GSM8K test questions. Each run is a
fresh child process, so peak RSS is per configuration; index building is included.

    python benchmarks/scan_throughput.py [--repeat 10] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

GSM8K = Path(__file__).resolve().parents[2] / "shared" / "data" / "gsm8k"

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from contam_guard.config import Rules
from contam_guard.engine.index import ManifestIndex
from contam_guard.findings import evaluate
from contam_guard.manifest import store
from contam_guard.readers import ReadOptions
from contam_guard.scan import Source, scan
manifest_path, corpus, mode = sys.argv[1:4]
start = time.perf_counter()
index = ManifestIndex.from_manifest(store.load(Path(manifest_path)))
rules = Rules() if mode == "all" else Rules.model_validate(
    {"palm": {"enabled": False}, "llama2": {"enabled": False}, "gpt4": {"enabled": False}})
result = scan(index, [Source(Path(corpus), corpus)], ReadOptions(field="text"),
              windows=rules.gpt4.enabled)
report = evaluate(result, rules)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "records": result.records,
                  "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "flagged": sorted({f.test_index for f in report.findings if f.rule == "gpt3"})}))
"""


def build_corpus(path: Path, repeat: int) -> int:
    lines = (GSM8K / "train.jsonl").read_text(encoding="utf-8").splitlines()
    with path.open("w", encoding="utf-8") as out:
        for copy in range(repeat):
            for number, line in enumerate(lines):
                row = json.loads(line)
                text = row["question"] + "\n" + row["answer"]
                out.write(json.dumps({"id": f"{copy}-{number}", "text": text}) + "\n")
    return path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if not GSM8K.is_dir():
        sys.exit(f"GSM8K not found at {GSM8K}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        corpus = root / "corpus.jsonl"
        size = build_corpus(corpus, args.repeat)
        cg = [sys.executable, "-m", "contam_guard"]
        subprocess.run([*cg, "init", str(root)], check=True, capture_output=True)
        manifest = root / ".contam-guard" / "manifest.json"
        subprocess.run(
            [
                *cg,
                "register",
                "gsm8k",
                str(GSM8K / "test.jsonl"),
                "--field",
                "question",
                "--manifest",
                str(manifest),
            ],
            check=True,
            capture_output=True,
        )
        print(
            f"corpus: {size / 1e6:.1f} MB, GSM8K train x{args.repeat}; manifest "
            f"{manifest.stat().st_size / 1e6:.2f} MB; medians of {args.runs} runs"
        )
        print("| configuration | seconds | MB/s | records/s | peak RSS MiB | gpt3 flags |")
        print("| --- | --- | --- | --- | --- | --- |")
        for mode in ("gpt3", "all"):
            runs = []
            for _ in range(args.runs):
                out = subprocess.run(
                    [sys.executable, "-c", CHILD, str(manifest), str(corpus), mode],
                    check=True,
                    capture_output=True,
                    text=True,
                )
                runs.append(json.loads(out.stdout))
            seconds = statistics.median(r["seconds"] for r in runs)
            rss = statistics.median(r["rss_mib"] for r in runs)
            label = "scan, GPT-3 rule only" if mode == "gpt3" else "scan, all four rules"
            print(
                f"| {label} | {seconds:.2f} | {size / 1e6 / seconds:.1f} | "
                f"{runs[0]['records'] / seconds:,.0f} | {rss:.0f} | {runs[0]['flagged']} |"
            )


if __name__ == "__main__":
    main()

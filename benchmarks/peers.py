"""The peer tools of ../shared/docs/peers.md, each in its own cached virtualenv (see envs.py).

Every peer gets the same corpus and the same registered set (the 1,319 GSM8K test questions),
runs with its defaults, and has index building inside the timed run. A peer that cannot be
installed, or needs an interpreter this machine lacks, becomes a skipped row with the reason.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.context import Context, read_json
from benchmarks.envs import ensure_venv, find_python
from benchmarks.measure import Job, Verdict

CHILDREN = Path(__file__).resolve().parent / "children"
ENV = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}}
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


class PeerUnavailableError(Exception):
    """A peer that cannot run here; the message is the table's reason."""


def _venv(name: str, installs: list[list[str]], minimum: tuple[int, int] = (3, 10)) -> str:
    """The venv's python, installed on first use."""
    python = find_python(minimum)
    if python is None:
        raise PeerUnavailableError(f"needs Python >= {minimum[0]}.{minimum[1]}; none found (PATH, pyenv)")
    venv = ensure_venv(name, python, installs)
    if isinstance(venv, str):
        raise PeerUnavailableError(venv)
    return venv.python


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def janitor(ctx: Context) -> Job:
    python = _venv("lm-eval-janitor", [["--no-deps", "lm-eval==0.4.13"]])
    script = str(CHILDREN / "janitor_run.py")
    paths = [str(ctx.eval_path), str(ctx.corpus.path)]

    def verdict(run_dir: Path) -> Verdict:  # its own test, rerun untimed with items attached
        out = run_dir / "verdict.json"
        subprocess.run(
            [python, script, "verdict", *paths, str(out)], check=True, capture_output=True, env=ENV
        )
        found, timed = read_json(out), read_json(run_dir / "result.json")
        note = f"{timed['changed']:,} documents came back changed (clean ones of <= 200 characters vanish)"
        return Verdict(set(found["flagged"]), found["matched"], note)

    return Job(
        "lm-eval janitor 0.4.13",
        "python path, 13-grams",
        [[python, script, "clean", *paths, "{run}/result.json"]],
        ctx.corpus.text_bytes,
        ctx.corpus.records,
        env=ENV,
        verdict=verdict,
        note="`register_contaminant_python` per question, `clean_python` per document",
    )


def toolkit_mmqa(ctx: Context) -> Job:
    python = _venv("toolkit-mmqa", [["toolkit-mmqa==1.0.0"]])

    def verdict(run_dir: Path) -> Verdict:
        found = read_json(run_dir / "res.json")["predicate"]["details"]["contaminated_records"]
        records = {m["index"] for r in found for m in r["train_matches"]}
        return Verdict({int(r["index"]) for r in found}, len(records), "lists at most 5 records per item")

    argv = [
        str(Path(python).with_name("toolkit-mmqa")), "contamination",
        "--train", f"train={ctx.corpus.path}", "--eval", f"gsm8k={ctx.eval_path}",
        "--train-field", "text", "--eval-field", "question", "--id-field", "id", "--out", "{run}/res.json",
    ]  # fmt: skip
    return Job(
        "toolkit-mmqa 1.0.0",
        "contamination, defaults (13-grams)",
        [argv],
        ctx.corpus.text_bytes,
        ctx.corpus.records,
        ok_codes=frozenset({0, 1}),
        env=ENV,
        verdict=verdict,
        note="exit 1 = contamination found (its gate), a normal run",
    )


def datatrove(ctx: Context) -> Job:
    # orjson: datatrove's JsonlReader refuses to run without it
    python = _venv("datatrove", [["datatrove==0.10.1", "regex", "spacy", "xxhash<4", "orjson"]])

    def verdict(run_dir: Path) -> Verdict:
        found = read_json(run_dir / "verdict.json")
        return Verdict(set(found["flagged"]), found["removed"], "items: first hit per removed document only")

    argv = [python, str(CHILDREN / "datatrove_run.py"), str(ctx.eval_path), str(ctx.corpus.path), "{run}"]
    return Job(
        "datatrove 0.10.1",
        "NGramsDecontFilter, 12-grams",
        [argv],
        ctx.corpus.text_bytes,
        ctx.corpus.records,
        env=ENV,
        verdict=verdict,
        note="index file built as its indexer does (benchmarks/children); one task (one input file)",
    )


def corpus_assay(ctx: Context) -> Job:
    python = _venv("corpus-assay", [["corpus-assay==0.1.0"]], minimum=(3, 12))
    exe = str(Path(python).with_name("corpus-assay"))
    config = (
        "benchmarks:\n  - name: gsm8k\n    dataset: json\n"
        f"    data_files: {json.dumps(str(ctx.eval_path))}\n"
        "    splits: [train]\n    fields: [question]\nngram: 13\n"
    )

    def prepare(run_dir: Path) -> None:
        (run_dir / "config.yaml").write_text(config)

    def verdict(run_dir: Path) -> Verdict:
        items: set[int] = set()
        for path in (run_dir / "out" / "contaminated_docs").glob("*.ndjson"):
            items |= {int(hit["item_id"]) for doc in _jsonl(path) for hit in doc["item_hits"]}
        return Verdict(items, read_json(run_dir / "out" / "_FINAL_SUMMARY.json")["total_contaminated"])

    steps = [
        [exe, "build-index", "--out-index", "{run}/index.native", "--config", "{run}/config.yaml",
         "--allow-unpinned"],
        [exe, "scan", "--input", str(ctx.corpus.path), "--index", "{run}/index.native",
         "--out-dir", "{run}/out", "--id-key", "id", "--config", "{run}/config.yaml"],
    ]  # fmt: skip
    # it reads the registered set with HF datasets: a cache in the run folder, so no run reuses another's
    return Job(
        "corpus-assay 0.1.0",
        "build-index + scan, defaults (13-grams, 41 stop words)",
        steps,
        ctx.corpus.text_bytes,
        ctx.corpus.records,
        env={**ENV, **OFFLINE, "HF_HOME": "{run}/hf"},
        prepare=prepare,
        verdict=verdict,
        note="one input file is one worker",
    )


def decon(ctx: Context) -> Job:
    python = _venv("decontaminate", [["decontaminate==0.3.0.post4"]], minimum=(3, 12))

    def prepare(run_dir: Path) -> None:
        (run_dir / "train").mkdir()
        (run_dir / "train" / ctx.corpus.path.name).symlink_to(ctx.corpus.path)
        (run_dir / "evals").mkdir()
        rows = [json.loads(line) for line in ctx.eval_path.read_text(encoding="utf-8").splitlines()]
        lines = [
            json.dumps({"eval_key": "gsm8k", "eval_instance_index": r["id"], "split": "test",
                        "question": r["question"], "doc_id": r["id"], "fingerprint": str(r["id"])})
            for r in rows
        ]  # fmt: skip
        (run_dir / "evals" / "gsm8k.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")

    def verdict(run_dir: Path) -> Verdict:
        found = [row for path in (run_dir / "report").glob("*.jsonl") for row in _jsonl(path)]
        records = {(r["training_file"], r["training_line"]) for r in found}
        return Verdict({int(r["eval_instance_index"]) for r in found}, len(records))

    argv = [python, str(CHILDREN / "decon_run.py"), "{run}/evals", "{run}/train", "{run}/report"]
    return Job(
        "decontaminate 0.3.0 (allenai decon)",
        "detect, defaults (5 cl100k tokens, score >= 0.8)",
        [argv],
        ctx.corpus.text_bytes,
        ctx.corpus.records,
        env=ENV,
        prepare=prepare,
        verdict=verdict,
        note="one input file is one worker",
    )


PEERS: dict[str, tuple[str, Callable[[Context], Job]]] = {
    "janitor": ("lm-eval janitor 0.4.13", janitor),
    "toolkit-mmqa": ("toolkit-mmqa 1.0.0", toolkit_mmqa),
    "datatrove": ("datatrove 0.10.1", datatrove),
    "corpus-assay": ("corpus-assay 0.1.0", corpus_assay),
    "decon": ("decontaminate 0.3.0 (allenai decon)", decon),
}


def jobs(ctx: Context, names: list[str]) -> list[Job]:
    rows: list[Job] = []
    for name in names:
        tool, make = PEERS[name]
        try:
            rows.append(make(ctx))
        except PeerUnavailableError as reason:
            rows.append(Job(tool, "—", skip=f"skipped: {reason}"))
    return rows

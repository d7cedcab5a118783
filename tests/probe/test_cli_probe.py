"""``contam-guard probe``'s refusals: each a clear message and exit 2, before a model is loaded or
a request sent, with no traceback and no golden text; the optional extras named when missing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import Runner, write, write_jsonl

GOLDEN = [{"id": "a", "text": "Paris is the capital of France"}, {"id": "b", "text": "cats sleep a lot"}]
OPENAI = ("--backend", "openai", "--model", "tiny", "--base-url", "http://127.0.0.1:9/v1")


def without(tmp_path: Path, module: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """The command line in a fresh process in which ``module`` cannot be imported."""
    code = f"import sys; sys.modules[{module!r}] = None; from contam_guard.cli import run; run()"
    return subprocess.run(
        [sys.executable, "-c", code, *(os.fspath(arg) for arg in args)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "CONTAM_GUARD_KEY"},
    )


@pytest.mark.parametrize(
    ("module", "args", "message", "hint"),
    [
        ("torch", ("--backend", "transformers", "--model", "m"), "probe needs torch", "contam-guard[probe]"),
        (
            "transformers",
            ("--backend", "transformers", "--model", "m"),
            "probe needs transformers",
            "contam-guard[probe]",
        ),
        ("httpx", OPENAI, "probe needs httpx", "contam-guard[probe]"),
        ("scipy", (*OPENAI, "--reference", "bench.jsonl"), "probe needs scipy", "contam-guard[probe]"),
        (
            "matplotlib",
            (*OPENAI, "--reference", "bench.jsonl", "--roc", "roc.png"),
            "--roc needs matplotlib",
            "contam-guard[plot]",
        ),
    ],
)
def test_a_missing_extra_is_named(
    tmp_path: Path, module: str, args: tuple[str, ...], message: str, hint: str
) -> None:
    write_jsonl(tmp_path / "bench.jsonl", GOLDEN)
    done = without(tmp_path, module, "probe", "bench.jsonl", *args)
    assert done.returncode == 2, done.stderr
    # The hidden module is named (with any other missing piece of the extra: `make test` runs
    # without torch and transformers, so hiding one of them names both).
    prefix = message.split(" needs ", maxsplit=1)[0] + " needs"
    needs = next(line for line in done.stderr.splitlines() if prefix in line)
    assert module in needs and f"pip install '{hint}'" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "roc.png").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--backend", "openai", "--model", "tiny"), "--backend openai needs --base-url"),
        ((*OPENAI, "--summary", "s.md"), "--summary needs non-members to compare with"),
        ((*OPENAI, "--roc", "r.png"), "--roc needs non-members"),
        ((*OPENAI, "--k", "0"), "0 < k <= 1"),
        ((*OPENAI, "--k", "1.5"), "0 < k <= 1"),
        ((*OPENAI, "--methods", "loss,perplexity"), "unknown method(s) perplexity"),
        ((*OPENAI, "--methods", "minkpp"), "minkpp needs the whole next-token distribution"),
        ((*OPENAI, "--device", "cuda"), "--device and --batch-size are for --backend transformers"),
        (
            ("--backend", "transformers", "--model", "m", "--base-url", "http://x/v1"),
            "are for --backend openai",
        ),
        ((*OPENAI, "--items-csv", "bench.jsonl"), "bench.jsonl"),
    ],
)
def test_usage_errors(
    tmp_path: Path, cli: Runner, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    golden = write_jsonl(tmp_path / "bench.jsonl", GOLDEN)
    before = golden.read_bytes()
    done = cli("probe", "bench.jsonl", *args)
    assert done.code == 2, done.err
    assert message in " ".join(done.err.split()), done.err
    assert "Traceback" not in done.err and "Paris" not in done.out + done.err
    assert golden.read_bytes() == before  # an output over an input is refused, never written


def test_bad_golden_and_labels_files_name_file_and_line(
    tmp_path: Path, cli: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("httpx", reason="the [probe] extra (httpx) is not installed")
    monkeypatch.chdir(tmp_path)
    write(
        tmp_path / "broken.jsonl",
        b'{"id": "a", "text": "Paris is the capital"}\n{"id": "b", "text": "cats sle\n',
    )
    done = cli("probe", "broken.jsonl", *OPENAI)
    assert done.code == 2 and "broken.jsonl:2" in done.err, done.err
    assert "cats sle" not in done.err and "Paris" not in done.err

    write_jsonl(tmp_path / "bench.jsonl", GOLDEN)
    write(tmp_path / "dupes.jsonl", b'{"id": "a", "text": "x y"}\n{"id": "a", "text": "y z"}\n')
    done = cli("probe", "dupes.jsonl", "--id-field", "id", *OPENAI)
    assert done.code == 2 and "dupes.jsonl:2: duplicate item id 'a'" in done.err, done.err

    for body, line, message in [
        ("item_id,label\na,1\nzz,0\n", 3, "item_id is not an item of the probed files"),
        ("item_id,label\na,maybe\n", 2, "label must be"),
        ("item_id,label\na,1\na,0\n", 3, "item 'a' is labelled twice"),
        ("id,member\na,1\n", 1, "a labels file needs a header row with the columns item_id and label"),
    ]:
        (tmp_path / "labels.csv").write_text(body, encoding="utf-8")
        done = cli("probe", "bench.jsonl", "--id-field", "id", *OPENAI, "--labels", "labels.csv")
        assert done.code == 2 and f"labels.csv:{line}: {message}" in done.err, done.err


def test_help_says_the_probe_reads_the_golden_file(cli: Runner) -> None:
    done = cli("probe", "--help")
    assert done.code == 0
    flat = " ".join(done.out.split())
    assert "not the manifest" in flat
    for option in (
        "--backend",
        "--model",
        "--base-url",
        "--methods",
        "--k",
        "--items-csv",
        "--reference",
        "--labels",
    ):
        assert option in flat

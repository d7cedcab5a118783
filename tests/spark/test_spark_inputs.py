"""What the Spark engine is given to read: folders walked as ``scan`` walks them (symlinked
folders, broken links and loops with the local engine's notices), and local files refused
before any job when Spark would read other bytes than the local readers (a Git LFS pointer,
UTF-16/32 text): an error naming the file, exit 2, never a silent miss."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contam_guard.cli import main
from contam_guard.errors import InputError
from contam_guard.io.manifest import store
from contam_guard.io.readers import ReadOptions, read_records
from contam_guard.io.sources import Source
from contam_guard.io.walk import data_files

pytest.importorskip("pyspark", reason="PySpark is not installed (pip install 'contam-guard[spark]')")

from contam_guard.engines.spark import scan_files_report
from contam_guard.engines.spark.inputs import plan_files, sources_for

from .conftest import LOCAL, local_reference, on_masters

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

FILLER = "the allotment society notes that the compost heap wants turning before the first frost"


def jsonl(texts: list[str]) -> str:
    return "".join(json.dumps({"text": t}) + "\n" for t in texts)


def golden_text(examples: Path, index: int) -> str:
    rows = [json.loads(line) for line in (examples / "golden" / "arith-mini.jsonl").read_text().splitlines()]
    return str(rows[index]["question"])


def git(cwd: Path, *args: str, env: dict[str, str]) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


@pytest.fixture
def lfs_clone(tmp_path: Path, examples: Path) -> Path:
    """A clone whose working tree holds Git LFS pointers (``data/leak.jsonl``, ``data/rows.parquet``)
    and whose LFS store holds their objects, as after ``git lfs fetch`` without a checkout."""
    if shutil.which("git-lfs") is None:
        pytest.skip("git-lfs is not installed (apt-get install git-lfs)")
    config = tmp_path / "gitconfig"
    config.write_text("[user]\n\tname = T\n\temail = t@example.invalid\n[init]\n\tdefaultBranch = main\n")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": str(config), "GIT_CONFIG_NOSYSTEM": "1"}
    origin = tmp_path / "origin"
    (origin / "data").mkdir(parents=True)
    git(origin, "init", "-q", env=env)
    git(origin, "lfs", "install", "--local", env=env)
    git(origin, "lfs", "track", "data/**", env=env)
    (origin / "data" / "leak.jsonl").write_text(jsonl([FILLER, golden_text(examples, 2)]))
    pq.write_table(pa.table({"text": [FILLER, golden_text(examples, 2)]}), origin / "data" / "rows.parquet")
    git(origin, "add", "-A", env=env)
    git(origin, "commit", "-q", "-m", "data in LFS", env=env)
    clone = tmp_path / "clone"
    skip = {**env, "GIT_LFS_SKIP_SMUDGE": "1"}
    git(tmp_path, "clone", "-q", str(origin), str(clone), env=skip)
    git(clone, "lfs", "fetch", env=skip)
    return clone


def test_spark_refuses_lfs_pointers_whose_objects_the_local_engine_reads(
    lfs_clone: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(lfs_clone)
    for name in ("data/leak.jsonl", "data/rows.parquet"):
        assert Path(name).read_bytes().startswith(b"version https://git-lfs.github.com/spec/v1\n")
        # The control: the local readers find the object and read the leak from it.
        records = list(read_records(Path(name), name, ReadOptions()))
        assert len(records) == 2
        with pytest.raises(InputError) as refused:
            plan_files(sources_for([name]), ReadOptions())
        message = str(refused.value)
        assert message.startswith(f"{name}: is a Git LFS pointer (object sha256:"), message
        assert "would scan the pointer's text" in message and "git lfs checkout" in message


@on_masters(LOCAL)  # refused on the driver, before any job: the master does not matter
def test_spark_scan_command_exits_2_on_an_lfs_pointer(
    spark: SparkSession, lfs_clone: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(lfs_clone)
    with pytest.raises(SystemExit) as done:
        main(["init"])
    assert done.value.code in (0, None)
    capsys.readouterr()
    assert spark.sparkContext.master is not None  # a running context has one
    with pytest.raises(SystemExit) as done:
        main(["scan", "data", "--engine", "spark", "--master", spark.sparkContext.master])
    err = capsys.readouterr().err
    assert done.value.code == 2, err
    assert "data/leak.jsonl: is a Git LFS pointer" in err and "Traceback" not in err


def encoded(text: str, codec: str, bom: bytes = b"") -> bytes:
    return bom + text.encode(codec)


NON_ASCII = "café crème, naïve façade"
TRANSCODED = [
    # name, its bytes from the records' texts, --encoding, what the refusal says it is
    ("bom-utf16le.jsonl", lambda t: encoded(jsonl(t), "utf-16-le", b"\xff\xfe"), "utf-8", "utf-16-le"),
    ("bomless-utf16le.txt", lambda t: encoded("\n\n".join(t) + "\n", "utf-16-le"), "utf-8", "utf-16-le"),
    ("bomless-utf16be.jsonl", lambda t: encoded(jsonl(t), "utf-16-be"), "utf-8", "utf-16-be"),
    (
        "utf16be.jsonl.gz",
        lambda t: gzip.compress(encoded(jsonl(t), "utf-16-be", b"\xfe\xff")),
        "utf-8",
        "utf-16-be",
    ),
    (
        "bom-utf32le.txt",
        lambda t: encoded("\n\n".join(t) + "\n", "utf-32-le", b"\xff\xfe\0\0"),
        "utf-8",
        "utf-32-le",
    ),
    ("bom-utf8.txt", lambda t: encoded("\n\n".join(t) + "\n", "utf-8", b"\xef\xbb\xbf"), "latin-1", "utf-8"),
]


@pytest.mark.parametrize(
    ("name", "encode", "encoding", "codec"), TRANSCODED, ids=[row[0] for row in TRANSCODED]
)
def test_spark_refuses_text_the_local_readers_transcode(
    tmp_path: Path,
    examples: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    encode: Callable[[list[str]], bytes],
    encoding: str,
    codec: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    texts = [FILLER, NON_ASCII, golden_text(examples, 2)]
    Path(name).write_bytes(encode(texts))
    read = ReadOptions(encoding=encoding)
    # The control: the local readers transcode it and read every record as written.
    assert [r.segments[-1].text for r in read_records(Path(name), name, read)] == texts
    with pytest.raises(InputError) as refused:
        plan_files(sources_for([name]), read)
    assert str(refused.value).startswith(f"{name}: is {codec} text"), str(refused.value)
    assert ("iconv" in str(refused.value)) == (codec != "utf-8")


def test_spark_plans_utf8_and_latin1_files_as_they_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refusal is for files Spark would read other bytes from, not for every BOM or codec."""
    monkeypatch.chdir(tmp_path)
    Path("bom.jsonl").write_bytes(b"\xef\xbb\xbf" + jsonl([FILLER, NON_ASCII]).encode())
    Path("latin.txt").write_bytes(f"{NON_ASCII}\n".encode("latin-1"))
    assert [f.display for f in plan_files(sources_for(["bom.jsonl"]), ReadOptions()).ordered()] == [
        "bom.jsonl"
    ]
    latin = plan_files(sources_for(["latin.txt"]), ReadOptions(encoding="latin-1"))
    assert [f.display for f in latin.ordered()] == ["latin.txt"]


@pytest.fixture
def walked(tmp_path: Path, examples: Path) -> Path:
    """``data/``: a file, a symlinked folder outside it, a broken link, a loop and a golden file."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "leak.jsonl").write_text(jsonl([FILLER, golden_text(examples, 2)]))
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.jsonl").write_text(jsonl([golden_text(examples, 9), FILLER]))
    (data / "linked").symlink_to(outside, target_is_directory=True)
    (data / "broken.jsonl").symlink_to(tmp_path / "gone.jsonl")
    (data / "loop").symlink_to(data, target_is_directory=True)
    shutil.copy(examples / "golden" / "arith-mini.jsonl", data / "gold.jsonl")
    return data


def test_spark_walks_folders_as_the_local_engine(walked: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(walked.parent)
    golden = (walked / "gold.jsonl").resolve()

    def excluded(path: Path) -> str | None:
        return "a golden file of set 'arith-mini'" if path.resolve() == golden else None

    sources = sources_for(["data", "s3a://bucket/more.jsonl"], excluded)

    local = data_files([Path("data")], excluded)
    expected: list[tuple[str, str, str | None]] = [(os.fspath(p), p.as_posix(), None) for p in local.files]
    expected += [(os.fspath(n.path), n.path.as_posix(), n.reason) for n in local.notices]
    expected.append(("s3a://bucket/more.jsonl", "s3a://bucket/more.jsonl", None))
    assert [(s.location, s.display, s.notice) for s in sources] == expected
    assert [s.display for s in sources if s.notice is None] == [
        "data/a.jsonl",
        "data/linked/leak.jsonl",  # named by the link, not by the folder it points to
        "s3a://bucket/more.jsonl",
    ]
    notices = {s.display: s.notice for s in sources if s.notice is not None}
    assert set(notices) == {"data/broken.jsonl", "data/gold.jsonl", "data/loop"}
    assert "broken symlink" in str(notices["data/broken.jsonl"])


@on_masters(LOCAL)
def test_spark_scan_of_a_walked_folder_matches_local(
    spark: SparkSession, walked: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(walked.parent)
    manifest = store.load(project / ".contam-guard" / "manifest.json")
    (walked / "gold.jsonl").unlink()  # the library has no project root to exclude golden files by

    on_spark = scan_files_report(spark, ["data"], "text", manifest)

    walk = data_files([Path("data")])
    names = [p.as_posix() for p in walk.files]
    sources = [Source(Path(n), n) for n in names]
    local = local_reference(manifest, sources, ReadOptions(fields=("text",)))
    assert [(f.rule, f.item_id, f.pairs) for f in on_spark.findings] == [
        (f.rule, f.item_id, f.pairs) for f in local.findings
    ]
    assert {p.source for f in on_spark.findings for p in f.pairs} == {
        "data/a.jsonl",
        "data/linked/leak.jsonl",
    }
    assert sorted(on_spark.result.skipped) == sorted(f"{n.path.as_posix()}: {n.reason}" for n in walk.notices)
    assert any("data/broken.jsonl: a broken symlink" in s for s in on_spark.result.skipped)

"""The class-data archive of a local Spark scan, without a JVM (engines/spark/class_archive.py).

Where the archive is kept and when it is off; its name follows the JDK's runtime image, the Spark
jars and the JVM options; a scan with no archive yet writes one under a temporary name, and
``save`` moves it into place once the JVM has exited cleanly (a real process stands in for the
JVM here: it writes the file when its standard input ends, as the gateway JVM exits), removing
the archives of other names; a JVM that fails leaves nothing. tests/spark/ runs the real JVM.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="PySpark is not installed (pip install 'contam-guard[spark]')")

from pyspark import SparkContext
from pyspark.sql import SparkSession

from contam_guard.cli.commands import spark_scan
from contam_guard.engines.spark import class_archive, engine
from contam_guard.engines.spark.class_archive import (
    ARCHIVE_ENV,
    ClassArchive,
    archive_name,
    folder,
    plan,
    save,
)

OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


STAND_IN_JAVA = """#!/bin/sh
# As the JVM: starts (exit 0) with an archive it can map, crashes (134) with a damaged one.
for arg in "$@"; do
  case "$arg" in -XX:SharedArchiveFile=*) archive="${arg#-XX:SharedArchiveFile=}";; esac
done
head -c 7 "$archive" | grep -q classes || exit 134
"""


def _jdk(tmp_path: Path) -> Path:
    jdk = tmp_path / "jdk"
    (jdk / "lib").mkdir(parents=True, exist_ok=True)
    (jdk / "bin").mkdir(exist_ok=True)
    (jdk / "lib" / "modules").write_bytes(b"runtime image")
    java = jdk / "bin" / "java"
    java.write_text(STAND_IN_JAVA)
    java.chmod(0o755)
    return jdk


def _spark_home(tmp_path: Path) -> Path:
    home = tmp_path / "spark"
    (home / "jars").mkdir(parents=True)
    for name in ("spark-core.jar", "spark-sql.jar"):
        (home / "jars" / name).write_bytes(b"classes")
    return home


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({ARCHIVE_ENV: "off"}, None),
        ({ARCHIVE_ENV: " OFF "}, None),
        ({ARCHIVE_ENV: "0"}, None),
        ({ARCHIVE_ENV: "/data/classes"}, Path("/data/classes")),
        ({"XDG_CACHE_HOME": "/xdg"}, Path("/xdg/contam-guard/spark-classes")),
        ({}, Path.home() / ".cache" / "contam-guard" / "spark-classes"),
    ],
    ids=["off", "off-any-case", "zero", "a-folder", "xdg-cache", "home-cache"],
)
def test_where_archives_are_kept(environ: dict[str, str], expected: Path | None) -> None:
    assert folder(environ) == expected


def test_the_name_follows_the_runtime_image_the_jars_and_the_options(tmp_path: Path) -> None:
    jdk, home = _jdk(tmp_path), _spark_home(tmp_path)
    first = archive_name(jdk, home, OPTIONS)
    assert first is not None and first.endswith(".jsa")
    assert archive_name(jdk, home, OPTIONS) == first
    assert archive_name(jdk, home, OPTIONS + " -Xmx2g") != first
    (home / "jars" / "spark-sql.jar").write_bytes(b"other classes")
    after_jar = archive_name(jdk, home, OPTIONS)
    assert after_jar not in (None, first)
    (jdk / "lib" / "modules").write_bytes(b"a newer runtime image")
    assert archive_name(jdk, home, OPTIONS) not in (None, first, after_jar)
    assert archive_name(tmp_path / "no-jdk", home, OPTIONS) is None


def _environ(tmp_path: Path) -> dict[str, str]:
    return {ARCHIVE_ENV: str(tmp_path / "archives"), "JAVA_HOME": str(_jdk(tmp_path))}


def test_a_first_scan_writes_under_a_temporary_name_and_a_later_one_reads(tmp_path: Path) -> None:
    environ = _environ(tmp_path)
    writing = plan(OPTIONS, environ)
    assert writing is not None and writing.writing is not None
    assert writing.writing.parent == writing.path.parent == tmp_path / "archives"
    assert writing.writing.name == f"{writing.path.name}.{os.getpid()}.writing"
    assert writing.java_options().endswith(f' -XX:ArchiveClassesAtExit="{writing.writing}"')
    assert writing.java == tmp_path / "jdk" / "bin" / "java" and writing.base_options == OPTIONS
    writing.path.write_bytes(b"archive")
    reading = plan(OPTIONS, environ)
    assert reading == ClassArchive(writing.path)
    assert reading.java_options().endswith(f' -XX:SharedArchiveFile="{writing.path}"')


def test_paths_in_the_options_are_quoted_for_spark() -> None:
    options = ClassArchive(Path('/home/a user/"x"/c.jsa')).java_options()
    assert options.endswith(' -XX:SharedArchiveFile="/home/a user/\\"x\\"/c.jsa"')
    assert options.startswith("-Xlog:cds*=off -XX:ErrorFile=")


def test_no_archive_when_off_or_without_a_jdk_or_a_folder(tmp_path: Path) -> None:
    assert plan(OPTIONS, {**_environ(tmp_path), ARCHIVE_ENV: "off"}) is None
    assert plan(OPTIONS, {ARCHIVE_ENV: str(tmp_path / "a"), "JAVA_HOME": str(tmp_path / "none")}) is None
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert plan(OPTIONS, {**_environ(tmp_path), ARCHIVE_ENV: str(blocker / "archives")}) is None


def test_temporary_archives_left_by_killed_jvms_are_cleared_when_stale(tmp_path: Path) -> None:
    environ = _environ(tmp_path)
    where = tmp_path / "archives"
    where.mkdir()
    stale, fresh = where / "spark-x.jsa.1.writing", where / "spark-x.jsa.2.writing"
    stale.write_bytes(b"half")
    fresh.write_bytes(b"being written")
    old = time.time() - class_archive.STALE_SECONDS - 60
    os.utime(stale, (old, old))
    assert plan(OPTIONS, environ) is not None
    assert not stale.exists() and fresh.exists()


class _Gateway:
    """What ``save`` uses of PySpark's gateway: its process, and ``shutdown``."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.shut = False

    def shutdown(self) -> None:
        self.shut = True


def _stand_in_jvm(writes: Path, code: int, content: bytes) -> subprocess.Popen[bytes]:
    """A process that, as the gateway JVM, exits when its standard input ends, writing the
    archive on its way out."""
    script = (
        "import sys, pathlib\n"
        "sys.stdin.buffer.read()\n"
        f"pathlib.Path({str(writes)!r}).write_bytes({content!r})\n"
        f"sys.exit({code})\n"
    )
    return subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE)


def _started(
    monkeypatch: pytest.MonkeyPatch, writes: Path, code: int, content: bytes = b"classes"
) -> _Gateway:
    """This process's gateway JVM, as ``save`` finds it: a stand-in (``_stand_in_jvm``)."""
    fake = _Gateway(_stand_in_jvm(writes, code, content * 1000))
    monkeypatch.setattr(SparkContext, "_gateway", fake)
    monkeypatch.setattr(SparkContext, "_jvm", object())
    return fake


def test_save_moves_the_finished_archive_into_place_and_removes_older_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = plan(OPTIONS, _environ(tmp_path))
    assert archive is not None and archive.writing is not None
    older = archive.path.with_name("spark-older.jsa")
    older.write_bytes(b"an archive of another JDK")
    fake = _started(monkeypatch, archive.writing, 0)
    assert save(archive)
    assert fake.shut and fake.proc.returncode == 0
    assert archive.path.read_bytes() == b"classes" * 1000
    assert not archive.writing.exists() and not older.exists()
    assert SparkContext._gateway is None and SparkContext._jvm is None


def test_a_jvm_that_fails_leaves_no_archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = plan(OPTIONS, _environ(tmp_path))
    assert archive is not None and archive.writing is not None
    _started(monkeypatch, archive.writing, 3)
    assert not save(archive)
    assert not archive.path.exists() and not archive.writing.exists()


def test_an_archive_a_jvm_cannot_start_with_is_never_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = plan(OPTIONS, _environ(tmp_path))
    assert archive is not None and archive.writing is not None
    _started(monkeypatch, archive.writing, 0, content=b"cut short")
    assert not save(archive)
    assert not archive.path.exists() and not archive.writing.exists()


def test_an_archive_read_is_never_saved_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "spark-x.jsa"
    path.write_bytes(b"archive")
    fake = _started(monkeypatch, tmp_path / "unused", 0)
    assert not save(ClassArchive(path))
    assert not fake.shut and fake.proc.poll() is None  # the JVM is left running, as it was
    assert path.read_bytes() == b"archive"
    assert fake.proc.stdin is not None
    fake.proc.stdin.close()
    fake.proc.wait(timeout=60)


class _Spark:
    stopped = False

    def stop(self) -> None:
        self.stopped = True


@pytest.mark.parametrize(
    ("raised", "saves"),
    [(None, True), (ValueError("a bad line"), True), (KeyboardInterrupt(), False)],
    ids=["scanned", "failed", "interrupted"],
)
def test_the_command_line_saves_unless_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raised: BaseException | None, saves: bool
) -> None:
    """A scan that ends, even in an error, waits for its JVM to save the archive; one the user
    interrupts (Ctrl-C) does not wait."""
    session = sys.modules["contam_guard.engines.spark.session"]  # the package's name is the function
    archive = ClassArchive(tmp_path / "a.jsa", tmp_path / "a.jsa.1.writing")
    spark, accumulator = _Spark(), object()
    saved: list[ClassArchive] = []

    def scan(*_: object) -> object:
        if raised is not None:
            raise raised
        return accumulator

    monkeypatch.setattr(SparkSession, "getActiveSession", lambda: None)  # no caller's session
    monkeypatch.setattr(session, "local_archive", lambda *_: archive)
    monkeypatch.setattr(spark_scan, "_start", lambda *_: spark)
    monkeypatch.setattr(engine, "scan_sources", scan)
    monkeypatch.setattr(class_archive, "save", saved.append)
    read = SimpleNamespace(group_by=None)
    request: Any = SimpleNamespace(changes=None, jobs=1, skip_unreadable=False, read=read)
    prepared: Any = SimpleNamespace(scanner=None)
    run = spark_scan.spark_engine("local[1]")
    if raised is None:
        assert run(prepared, request, []) is accumulator
    else:
        with pytest.raises(type(raised)):
            run(prepared, request, [])
    assert spark.stopped
    assert saved == ([archive] if saves else [])

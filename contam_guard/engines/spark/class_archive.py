"""A class-data archive of Spark's classes, so that a local scan's JVM starts in half the time.

Most of a small ``--engine spark --master local[N]`` scan is the driver's JVM loading and
linking Spark's classes. The JVM can map them from an archive written by an earlier JVM
(class-data sharing): JDK 17 writes one when it exits with ``-XX:ArchiveClassesAtExit`` and
reads it with ``-XX:SharedArchiveFile``. (JDK 19's ``-XX:+AutoCreateSharedArchive`` does both
itself; JDK 17, the oldest Spark 4 runs on, cannot.) So the command line, on a local master
whose JVM options are its own, does it in two steps:

- when no archive matches this JVM and this Spark, the scan's JVM writes one as it exits: the
  command line stops the JVM and waits for it (about 10 s, once), checks that a JVM starts with
  the file (one cut short crashes the JVM that maps it) and moves it into place (``save``); a
  JVM that is killed or fails leaves no archive, only its temporary file, which a later run
  clears;
- when one matches, the JVM reads it (``java_options``). One damaged later on disk makes the
  JVM crash at start; the command line then starts without it and removes it.

An archive is named by what it depends on (``archive_name``): the JVM's runtime image, the
Spark jars and the JVM options it was written with. A new JDK, a new PySpark or other options
give a new name, and the archive of the old ones is removed when the new one is saved: one
archive at a time, about 160 MB. The JVM checks an archive against its class path too, and
ignores one that does not match (the scan is then as slow as without one, never wrong).

``ARCHIVE_ENV``: ``off`` turns all this off; a folder keeps the archive there instead of the
user's cache folder (``$XDG_CACHE_HOME/contam-guard/spark-classes``, ``~/.cache/...``).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ARCHIVE_ENV = "CONTAM_GUARD_SPARK_CLASS_ARCHIVE"
OFF = frozenset({"off", "0", "no", "false"})
SUFFIX = ".jsa"
WRITING = ".writing"
"""A temporary archive's suffix (after the writer's process id): the JVM writes it as it exits."""
STALE_SECONDS = 3600.0
"""A temporary archive this old belongs to a JVM that never finished it (killed): removed."""
SAVE_TIMEOUT = 120.0
"""Seconds to wait for the JVM to write the archive and exit (about 10 s measured)."""
CHECK_TIMEOUT = 60.0
"""Seconds for ``java -version`` to start with a new archive (under 1 s measured)."""
QUIET = "-Xlog:cds*=off"


@dataclass(frozen=True)
class ClassArchive:
    """The archive a session reads (``writing`` None) or writes at its JVM's exit."""

    path: Path
    writing: Path | None = None
    java: Path | None = None
    """The JDK's ``java``, which checks a written archive before it is saved (``save``)."""
    base_options: str = ""
    """The JVM options the archive is written and read with (besides ``java_options``)."""

    def java_options(self) -> str:
        """The driver JVM's options for this archive, as one string (Spark splits it as a shell
        would, so paths are quoted). Besides the archive's own option: nothing about the archive
        on standard output, which is the scan's (the JVM says there when it cannot use or write
        one), and a JVM that crashes leaves its crash log in the temporary folder, not in the
        folder the scan runs in."""
        archive = (
            f"-XX:ArchiveClassesAtExit={_quoted(self.writing)}"
            if self.writing is not None
            else f"-XX:SharedArchiveFile={_quoted(self.path)}"
        )
        crash_log = Path(tempfile.gettempdir()) / "contam-guard-spark-jvm-crash-%p.log"
        return f"{QUIET} -XX:ErrorFile={_quoted(crash_log)} {archive}"

    def discard(self) -> None:
        """Remove the archive read (the JVM could not start with it): the next scan saves anew."""
        if self.writing is None:
            self.path.unlink(missing_ok=True)


def _quoted(path: Path) -> str:
    """``path`` in double quotes, for Spark's splitting of a string of JVM options."""
    text = str(path).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def folder(environ: Mapping[str, str] = os.environ) -> Path | None:
    """Where archives are kept (None: ``ARCHIVE_ENV`` turns them off)."""
    raw = environ.get(ARCHIVE_ENV, "").strip()
    if raw.lower() in OFF:
        return None
    if raw:
        return Path(raw).expanduser()
    cache = environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(cache) if cache else Path.home() / ".cache"
    return base / "contam-guard" / "spark-classes"


def java_home(environ: Mapping[str, str] = os.environ) -> Path | None:
    """The JDK that ``spark-submit`` runs: ``$JAVA_HOME``, else the ``java`` on the PATH."""
    home = environ.get("JAVA_HOME", "").strip()
    if home:
        return Path(home)
    java = shutil.which("java", path=environ.get("PATH"))
    return None if java is None else Path(java).resolve().parent.parent


def archive_name(jdk: Path, spark_home: Path, java_options: str) -> str | None:
    """The name of the archive for this JDK, these Spark jars and these JVM options (None when
    the JDK's runtime image or the jars cannot be read)."""
    digest = hashlib.sha256(java_options.encode())
    try:
        image = (jdk / "lib" / "modules").stat()
        digest.update(f"{jdk.resolve()}\0{image.st_size}\0{image.st_mtime_ns}".encode())
        for jar in sorted((spark_home / "jars").iterdir()):
            seen = jar.stat()
            digest.update(f"\0{jar.name}\0{seen.st_size}\0{seen.st_mtime_ns}".encode())
    except OSError:
        return None
    return f"spark-{digest.hexdigest()[:20]}{SUFFIX}"


def plan(java_options: str, environ: Mapping[str, str] = os.environ) -> ClassArchive | None:
    """The archive a new local session should read, or write when there is none yet (None: off,
    or the JDK, the jars or the folder cannot be used: the session starts without one)."""
    where = folder(environ)
    jdk = java_home(environ)
    if where is None or jdk is None:
        return None
    from pyspark.find_spark_home import _find_spark_home  # noqa: PLC0415 (pyspark is optional)

    name = archive_name(jdk, Path(_find_spark_home()), java_options)
    if name is None:
        return None
    path = where / name
    if path.is_file():
        return ClassArchive(path)
    try:
        where.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    _clear_stale(where)
    writing = where / f"{name}.{os.getpid()}{WRITING}"
    return ClassArchive(path, writing, jdk / "bin" / "java", java_options)


def save(archive: ClassArchive) -> bool:
    """Stop this process's JVM (its session stopped already), wait for it to write the archive,
    and move the archive into place, removing other ones. False when nothing was saved (the JVM
    failed or took too long, or the folder cannot be written): the next scan tries again."""
    if archive.writing is None:
        return False
    from pyspark import SparkContext  # noqa: PLC0415 (pyspark is optional)

    gateway = SparkContext._gateway
    proc: subprocess.Popen[bytes] | None = getattr(gateway, "proc", None)
    if gateway is None or proc is None:
        return False
    gateway.shutdown()
    # This process's JVM is gone: a later session here starts a new one.
    SparkContext._gateway = None
    SparkContext._jvm = None
    if proc.stdin is not None:
        proc.stdin.close()  # the gateway JVM exits when its standard input ends
    try:
        code = proc.wait(timeout=SAVE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return False  # still writing: the file stays temporary, and is cleared when stale
    try:
        if code != 0 or archive.writing.stat().st_size == 0 or not _starts_with(archive):
            archive.writing.unlink(missing_ok=True)
            return False
        os.replace(archive.writing, archive.path)
        for other in archive.path.parent.glob(f"*{SUFFIX}"):
            if other != archive.path:
                other.unlink(missing_ok=True)
    except OSError:
        return False
    return True


def _starts_with(archive: ClassArchive) -> bool:
    """Whether a JVM starts with the archive just written: one cut short (a full disk) makes the
    JVM crash as it maps it, at every scan, so it is never saved."""
    written = archive.writing
    if archive.java is None or written is None:
        return False
    argv = [
        str(archive.java),
        *shlex.split(archive.base_options),
        QUIET,
        "-XX:+SuppressFatalErrorMessage",  # a crash here is an answer, not a report
        f"-XX:SharedArchiveFile={written}",
        "-version",
    ]
    try:
        done = subprocess.run(
            argv, cwd=written.parent, capture_output=True, timeout=CHECK_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _clear_stale(where: Path) -> None:
    """Remove temporary archives left by JVMs that were killed while writing them."""
    now = time.time()
    for left in where.glob(f"*{WRITING}"):
        try:
            if now - left.stat().st_mtime > STALE_SECONDS:
                left.unlink()
        except OSError:
            continue

"""What the Spark engine reads: files (JSONL, text, Parquet) or a DataFrame, as one input frame.

Every input becomes rows of one schema (``INPUT_SCHEMA``) so that a single ``mapInArrow`` pass
parses and scans them:

- ``file``: the file's key (``canonical`` of its path), "" for a DataFrame;
- ``block``: the byte offset where the Spark split holding the row starts (text files; a split's
  rows are consecutive lines of one file), None otherwise;
- ``raw``: a JSONL line as bytes, without its ``\\n``; a whole plain-text file (read by
  paragraph, which may span any split: one task reads the file); JSON of a nested Parquet value;
- ``text``: the text itself (Parquet string column, DataFrame column);
- ``row``: the record number when the input knows it (Parquet row index, ``record_col``).

Line and record numbers of text files are not known inside a split: each split counts its own
lines, and the driver turns split-local numbers into file numbers from every split's counts
(``splits.py``), so records and lines are named exactly as the local readers name them.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlparse

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as sf
from pyspark.sql import types as st

from contam_guard.errors import InputError
from contam_guard.io import lfs
from contam_guard.io.paths import display_path
from contam_guard.io.readers import (
    SNIFF,
    ReadOptions,
    Segment,
    UnsupportedFileError,
    detect_format,
    read_records,
)
from contam_guard.io.readers.decoding import check_encoding
from contam_guard.io.readers.fields import ALLOW_KEY, KEY_MARK, child_path
from contam_guard.io.readers.opener import open_binary
from contam_guard.io.readers.parquet import ColumnSource, text_sources
from contam_guard.io.readers.transcode import ascii_compatible
from contam_guard.io.walk import Excluded, data_files

FRAME_KEY = ""
"""The ``file`` key of rows that come from a DataFrame."""
LINE_FORMATS = ("jsonl", "text")
SPARK_FORMATS = ("jsonl", "text", "parquet")

INPUT_SCHEMA = st.StructType(
    [
        st.StructField("file", st.StringType(), False),
        st.StructField("block", st.LongType(), True),
        st.StructField("raw", st.BinaryType(), True),
        st.StructField("text", st.StringType(), True),
        st.StructField("row", st.LongType(), True),
        st.StructField("allow", st.BooleanType(), False),
    ]
)


def canonical(path: str) -> str:
    """One spelling of a file's path, whether Spark wrote it (``file:/a%20b``) or we did."""
    if path.startswith("file:"):
        return os.path.normpath(unquote(urlparse(path).path))
    return path


@dataclass(frozen=True)
class InputFile:
    """One input as the workers and the driver see it.

    ``fmt`` is ``jsonl``, ``text``, ``parquet`` or ``frame``; ``sources`` are the columns (or
    paths into them) read as text: a Parquet row's arrive as JSON in ``raw``, a DataFrame's one
    text column in ``text``. ``absolute``: the input gives record numbers itself (``row``),
    else they are counted.
    """

    key: str
    display: str
    fmt: str
    order: int
    sources: tuple[ColumnSource, ...] = ()
    absolute: bool = False
    names: tuple[Segment, ...] = ()
    """A table's column names (and its structs' field names), read with its first row as the
    local reader reads them (``io.readers.columnar.name_segments``)."""


@dataclass(frozen=True)
class InputPlan:
    """Every input of a scan, and how to read text out of it (broadcast to the workers)."""

    files: dict[str, InputFile]
    read: ReadOptions = field(default_factory=ReadOptions)
    notices: tuple[str, ...] = ()
    """Inputs that were not scanned, and why (shown like the local engine's skip notices)."""

    def ordered(self) -> list[InputFile]:
        return sorted(self.files.values(), key=lambda f: f.order)


@dataclass(frozen=True)
class SparkSource:
    """A file to read with Spark: ``location`` as Spark should open it, ``display`` as reports name it.

    ``notice``: why a folder walk left this path out (a broken symlink, a loop, a golden file),
    shown as the local engine shows it; such a source is never read.
    """

    location: str
    display: str
    notice: str | None = None

    @property
    def is_local(self) -> bool:
        scheme = urlparse(self.location).scheme
        return scheme in ("", "file") or len(scheme) == 1  # a Windows drive letter is not a scheme


_COLLAPSED_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):/(?!/)")


def location(given: str | Path) -> str:
    """A path or URL as given. A URL that went through ``pathlib`` (``s3a://b/k`` becomes
    ``s3a:/b/k``, as command-line paths do) gets its ``//`` back."""
    text = os.fspath(given)
    if isinstance(given, Path) and not text.startswith("file:"):
        text = _COLLAPSED_URL.sub(r"\1://", text)
    return text


def sources_for(paths: Iterable[str | Path], excluded: Excluded | None = None) -> list[SparkSource]:
    """Local files as given and local folders walked as ``scan`` walks them (``contam_guard.io.walk``:
    sorted, symlinks followed, each folder once, leaving out what ``excluded`` names); what the
    walk leaves out comes back as a source with its ``notice``. Anything with a URL scheme
    (``hdfs://``, ``s3a://``) is passed to Spark as it is."""
    sources: list[SparkSource] = []
    given = [location(p) for p in paths]
    # One walk per run of local paths, so a folder named twice (or through a link) is read once.
    for local, run in itertools.groupby(given, key=lambda text: SparkSource(text, text).is_local):
        if not local:
            sources += [SparkSource(text, text) for text in run]
            continue
        walk = data_files([Path(canonical(text)) for text in run], excluded)
        sources += [SparkSource(os.fspath(p), display_path(p)) for p in walk.files]
        sources += [SparkSource(os.fspath(n.path), display_path(n.path), n.reason) for n in walk.notices]
    return sources


def _local_path(source: SparkSource) -> Path:
    return Path(canonical(source.location))


def _skip_reason(source: SparkSource, fmt: str, read: ReadOptions) -> str | None:
    """Why the local engine would skip this file (a binary ``.txt``), else None.

    Only local files can be sniffed before the job; the local reader itself decides, so the
    notice and the rule are the local engine's.
    """
    if fmt != "text" or not source.is_local:
        return None
    records = read_records(_local_path(source), source.display, read)
    try:
        next(records, None)
    except UnsupportedFileError as exc:
        return f"{source.display}: {exc.problem}"
    finally:
        records.close()  # type: ignore[attr-defined]
    return None


def _check_local(source: SparkSource, fmt: str, read: ReadOptions) -> None:
    """Refuse a local file whose bytes are not what the local engine would read.

    Spark opens the files itself, not through ``io.readers.opener``, so it would scan a Git LFS
    pointer's three lines instead of the object (even one this clone has), and split UTF-16/32
    text (with a byte-order mark, sniffed without one, or asked for) on the byte ``\\n`` into
    garbage: a silent miss either way. Such a file is an error naming it, with the fix.
    """
    path = _local_path(source)
    pointer = lfs.read_pointer(path, source.display)
    if pointer is not None:
        raise lfs.pointer_error(
            source.display,
            pointer,
            "the Spark engine reads files as they are, and would scan the pointer's text",
            "check the content out (`git lfs pull`; `git lfs checkout` when the objects are "
            "fetched already), or scan it with the local engine, which reads the object",
        )
    if fmt not in LINE_FORMATS:
        return
    with open_binary(path, source.display, encoding=read.encoding, errors=read.errors) as opened:
        codec = opened.transcoded_from
    if codec is None:
        return
    if ascii_compatible(codec):  # a UTF-8 byte-order mark, with another --encoding
        raise InputError(
            source.display,
            f"is {codec} text (its byte-order mark says so): the local readers would transcode it, "
            f"but Spark's tasks decode a file's bytes as --encoding {read.encoding}",
            hint="drop --encoding for this file, or scan it with the local engine",
        )
    raise InputError(
        source.display,
        f"is {codec} text, which the Spark engine cannot read: Spark splits a file's bytes "
        f"into lines on the byte \\n, which in {codec} is not a newline",
        hint="convert it to UTF-8 (e.g. `iconv -f UTF-16 -t UTF-8`), or scan it with the local engine",
    )


def plan_files(sources: Sequence[SparkSource], read: ReadOptions) -> InputPlan:
    """Check every file (existence, format, encoding; a local file that is a Git LFS pointer or
    needs transcoding is an ``InputError``) before any Spark job starts. Sources a folder walk
    left out, and files the local engine would skip, become the plan's notices."""
    if read.whole_file:
        raise InputError(
            sources[0].display if sources else "input",
            "--whole-file is not supported by the Spark engine",
            hint="use the local engine for whole-file text documents",
        )
    files: dict[str, InputFile] = {}
    notices: list[str] = []
    for order, source in enumerate(sources):
        if source.notice is not None:
            notices.append(f"{source.display}: {source.notice}")
            continue
        if source.is_local and not _local_path(source).exists():
            raise InputError(source.display, "no such file or directory")
        fmt = detect_format(PurePosixPath(urlparse(source.location).path or source.location))
        if fmt is None:
            notices.append(f"{source.display}: not a data file type contam-guard reads")
            continue
        if fmt not in SPARK_FORMATS:
            raise InputError(
                source.display,
                f"the Spark engine reads JSONL, text and Parquet, not "
                f"{'a file whose name does not say its format' if fmt == SNIFF else fmt.upper()}",
                hint="convert it to JSONL or Parquet, or scan it with the local engine",
            )
        if source.location.lower().endswith(".zst"):
            raise InputError(
                source.display,
                "Spark cannot read .zst files without Hadoop's native zstd library",
                hint="recompress with gzip (.gz), or convert to Parquet",
            )
        if fmt in LINE_FORMATS:
            check_encoding(read, source.display, line_based=True)
        if source.is_local:
            _check_local(source, fmt, read)
        reason = _skip_reason(source, fmt, read)
        if reason is not None:
            notices.append(reason)
            continue
        key = os.path.abspath(canonical(source.location)) if source.is_local else source.location
        if key in files:
            continue  # named twice: scanned once, as the local engine's folder walk would
        files[key] = InputFile(key, source.display, fmt, order, absolute=fmt == "parquet")
    return InputPlan(files, read, tuple(notices))


def _text_lines(spark: SparkSession, files: list[InputFile], *, whole: bool = False) -> DataFrame:
    # lineSep "\n": only "\n" ends a line, as in the local readers (a lone "\r" does not).
    # Plain text is read by paragraph, and a paragraph may span any split: a file is one row.
    paths = [f.key for f in files]
    lines = (
        spark.read.text(paths, wholetext=True) if whole else spark.read.option("lineSep", "\n").text(paths)
    )
    return lines.select(
        sf.col("_metadata.file_path").alias("file"),
        sf.col("_metadata.file_block_start").alias("block"),
        sf.col("value").cast("binary").alias("raw"),  # bytes: decoding is the readers' job
        sf.lit(None).cast("string").alias("text"),
        sf.lit(None).cast("long").alias("row"),
        sf.lit(False).alias("allow"),
    )


def _holds_strings(dtype: st.DataType) -> bool:
    """Whether values of ``dtype`` can hold text (as ``io.readers.parquet`` judges Arrow types)."""
    if isinstance(dtype, st.StringType):
        return True
    if isinstance(dtype, st.ArrayType):
        return _holds_strings(dtype.elementType)
    if isinstance(dtype, st.StructType):
        return any(_holds_strings(f.dataType) for f in dtype.fields)
    if isinstance(dtype, st.MapType):
        return _holds_strings(dtype.keyType) or _holds_strings(dtype.valueType)
    return False


def _parquet_sources(frame: DataFrame, file: InputFile, read: ReadOptions) -> tuple[ColumnSource, ...]:
    """The columns (or paths into them) read as text, as the local Parquet reader chooses them."""

    def holds_strings(column: str) -> str | None:
        dtype = frame.schema[column].dataType
        return None if _holds_strings(dtype) else dtype.simpleString()

    return tuple(text_sources(frame.columns, holds_strings, read, file.display))


def _name_segments(schema: st.StructType, columns: list[str]) -> tuple[Segment, ...]:
    """The names of ``columns`` and of the struct fields nested in them, in the local reader's
    order (``io.readers.columnar.name_segments``, over Spark's types)."""
    found: list[Segment] = []

    def walk(dtype: st.DataType, where: str) -> None:
        if isinstance(dtype, st.StructType):
            for child in dtype.fields:
                found.append(Segment(where + KEY_MARK, child.name))
                walk(child.dataType, child_path(where, child.name))
        elif isinstance(dtype, st.ArrayType):
            walk(dtype.elementType, f"{where}[]")
        elif isinstance(dtype, st.MapType):
            walk(dtype.keyType, f"{where}[]")
            walk(dtype.valueType, f"{where}[]")

    for column in columns:
        found.append(Segment(KEY_MARK, column))
        walk(schema[column].dataType, child_path("", column))
    return tuple(found)


def _parquet_rows(spark: SparkSession, file: InputFile, read: ReadOptions) -> tuple[DataFrame, InputFile]:
    frame = spark.read.parquet(file.key)
    sources = _parquet_sources(frame, file, read)
    named = bool(read.fields) or read.detect_shape
    read_names = list(dict.fromkeys(s.column for s in sources)) if named else frame.columns
    names = _name_segments(frame.schema, read_names) if read.reads_names else ()
    columns = list(dict.fromkeys(src.column for src in sources))
    allow = (sf.col(ALLOW_KEY) == sf.lit("allow")) if ALLOW_KEY in frame.columns else sf.lit(False)
    # Nulls kept: a field path must see {"content": null} as the local reader does, not a gap.
    as_json = sf.to_json(sf.struct(*(sf.col(c) for c in columns)), {"ignoreNullFields": "false"})
    rows = frame.select(
        sf.lit(file.key).alias("file"),
        sf.lit(None).cast("long").alias("block"),
        (as_json if columns else sf.lit("{}")).cast("binary").alias("raw"),
        sf.lit(None).cast("string").alias("text"),
        # _metadata.row_index: the row's number in its file, whatever the splits (Spark >= 3.5).
        sf.col("_metadata.row_index").alias("row"),
        sf.coalesce(allow, sf.lit(False)).alias("allow"),
    )
    return rows, replace(file, sources=sources, absolute=True, names=names)


def file_frame(spark: SparkSession, plan: InputPlan) -> tuple[DataFrame, InputPlan]:
    """The input frame of every planned file (and the plan, updated with Parquet columns)."""
    frames: list[DataFrame] = []
    files = dict(plan.files)
    lines = [f for f in plan.ordered() if f.fmt == "jsonl"]
    if lines:
        frames.append(_text_lines(spark, lines))
    texts = [f for f in plan.ordered() if f.fmt == "text"]
    if texts:
        frames.append(_text_lines(spark, texts, whole=True))
    for file in plan.ordered():
        if file.fmt != "parquet":
            continue
        if file.key.startswith("/") and os.path.getsize(file.key) == 0:
            continue  # an empty file has no records (and Spark could not read it)
        rows, files[file.key] = _parquet_rows(spark, file, plan.read)
        frames.append(rows)
    if not frames:
        return spark.createDataFrame([], INPUT_SCHEMA), plan
    frame = frames[0]
    for other in frames[1:]:
        frame = frame.unionByName(other)
    return frame, InputPlan(files, plan.read, plan.notices)


def dataframe_frame(
    df: DataFrame, *, text_col: str, record_col: str | None, source: str
) -> tuple[DataFrame, InputPlan]:
    """The input frame of a DataFrame of records: ``text_col`` holds the text; records are
    numbered by ``record_col`` (an integer column) or by their position in the DataFrame."""
    for name in (text_col, record_col):
        if name is not None and name not in df.columns:
            raise InputError(source, f"column {name!r} not found; columns: {', '.join(df.columns)}")
    dtype = df.schema[text_col].dataType
    if not isinstance(dtype, st.StringType):
        raise InputError(source, f"text column {text_col!r} has type {dtype.simpleString()}, expected string")
    if record_col is not None and not isinstance(df.schema[record_col].dataType, st.IntegralType):
        raise InputError(
            source,
            f"record column {record_col!r} has type {df.schema[record_col].dataType.simpleString()}, "
            "expected an integer",
        )
    allow = (sf.col(ALLOW_KEY) == sf.lit("allow")) if ALLOW_KEY in df.columns else sf.lit(False)
    frame = df.select(
        sf.lit(FRAME_KEY).alias("file"),
        sf.lit(None).cast("long").alias("block"),
        sf.lit(None).cast("binary").alias("raw"),
        sf.col(text_col).alias("text"),
        (sf.col(record_col).cast("long") if record_col else sf.lit(None).cast("long")).alias("row"),
        sf.coalesce(allow, sf.lit(False)).alias("allow"),
    )
    file = InputFile(FRAME_KEY, source, "frame", 0, (ColumnSource(text_col, None),), record_col is not None)
    return frame, InputPlan({FRAME_KEY: file})

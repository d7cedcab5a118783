"""What the Spark engine reads: files (JSONL, text, Parquet) or a DataFrame, as one input frame.

Every input becomes rows of one schema (``INPUT_SCHEMA``) so that a single ``mapInArrow`` pass
parses and scans them:

- ``file``: the file's key (``canonical`` of its path), "" for a DataFrame;
- ``block``: the byte offset where the Spark split holding the row starts (text files; a split's
  rows are consecutive lines of one file), None otherwise;
- ``raw``: a JSONL or text line as bytes, without its ``\\n`` (JSON of a nested Parquet value);
- ``text``: the text itself (Parquet string column, DataFrame column);
- ``row``: the record number when the input knows it (Parquet row index, ``record_col``).

Line and record numbers of text files are not known inside a split: each split counts its own
lines, and the driver turns split-local numbers into file numbers from every split's counts
(``splits.py``), so records and lines are named exactly as the local readers name them.
"""

from __future__ import annotations

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
from contam_guard.readers import ReadOptions, UnsupportedFileError, detect_format, read_records
from contam_guard.readers.decoding import check_encoding
from contam_guard.readers.fields import ALLOW_KEY
from contam_guard.readers.parquet import ColumnSource, text_sources

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
    """A file to read with Spark: ``location`` as Spark should open it, ``display`` as reports name it."""

    location: str
    display: str

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


def sources_for(paths: Iterable[str | Path]) -> list[SparkSource]:
    """Local files as given and local folders walked (sorted) for data files, like ``scan``;
    anything with a URL scheme (``hdfs://``, ``s3a://``) is passed to Spark as it is."""
    sources: list[SparkSource] = []
    for given in paths:
        text = location(given)
        if not SparkSource(text, text).is_local:
            sources.append(SparkSource(text, text))
            continue
        path = Path(canonical(text))
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and detect_format(p) is not None)
            sources += [SparkSource(str(p), _display(p)) for p in found]
        else:
            sources.append(SparkSource(str(path), _display(path)))
    return sources


def _display(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return os.fspath(path)


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


def plan_files(sources: Sequence[SparkSource], read: ReadOptions) -> InputPlan:
    """Check every file (existence, format, encoding) before any Spark job starts."""
    if read.whole_file:
        raise InputError(
            sources[0].display if sources else "input",
            "--whole-file is not supported by the Spark engine",
            hint="use the local engine for whole-file text documents",
        )
    files: dict[str, InputFile] = {}
    notices: list[str] = []
    for order, source in enumerate(sources):
        if source.is_local and not _local_path(source).exists():
            raise InputError(source.display, "no such file or directory")
        fmt = detect_format(PurePosixPath(urlparse(source.location).path or source.location))
        if fmt is None:
            notices.append(f"{source.display}: not a data file type contam-guard reads")
            continue
        if fmt not in SPARK_FORMATS:
            raise InputError(
                source.display,
                f"the Spark engine reads JSONL, text and Parquet, not {fmt.upper()}",
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
        reason = _skip_reason(source, fmt, read)
        if reason is not None:
            notices.append(reason)
            continue
        key = os.path.abspath(canonical(source.location)) if source.is_local else source.location
        if key in files:
            continue  # named twice: scanned once, as the local engine's folder walk would
        files[key] = InputFile(key, source.display, fmt, order, absolute=fmt == "parquet")
    return InputPlan(files, read, tuple(notices))


def _text_lines(spark: SparkSession, files: list[InputFile]) -> DataFrame:
    # lineSep "\n": only "\n" ends a line, as in the local readers (a lone "\r" does not).
    lines = spark.read.option("lineSep", "\n").text([f.key for f in files])
    return lines.select(
        sf.col("_metadata.file_path").alias("file"),
        sf.col("_metadata.file_block_start").alias("block"),
        sf.col("value").cast("binary").alias("raw"),  # bytes: decoding is the readers' job
        sf.lit(None).cast("string").alias("text"),
        sf.lit(None).cast("long").alias("row"),
        sf.lit(False).alias("allow"),
    )


def _holds_strings(dtype: st.DataType) -> bool:
    """Whether values of ``dtype`` can hold text (as ``readers.parquet`` judges Arrow types)."""
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


def _parquet_rows(spark: SparkSession, file: InputFile, read: ReadOptions) -> tuple[DataFrame, InputFile]:
    frame = spark.read.parquet(file.key)
    sources = _parquet_sources(frame, file, read)
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
    return rows, replace(file, sources=sources, absolute=True)


def file_frame(spark: SparkSession, plan: InputPlan) -> tuple[DataFrame, InputPlan]:
    """The input frame of every planned file (and the plan, updated with Parquet columns)."""
    frames: list[DataFrame] = []
    files = dict(plan.files)
    lines = [f for f in plan.ordered() if f.fmt in LINE_FORMATS]
    if lines:
        frames.append(_text_lines(spark, lines))
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

"""Which reader a file's name asks for (its suffixes, compression suffixes after them), or
``SNIFF`` when the name does not say."""

from __future__ import annotations

from pathlib import PurePath, PurePosixPath

from contam_guard.io.readers.compression import TAR_SHORTHANDS, compression_of

SNIFF = "sniff"
"""The format of a file whose name says nothing: its bytes decide (``io.readers.auto``)."""
SUFFIX_FORMATS: dict[str, str] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
    ".txt": "text",
    ".md": "text",
    ".text": "text",
    ".arrow": "arrow",
    ".feather": "arrow",
    ".ipc": "arrow",
    ".orc": "orc",
    ".zip": "zip",
    ".tar": "tar",
    ".html": "markup",
    ".htm": "markup",
    ".xhtml": "markup",
    ".xml": "markup",
    ".svg": "markup",
    ".ipynb": "notebook",
}
# Text of code and documents: line by line, as plain text (any other name is sniffed, and read
# as text when it is text: these only spare the sniffing, and let the compiled path read them).
# fmt: off
_TEXT_SUFFIXES = (
    ".py", ".pyi", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".java", ".kt", ".scala", ".go", ".rs", ".c",
    ".h", ".cc", ".cpp", ".hpp", ".cs", ".rb", ".php", ".swift", ".m", ".r", ".jl", ".lua", ".pl",
    ".sh", ".bash", ".zsh", ".sql", ".css", ".scss", ".tex", ".bib", ".rst", ".adoc", ".org", ".yaml",
    ".yml", ".toml", ".ini", ".cfg", ".conf", ".log", ".srt", ".vtt",
)
# fmt: on
for _suffix in _TEXT_SUFFIXES:
    SUFFIX_FORMATS.setdefault(_suffix, "text")
RANDOM_ACCESS = frozenset({"parquet", "arrow", "orc", "zip"})
"""Formats read from anywhere in the file (a compressed one is decompressed to a spool first)."""


def detect_format(path: PurePath | str) -> str:
    """The reader format for ``path`` from its name (case-insensitive): a format of ``READERS``,
    or ``SNIFF`` when the name does not say (the bytes will).

    A compression suffix (``.gz``, ``.zst``, ``.xz``, ``.bz2``, ``.lz4``, ``.gzip``, ``.zstd``)
    may follow any format's suffix; ``.tgz`` and the like are tar archives.
    """
    name = PurePosixPath(str(path)).name.lower() if isinstance(path, str) else path.name.lower()
    suffix = PurePosixPath(name).suffix
    if suffix in TAR_SHORTHANDS:
        return "tar"
    if compression_of(name) != "plain":
        name = name[: -len(suffix)]
        suffix = PurePosixPath(name).suffix
    return SUFFIX_FORMATS.get(suffix, SNIFF)

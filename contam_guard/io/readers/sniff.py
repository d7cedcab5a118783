"""What a file is, from its first bytes: something contam-guard reads, something that cannot hold
text (an image, audio, a model's weights), or something that may hold text it cannot read.

The order matters. Compression and archive signatures come first (they are binary and exact);
then text: no NUL byte in the first bytes, or UTF-16/32 (by byte-order mark, or sniffed as the
opener does), so any text file is read whatever its name; then columnar formats; then the kinds
of data that hold no text, by magic bytes (``puremagic``'s table, and model weights, which it
does not know), or, for binary data whose magic bytes say nothing (a truncated file), by a media
file's name. Whatever is left may hold text that contam-guard cannot read: the caller makes
that an error (exit 2), never a silent pass.
"""

from __future__ import annotations

import codecs
import json
import mimetypes
import struct
from dataclasses import dataclass
from pathlib import PurePosixPath

from contam_guard.io.readers import transcode

HEAD_BYTES = 8192


@dataclass(frozen=True, slots=True)
class Sniffed:
    """One of: ``format`` (a reader format, or a compression such as ``gzip`` whose content is
    sniffed in turn), ``kind`` (cannot hold text: what it is), ``unreadable`` (may hold text
    that contam-guard cannot read: what it is)."""

    format: str | None = None
    kind: str | None = None
    unreadable: str | None = None


_COMPRESSED: tuple[tuple[bytes, str], ...] = (
    (b"\x1f\x8b", "gzip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x04\x22\x4d\x18", "lz4"),
    (b"PK\x03\x04", "zip"),
    (b"PK\x05\x06", "zip"),  # an empty zip archive
)
_COLUMNAR: tuple[tuple[bytes, str], ...] = (
    (b"PAR1", "parquet"),
    (b"ARROW1", "arrow"),
    (b"FEA1", "arrow"),  # Feather version 1
    (b"\xff\xff\xff\xff", "arrow"),  # an Arrow IPC stream (``datasets``' .arrow files)
    (b"ORC", "orc"),
)
_WEIGHTS: tuple[tuple[bytes, str], ...] = (
    (b"GGUF", "model weights (GGUF)"),
    (b"lmgg", "model weights (GGML)"),
    (b"tjgg", "model weights (GGJT)"),
    (b"\x89HDF\r\n\x1a\n", "HDF5 data (model weights or arrays)"),
)
_WEIGHT_SUFFIXES = frozenset(
    {".onnx", ".pb", ".tflite", ".ckpt", ".pth", ".pt", ".safetensors", ".h5", ".keras"}
)
_NOT_TEXT_WORDS = ("image", "audio", "video", "font", "executable", "bytecode", "bitmap", "sound", "movie")
_MARKUP_STARTS = ("<!doctype", "<html", "<?xml", "<svg", "<rss", "<feed", "<head", "<body", "<!--")


def sniff(head: bytes, name: str = "", encoding: str = "utf-8") -> Sniffed:
    """What ``head`` (a file's first bytes; ``name`` its file name, for a hint only where the
    bytes say nothing) is. ``encoding``: what the user asked text to be decoded as."""
    for magic, fmt in _COMPRESSED:
        if head.startswith(magic):
            return Sniffed(format=fmt)
    if _is_bzip2(head):
        return Sniffed(format="bz2")
    if head[257:262] == b"ustar" or (len(head) >= 512 and _is_v7_tar(head)):
        return Sniffed(format="tar")
    text = _text_format(head, encoding)
    if text is not None:
        fmt, valid = text
        if valid:
            return Sniffed(format=fmt)
        # No NUL byte but not UTF-8 either: text in another encoding (the text reader then says
        # which byte, and that --encoding reads it), unless its magic bytes say otherwise.
        binary = _binary(head, name)
        return binary if binary.kind is not None else Sniffed(format=fmt)
    for magic, fmt in _COLUMNAR:
        if head.startswith(magic):
            return Sniffed(format=fmt)
    return _binary(head, name)


def _is_bzip2(head: bytes) -> bool:
    return (
        len(head) >= 10
        and head.startswith(b"BZh")
        and head[3:4].isdigit()
        and head[4:10] in (b"1AY&SY", b"\x17rE8P\x90")
    )


def _is_v7_tar(head: bytes) -> bool:
    """A pre-POSIX tar header: its checksum field matches the header's bytes."""
    field = head[148:156].split(b"\0", 1)[0].strip()
    try:
        stored = int(field, 8)
    except ValueError:
        return False
    header = head[:148] + b" " * 8 + head[156:512]
    return stored == sum(header) and head[0] != 0


def _text_format(head: bytes, encoding: str) -> tuple[str, bool] | None:
    """(the text format ``head`` reads as: ``jsonl``, ``json``, ``markup`` or ``text``; whether
    it decodes), or None for bytes that are not text."""
    bom = transcode.bom_of(head)
    rest = head[bom[1] :] if bom else head
    codec = bom[0] if bom else "utf-8"
    if bom is None and b"\0" in rest:
        sniffed = transcode.sniff(rest) if transcode.ascii_compatible(encoding) else encoding
        if sniffed is None:
            return None
        codec = sniffed
    elif bom is None and transcode.canonical(encoding) != "utf-8":
        codec = encoding
    try:
        decoder = codecs.getincrementaldecoder(codec)("strict")
        decoded, valid = decoder.decode(rest), True  # an unfinished last character waits
    except UnicodeDecodeError:
        decoded, valid = rest.decode(codec, "ignore"), False
    except LookupError:
        return None
    return _which_text(decoded), valid


def _which_text(text: str) -> str:
    start = text.lstrip()
    if start.startswith("{"):
        first = start.split("\n", 1)[0]
        try:
            if isinstance(json.loads(first), dict):
                return "jsonl"
        except ValueError:
            pass
        return "text"
    if start.startswith("[") and start[1:].lstrip()[:1] in ("{", "]"):
        return "json"
    if start[:20].lower().startswith(_MARKUP_STARTS):
        return "markup"
    return "text"


def _binary(head: bytes, name: str) -> Sniffed:
    suffix = PurePosixPath(name).suffix.lower()
    for magic, kind in _WEIGHTS:
        if head.startswith(magic):
            return Sniffed(kind=kind)
    if _is_safetensors(head):
        return Sniffed(kind="model weights (safetensors)")
    if head.startswith(b"\x93NUMPY"):
        return _numpy(head)
    if head[2:4] == b"\r\n" and suffix in (".pyc", ".pyo"):
        return Sniffed(kind="compiled Python bytecode (its .py source is read where it is)")
    if head[4:8] == b"TFL3":
        return Sniffed(kind="model weights (TensorFlow Lite)")
    if head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return Sniffed(unreadable="a Python pickle")
    found = _magic(head)
    if found is not None:
        mime, label = found
        what = f"{label} ({mime})" if mime else label
        if mime.split("/")[0] in ("image", "audio", "video", "font") or any(
            word in label.lower() for word in _NOT_TEXT_WORDS
        ):
            return Sniffed(kind=mime or label)
        return Sniffed(unreadable=what)
    if suffix in _WEIGHT_SUFFIXES:
        return Sniffed(kind=f"model weights (by its {suffix} name)")
    guessed = mimetypes.guess_type(name or "x")[0] or ""
    if guessed.split("/")[0] in ("image", "audio", "video", "font"):  # binary, and named as media
        return Sniffed(kind=f"{guessed} (by its name)")
    return Sniffed(unreadable="binary data of no kind contam-guard knows")


def _is_safetensors(head: bytes) -> bool:
    """safetensors: an 8-byte little-endian header length, then the JSON header."""
    if len(head) < 10:
        return False
    (length,) = struct.unpack("<Q", head[:8])
    return 2 <= length < (100 << 20) and head[8:10] == b'{"'


def _numpy(head: bytes) -> Sniffed:
    """A NumPy array holds no text unless its dtype is a string or object one."""
    dtype = head[10:200].split(b"'descr':", 1)[-1][:16]
    if any(code in dtype for code in (b"U", b"S", b"O", b"|V")):
        return Sniffed(unreadable="a NumPy array of strings or objects")
    return Sniffed(kind="a NumPy array of numbers")


def _magic(head: bytes) -> tuple[str, str] | None:
    """(MIME type, name) of the best match in puremagic's table, or None."""
    import puremagic  # noqa: PLC0415 (its table loads in ~20 ms: only for binary files)

    try:
        matches = puremagic.magic_string(head)
    except (puremagic.PureError, ValueError):
        return None
    if not matches:
        return None
    best = matches[0]
    mime = next((m.mime_type for m in matches if m.confidence == best.confidence and m.mime_type), "")
    return mime, best.name.strip()


__all__ = ["HEAD_BYTES", "Sniffed", "sniff"]

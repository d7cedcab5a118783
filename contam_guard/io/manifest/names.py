"""Where a set's binary files live: ``sets/<set>/<view>.bin`` beside the index.

A name becomes a folder or file name as it is when it is plain (letters, digits, ``.``, ``_``
and ``-``, starting with a letter or digit, at most 64 characters, not a name Windows
reserves); otherwise its plain characters and a short digest of the whole name
(``messages[].content`` gives ``messages__.content-1a2b3c4d``). A name's file name depends on
that name alone, so registering one set never renames another's files. Two names that would
differ only in case (a clash on macOS and Windows) are refused when the second is registered.

The ids of a set are in ``sets/<set>/_ids.bin`` (no plain name starts with ``_``); a view's
window table is in ``<view>.windows.bin`` beside it. A keyed manifest does not reveal its
fields, nor which file holds what: its files are ``part-0.bin``, ``part-1.bin``, ...

Those are a file's *stem*; it is written under its stem with the first 16 hex digits of its
bytes' digest before ``.bin`` (``question.0123456789abcdef.bin``). A file is never replaced
under its name, so a writer killed at any point, or a reader holding the old index, finds every
file that index names as it was (``disk_write.py``). Indexes written before this name their
files by stem alone; those are read as they are.
"""

from __future__ import annotations

import hashlib
import re

SETS_DIR = "sets"
IDS_FILE = "_ids.bin"
ADDRESS_CHARS = 16
_ADDRESSED = re.compile(r"(?P<stem>.+)\.[0-9a-f]{16}\.bin")
_TEMPORARY = re.compile(r"\..+\.bin\.[^/]+\.tmp")
"""What an interrupted atomic write of a set file leaves (``atomic.py``'s temporary names)."""
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_RESERVED = re.compile(r"(con|prn|aux|nul|com\d|lpt\d)(\..*)?", re.IGNORECASE)


def file_name(name: str) -> str:
    """``name`` as one plain path component (the module docstring)."""
    # ".windows" would clash with another view's window file (``question.windows.bin``).
    special = name.endswith(".") or name.casefold().endswith(".windows")
    if _PLAIN.fullmatch(name) and not _RESERVED.fullmatch(name) and not special:
        return name
    plain = re.sub(r"[^A-Za-z0-9._-]", "_", name)[:48].strip(".") or "_"
    return f"{plain}-{hashlib.blake2b(name.encode('utf-8'), digest_size=4).hexdigest()}"


def set_folder(name: str) -> str:
    """The folder of set ``name``'s files, relative to the index's folder (POSIX style)."""
    return f"{SETS_DIR}/{file_name(name)}"


def view_files(set_name: str, views: dict[str, bool], *, keyed: bool) -> dict[str, tuple[str, str | None]]:
    """Each view's files (counts and 5-grams; windows, or None), relative to the index's folder;
    ``views`` says of each view whether it has a window table.
    A keyed manifest's are numbered ``part-0.bin``, ``part-1.bin``, ... (views in name order,
    each's windows after it): the names say nothing of the fields, nor which file is which."""
    folder = set_folder(set_name)
    if not keyed:
        stems = {view: f"{folder}/{file_name(view)}" for view in views}
        return {
            view: (f"{stem}.bin", f"{stem}.windows.bin" if views[view] else None)
            for view, stem in stems.items()
        }
    out: dict[str, tuple[str, str | None]] = {}
    number = 0
    for view in sorted(views):
        main = f"{folder}/part-{number}.bin"
        number += 1
        window = f"{folder}/part-{number}.bin" if views[view] else None
        number += 1 if views[view] else 0
        out[view] = (main, window)
    return out


def ids_file(set_name: str) -> str:
    return f"{set_folder(set_name)}/{IDS_FILE}"


def clash(names: list[str]) -> tuple[str, str] | None:
    """Two of ``names`` whose file names differ only in case, if any."""
    seen: dict[str, str] = {}
    for name in names:
        folded = file_name(name).casefold()
        if folded in seen and seen[folded] != name:
            return seen[folded], name
        seen[folded] = name
    return None


def addressed(stem: str, file_digest: str) -> str:
    """The name a file of stem ``stem`` (``.../question.bin``) is written under, given the digest
    of its bytes."""
    return f"{stem[: -len('.bin')]}.{file_digest[:ADDRESS_CHARS]}.bin"


def stem_of(rel: str) -> str:
    """A file's stem: its name without the digest ``addressed`` put in (as it is, for a name
    written before files were named by content)."""
    match = _ADDRESSED.fullmatch(rel)
    return f"{match['stem']}.bin" if match else rel


def ours(file_name: str) -> bool:
    """Whether a file in a set's folder is one a manifest writer makes: a set file named by its
    content, or a temporary file an interrupted write left (others are left alone)."""
    return bool(_ADDRESSED.fullmatch(file_name) or _TEMPORARY.fullmatch(file_name))

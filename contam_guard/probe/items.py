"""The texts the probe scores, read from golden files, and the labels that say which are members.

Golden files are read by contam-guard's readers (JSONL, JSON, CSV/TSV, Parquet, text; compressed
too), as ``register`` reads them: each ``--field`` (its strings joined by newlines, several
fields in the order given), or without one the usual shapes' text (``text``, chat ``messages``,
``question``, ...). An item's id is its ``--id-field``, else its position in the set ("0", "1",
...). A reader's message never quotes the golden file (its names can be test text).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from contam_guard.core.register.build import without_golden_text
from contam_guard.errors import ContamGuardError, InputError
from contam_guard.io.paths import display_path
from contam_guard.io.readers import ReadOptions, read_records
from contam_guard.io.safe_read import read_regular

MEMBER_WORDS = {"1": True, "member": True, "true": True, "yes": True}
NONMEMBER_WORDS = {"0": False, "non-member": False, "nonmember": False, "false": False, "no": False}
MAX_LABELS_BYTES = 256 * 1024 * 1024


class _LabelsError(ContamGuardError):
    """The labels file is not a regular file, is unreadable or too large."""


@dataclass(frozen=True)
class Item:
    set_name: str
    item_id: str
    index: int
    """0-based position of the item in its set (all of the set's files, in order)."""
    text: str


def read_items(
    files: Sequence[Path], set_name: str, fields: Sequence[str], id_field: str | None
) -> list[Item]:
    """Every item of ``files`` (one set), in order. ``InputError`` (exit 2) names the file and
    line of a record that cannot be read, of a duplicate id, or an empty set."""
    options = ReadOptions(
        fields=tuple(fields), detect_shape=not fields, id_field=id_field, names=False, lines=True
    )
    items: list[Item] = []
    first_seen: dict[str, str] = {}
    for path in files:
        display = display_path(path)
        if not path.is_file():
            raise InputError(display, "no such file" if not path.exists() else "not a file")
        try:
            for record in read_records(path, display, options):
                item_id = record.item_id if id_field else str(len(items))
                assert item_id is not None
                where = f"{display}:{record.line}" if record.line else display
                if item_id in first_seen:
                    raise InputError(
                        display,
                        f"duplicate item id {item_id!r} (first at {first_seen[item_id]})",
                        line=record.line,
                        hint="item ids must be unique within a set; pick another --id-field",
                    )
                first_seen[item_id] = where
                items.append(Item(set_name, item_id, len(items), record.joined()))
        except InputError as exc:
            raise without_golden_text(exc) from None
    if not items:
        raise InputError(", ".join(display_path(p) for p in files), "no items to probe")
    return items


def read_labels(path: Path, items: Sequence[Item]) -> dict[str, bool]:
    """``item_id -> is a member`` from a CSV with the columns ``item_id`` and ``label`` (1, member,
    true, yes / 0, non-member, false, no). Every id must be one of ``items``; an item may be left
    out (it is then not in the evaluation)."""
    display = display_path(path)
    try:
        raw = read_regular(path, what="labels file", limit=MAX_LABELS_BYTES, error=_LabelsError)
    except FileNotFoundError:
        raise InputError(display, "no such file") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(display, f"not UTF-8 (byte offset {exc.start})") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    if reader.fieldnames is None or not {"item_id", "label"} <= set(reader.fieldnames):
        raise InputError(
            display, "a labels file needs a header row with the columns item_id and label", line=1
        )
    known = {item.item_id for item in items}
    labels: dict[str, bool] = {}
    for row in reader:
        line = reader.line_num
        item_id, word = row.get("item_id"), (row.get("label") or "").strip().lower()
        if item_id is None or item_id not in known:
            raise InputError(display, "item_id is not an item of the probed files", line=line)
        if word not in MEMBER_WORDS and word not in NONMEMBER_WORDS:
            raise InputError(display, "label must be 1/member/true/yes or 0/non-member/false/no", line=line)
        if item_id in labels:
            raise InputError(display, f"item {item_id!r} is labelled twice", line=line)
        labels[item_id] = MEMBER_WORDS.get(word, False)
    return labels

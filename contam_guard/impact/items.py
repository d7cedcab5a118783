"""The items CSV a scan wrote (``scan --items-csv``), read back for ``contam-guard impact``.

What impact needs of each test item of one set: its id and test index (to join the scores), for
each rule whether it flagged the item (the ``flag_<rule>`` columns), and the share of its words
in shared runs of 10 or more (``tokens_covered_L10 / words``, Llama 2's measure).

A set registered with several views (question, answer) has one row per item and view. By
default they are combined: an item is flagged when a rule flagged any of its views, and its
Llama 2 share is the covered words of all its views over all their words (the sample as a whole,
as Llama 2 counted it). ``view`` keeps one view only.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

from contam_guard.errors import ContamGuardError, InputError
from contam_guard.io.safe_read import read_regular

FLAG_PREFIX = "flag_"
"""The items CSV's rule columns (``contam_guard.report.tables.RULE_COLUMNS``)."""
REQUIRED = ("set", "item_id", "test_index", "words", "tokens_covered_L10", "view")
ANY = "any"
"""Not a rule: flagged by any rule the scan ran."""
LIMIT = 2 << 30
"""Largest items CSV read (2 GiB; a million items with many views is about 100 MB)."""


@dataclass
class Item:
    """One test item of the chosen set, its views combined."""

    item_id: str
    test_index: int
    line: int
    """The first line of the items CSV that names it."""
    words: int = 0
    covered: int = 0
    flags: dict[str, bool] = field(default_factory=dict)
    """Per rule the scan ran: flagged (``1``) in some view. ``allowed`` and ``0`` are not flags."""

    @property
    def share(self) -> float:
        """Share of the item's words in shared runs of 10+ words (0 for an item of no words)."""
        return self.covered / self.words if self.words else 0.0


@dataclass
class ItemTable:
    """The chosen set's items, in file order, and the rules the scan ran on them."""

    path: Path
    set_name: str
    views: list[str]
    items: list[Item]
    rules: list[str]
    """Rules with a ``flag_`` column that holds a value (the scan ran them)."""
    columns: list[str]
    """Every ``flag_`` rule in the file, run or not."""

    def flagged(self, rule: str) -> list[bool]:
        """Per item, whether ``rule`` (or any rule, for ``any``) flagged it."""
        if rule == ANY:
            return [any(item.flags.values()) for item in self.items]
        return [item.flags.get(rule, False) for item in self.items]

    def check_rule(self, rule: str) -> None:
        """Raise a clear error when the items CSV cannot say what ``rule`` flagged."""
        if rule == ANY:
            if not self.rules:
                raise InputError(str(self.path), "no rule was run in the scan that wrote it")
            return
        if rule not in self.columns:
            have = ", ".join(FLAG_PREFIX + name for name in self.columns) or "no flag_ columns"
            raise InputError(
                str(self.path),
                f"has no {FLAG_PREFIX}{rule} column ({have}): the scan that wrote it did not know "
                f"the rule {rule!r}",
                hint="scan again with a contam-guard that has the rule, with --items-csv",
            )
        if rule not in self.rules:
            raise InputError(
                str(self.path),
                f"the rule {rule!r} was not run in the scan that wrote it ({FLAG_PREFIX}{rule} is empty)",
                hint=f"scan again without --disable {rule} / with --only {rule}",
            )


def read_items(path: Path, set_name: str | None = None, view: str | None = None) -> ItemTable:
    """The items of one set in the items CSV at ``path``.

    ``set_name`` may be left out when the file holds one set; ``view`` keeps one view. Raises
    ``InputError`` (file and line) for a file that is not an items CSV, a bad number, an unknown
    set or view.
    """
    text = _text(path)
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if header is None:
        raise InputError(str(path), "is empty; expected the items CSV of `contam-guard scan --items-csv`")
    missing = [name for name in REQUIRED if name not in header]
    if missing:
        raise InputError(
            str(path),
            f"is not an items CSV: no column {', '.join(missing)}",
            line=1,
            hint="pass the file `contam-guard scan --items-csv FILE` wrote",
        )
    col = {name: k for k, name in enumerate(header)}
    flag_cols = [
        (name[len(FLAG_PREFIX) :], k) for k, name in enumerate(header) if name.startswith(FLAG_PREFIX)
    ]
    rows = []
    for row in reader:
        if not row:
            continue
        if len(row) != len(header):
            raise InputError(
                str(path), f"{len(row)} fields, the header has {len(header)}", line=reader.line_num
            )
        rows.append((reader.line_num, row))
    sets = sorted({row[col["set"]] for _, row in rows})
    chosen = _choose_set(path, sets, set_name)
    rows = [(line, row) for line, row in rows if row[col["set"]] == chosen]
    views = sorted({row[col["view"]] for _, row in rows})
    if view is not None:
        if view not in views:
            raise InputError(str(path), f"set {chosen!r} has no view {view!r} (views: {', '.join(views)})")
        views = [view]
        rows = [(line, row) for line, row in rows if row[col["view"]] == view]
    items: dict[str, Item] = {}
    ran: set[str] = set()
    for line, row in rows:
        item_id = row[col["item_id"]]
        index = _int(path, line, "test_index", row[col["test_index"]])
        item = items.get(item_id)
        if item is None:
            item = items[item_id] = Item(item_id, index, line)
        elif item.test_index != index:
            raise InputError(
                str(path),
                f"item {item_id!r} has test_index {index} here and {item.test_index} on line {item.line}",
                line=line,
            )
        item.words += _int(path, line, "words", row[col["words"]])
        item.covered += _int(path, line, "tokens_covered_L10", row[col["tokens_covered_L10"]])
        for rule, k in flag_cols:
            value = row[k]
            if value == "":
                continue
            if value not in ("0", "1", "allowed"):
                raise InputError(
                    str(path), f"{FLAG_PREFIX}{rule} is {value!r}; expected 1, 0, allowed or empty", line=line
                )
            ran.add(rule)
            item.flags[rule] = item.flags.get(rule, False) or value == "1"
    return ItemTable(
        path=path,
        set_name=chosen,
        views=views,
        items=list(items.values()),
        rules=[rule for rule, _ in flag_cols if rule in ran],
        columns=[rule for rule, _ in flag_cols],
    )


def _text(path: Path) -> str:
    try:
        data = read_regular(path, what="items CSV", limit=LIMIT, error=ContamGuardError)
    except FileNotFoundError:
        raise InputError(
            str(path), "no such file", hint="write it with `contam-guard scan --items-csv`"
        ) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(str(path), "is not UTF-8 text", line=line) from None


def _choose_set(path: Path, sets: list[str], set_name: str | None) -> str:
    if not sets:
        raise InputError(str(path), "lists no test items")
    if set_name is None:
        if len(sets) > 1:
            raise InputError(
                str(path), f"holds several sets ({', '.join(sets)})", hint="choose one with --set NAME"
            )
        return sets[0]
    if set_name not in sets:
        raise InputError(str(path), f"has no set {set_name!r} (sets: {', '.join(sets)})")
    return set_name


def _int(path: Path, line: int, name: str, value: str) -> int:
    try:
        number = int(value) if len(value) <= 18 else -1  # (a longer count is no count of words)
    except ValueError:
        number = -1
    if number < 0:
        shown = repr(value) if len(value) <= 40 else repr(value[:37]) + "..."
        raise InputError(str(path), f"{name} is {shown}, not a count", line=line)
    return number

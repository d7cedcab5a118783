"""The manifest: hashes, counts and digests of registered golden sets, never their text.

In memory a manifest is the same whatever its format: its spec, its key check, and per set a
version, a content digest, the version history, the golden files, the item ids and one *view*
per registered text field (``question``, ``answer``, ...). Per view and item it has the word
count and the alnum-view length, and per view the 5-gram hashes and (for a set registered for
GPT-4's rule) the 50-character window hashes, as sorted packed tables (``packed.py``): all the
engine needs to compute every rule.

On disk (``store.py``) a manifest is a small JSON index and one binary file per set and view.
Arrays are read lazily: a view's data is loaded (memory-mapped, or decrypted) when first used.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field

from contam_guard.core.spec import normalise
from contam_guard.core.spec.hashing import GRAM_N, HASH_SPEC, HASH_SPECS, SIPHASH_SPEC, WINDOW_CHARS
from contam_guard.io.manifest.digests import tables_digest
from contam_guard.io.manifest.packed import PackedTable, width_for
from contam_guard.io.manifest.rule_names import RULE_NAMES
from contam_guard.io.manifest.rule_names import uses_windows as uses_windows  # noqa: PLC0414 (importable from here too)
from contam_guard.io.manifest.templates import TemplateMarks, TemplateSettings

SCHEMA_VERSION = 2
"""The manifest's format: an index and binary files."""
MANIFEST_FORMAT = "contam-guard-manifest"
MAX_COUNT = 2**31 - 1
"""Counts and versions are 32-bit in the arrays; a larger (or negative) one was not written by us."""
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
Version = Annotated[int, Field(ge=1, le=MAX_COUNT)]
IntArray = NDArray[np.int64]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Spec(_Frozen):
    """How text was normalised and hashed. Text is always hashed under the manifest's own spec
    (``text()``): version 1 manifests keep working with version 1 until ``contam-guard
    upgrade``; a spec this contam-guard does not know is an error, never a silent rehash.

    ``hash`` is ``cg-poly64-v1`` for an unkeyed manifest, ``cg-poly64-v1+siphash24`` for a keyed
    one."""

    words: str = normalise.CURRENT.words_name
    alnum: str = normalise.CURRENT.alnum_name
    hash: str = HASH_SPEC
    gram_n: int = GRAM_N
    window_chars: int = WINDOW_CHARS
    unicode: str = normalise.UNICODE_VERSION

    def core(self) -> tuple[str, str, str, int, int]:
        """The parts that must match exactly (the Unicode version only warns)."""
        return (self.words, self.alnum, self.hash, self.gram_n, self.window_chars)

    def known(self) -> bool:
        """Whether this contam-guard can hash text under this spec."""
        return (
            normalise.spec_named(self.words, self.alnum) is not None
            and self.hash in HASH_SPECS
            and (self.gram_n, self.window_chars) == (GRAM_N, WINDOW_CHARS)
        )

    @classmethod
    def current(cls, *, keyed: bool) -> Spec:
        """The spec new manifests get, keyed or not."""
        return cls(hash=SIPHASH_SPEC if keyed else HASH_SPEC)

    def is_current(self, *, keyed: bool) -> bool:
        """Whether new manifests (keyed or not, as this one is) get this spec (else
        ``contam-guard upgrade`` converts it)."""
        return self.core() == Spec.current(keyed=keyed).core()

    def text(self) -> normalise.TextSpec:
        """The normalisation to hash text with, to compare it with this manifest's hashes."""
        spec = normalise.spec_named(self.words, self.alnum)
        if spec is None or not self.known():
            raise ValueError(f"unknown normalisation/hash spec {self.core()}")
        return spec


class GoldenFile(_Frozen):
    """A golden file as registered: its path (relative to the project root, POSIX style, with
    ``..`` when it lies outside the root) and how many items it gave."""

    path: str
    items: Count


class SetVersion(_Frozen):
    version: Version
    digest: str
    items: Count


# --- views ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ViewData:
    """A view's arrays: per item its word count and alnum length, and the packed tables of its
    5-grams (payload: the 5-gram's place among the view's 5-grams in item order) and windows
    (payload: the item). ``windows`` is None for a set not registered for GPT-4's rule."""

    words: IntArray
    alnum: IntArray
    grams: PackedTable
    windows: PackedTable | None
    item_grams: NDArray[np.uint64] | None = None
    """The 5-gram hashes in item order, when known without decoding (just hashed)."""
    item_windows: NDArray[np.uint64] | None = None
    """The window hashes in item order, when known (just hashed)."""
    templates: TemplateMarks = field(default_factory=TemplateMarks.none)
    """The template marks (``io.manifest.templates``; none for a set registered without them)."""
    item_weights: NDArray[np.float64] | None = None
    """A derived ``~words`` view's item weights (``core.reword.weights``), stored at registration so
    that a scan does not decode the feature table for them; None elsewhere, and in a view
    written before they were stored (a scan then computes the same numbers)."""

    @classmethod
    def from_items(
        cls,
        words: IntArray,
        alnum: IntArray,
        grams: NDArray[np.uint64],
        windows: NDArray[np.uint64] | None,
        templates: TemplateMarks | None = None,
    ) -> ViewData:
        """The view of per-item arrays (hashes concatenated in item order): the tables are built."""
        gram_table = PackedTable.build(
            grams, np.arange(grams.size, dtype=np.uint64), width_for(max(grams.size - 1, 0))
        )
        window_table = None
        if windows is not None:
            owner = np.repeat(
                np.arange(words.size, dtype=np.uint64), np.maximum(alnum - (WINDOW_CHARS - 1), 0)
            )
            window_table = PackedTable.build(windows, owner, width_for(max(words.size - 1, 0)))
        marks = templates if templates is not None else TemplateMarks.none()
        return cls(words, alnum, gram_table, window_table, grams, windows, marks)


class View:
    """One text field of a golden set, hashed; its data is read when first used: the counts and
    the 5-gram table (``data``), and the window table (``windows``) only by what reads windows."""

    def __init__(
        self,
        field: str,
        digest: str,
        data: ViewData | Callable[[], ViewData],
        windows: Callable[[], PackedTable] | None = None,
        tables: str | None = None,
        *,
        has_windows: bool | None = None,
    ) -> None:
        """``data``: the view's arrays, or how to read them; ``windows``: how to read its window
        table when that is apart (then ``data``'s own is not read), and ``has_windows`` whether
        it has one (known without reading); ``tables``: the ``tables_digest`` recorded for
        them, when read from a file."""
        self.field = field
        self.digest = digest
        """The content digest (``digests.view_digest``): what the golden text hashes to."""
        self._data = data
        self._windows = windows
        self._tables = tables
        self._has_windows = has_windows

    def __repr__(self) -> str:
        return f"View(field={self.field!r}, digest={self.digest!r})"

    @cached_property
    def data(self) -> ViewData:
        return self._data if isinstance(self._data, ViewData) else self._data()

    @property
    def in_memory(self) -> bool:
        """Whether the view was built in this process (hashed), not read from a file."""
        return isinstance(self._data, ViewData)

    @property
    def word_counts(self) -> IntArray:
        return self.data.words

    @property
    def alnum_counts(self) -> IntArray:
        return self.data.alnum

    @property
    def has_windows(self) -> bool:
        if self._has_windows is not None:
            return self._has_windows
        return self.data.windows is not None

    @property
    def grams(self) -> PackedTable:
        return self.data.grams

    @property
    def templates(self) -> TemplateMarks:
        """The view's template marks (``io.manifest.templates``)."""
        return self.data.templates

    @cached_property
    def windows(self) -> PackedTable | None:
        """The window table (None: the view stores no windows)."""
        if self._windows is not None:
            return self._windows()
        return None if self._has_windows is False else self.data.windows

    @property
    def gram_counts(self) -> IntArray:
        return np.maximum(self.word_counts - (GRAM_N - 1), 0)

    @property
    def window_counts(self) -> IntArray:
        """Windows per item: none for a view stored without windows."""
        if not self.has_windows:
            return np.zeros(self.word_counts.size, dtype=np.int64)
        return np.maximum(self.alnum_counts - (WINDOW_CHARS - 1), 0)

    @property
    def tables_digest(self) -> str:
        """``digests.tables_digest`` of the view: as recorded (read from a file), or computed."""
        return self._tables if self._tables is not None else self.computed_tables_digest()

    def computed_tables_digest(self) -> str:
        """``digests.tables_digest`` computed from the arrays (reads every table)."""
        windows = None
        if self.has_windows:
            data = self.data
            if data.item_windows is not None:
                owner = np.repeat(np.arange(data.words.size), self.window_counts)
                windows = data.item_windows[np.lexsort((data.item_windows, owner))]
            else:
                windows = self.window_hashes
        return tables_digest(self.word_counts, self.alnum_counts, self.gram_hashes, windows)

    @cached_property
    def gram_hashes(self) -> NDArray[np.uint64]:
        """The 5-gram hashes, items concatenated in order, each item's in word order."""
        data = self.data
        if data.item_grams is not None:
            return data.item_grams
        out = np.empty(data.grams.count, dtype=np.uint64)
        out[data.grams.all_payloads.astype(np.int64)] = data.grams.all_hashes
        return out

    @cached_property
    def window_hashes(self) -> NDArray[np.uint64]:
        """The window hashes, items concatenated in order. A manifest keeps which item each window
        belongs to but not its place in the item: each item's are in hash order then (every rule
        counts windows, none needs their places)."""
        if self.data.item_windows is not None:
            return self.data.item_windows
        table = self.windows
        if table is None:
            return np.zeros(0, dtype=np.uint64)
        order = np.argsort(table.all_payloads, kind="stable")
        return table.all_hashes[order]


# --- sets and the manifest -----------------------------------------------------------------


DERIVED_MARK = "~"
"""Marks a derived view (``core.reword.views``): no field name may hold it."""


def is_derived(view_name: str) -> bool:
    """Whether ``view_name`` names a derived view: outside the set's digest and the n-gram
    engine, with a window table only when it holds window hashes."""
    return DERIVED_MARK in view_name


def all_rules() -> tuple[str, ...]:
    """Every rule, sorted: what a set is registered for by default."""
    return RULE_NAMES


@dataclass(frozen=True)
class GoldenSet:
    version: int
    digest: str
    id_field: str | None
    files: list[GoldenFile]
    ids: Sequence[str]
    views: dict[str, View]
    history: list[SetVersion]
    rules: tuple[str, ...] = field(default_factory=all_rules)
    """The rules the set was registered for: window hashes are stored only for a rule that
    reads them (GPT-4's)."""
    templates: TemplateSettings | None = None
    """When an n-gram of the set is template (None: registered before templates were marked;
    nothing is)."""
    stored: Any = field(default=None, compare=False, repr=False)
    """How the set lies on disk (``disk_files.StoredSet``), when it was read from a manifest:
    saving it there again leaves its files untouched."""
    n: int | None = None
    """The GPT-3 rule's N for this set (``register --n``; text written without spaces gets its
    own default, ``core.rules.gpt3.default_n``); None: the rule's setting. Not content: changing it
    keeps the version (and the set's binary files: only the index is written again)."""

    @property
    def items(self) -> int:
        return len(self.ids)

    @property
    def has_windows(self) -> bool:
        return uses_windows(self.rules)

    def test_index(self) -> IntArray:
        """Each item's 0-based position within its own golden file."""
        return np.concatenate(
            [np.arange(f.items, dtype=np.int64) for f in self.files] or [np.zeros(0, np.int64)]
        )

    def model_copy(self, *, update: dict[str, Any]) -> GoldenSet:
        """A copy with ``update`` applied (the pydantic-style name the commands use)."""
        return replace(self, **update)


@dataclass(frozen=True)
class SetSummary:
    """What anyone sees of a set, keyed or not: name-level facts and its files' sizes."""

    version: int
    digest: str
    items: int
    history: list[SetVersion]
    data: dict[str, int]
    """Each binary file (relative to the index's folder) and its size in bytes."""
    views: dict[str, int] | None
    """Bytes per view (None when sealed: a keyed manifest read without its key)."""
    windows: bool | None
    """Whether window hashes are stored (None when sealed)."""


class Manifest:
    """A manifest in memory. ``sets`` of a keyed manifest read without its key are
    sealed: reading them raises the error ``sealed_error`` gives; ``summaries`` stay readable."""

    def __init__(
        self,
        *,
        spec: Spec | None = None,
        key_check: str | None = None,
        sets: dict[str, GoldenSet] | None = None,
        salt: str | None = None,
        schema_version: int = SCHEMA_VERSION,
        digest: str = "",
        path: Path | None = None,
        summaries: dict[str, SetSummary] | None = None,
        sealed_error: Callable[[], Exception] | None = None,
        seal: Any = None,
        unlock: Callable[[Any], Manifest] | None = None,
        disk: Any = None,
    ) -> None:
        self.spec = spec if spec is not None else Spec()
        self.key_check = key_check
        self.salt = salt
        """The HKDF salt of a keyed manifest (hex)."""
        self.schema_version = schema_version
        self.digest = digest
        """The integrity digest of the index, when read."""
        self.path = path
        """The index it was read from (None: built in memory)."""
        self.seal = seal
        """The ``sealing.SealKey`` of a keyed manifest, once unlocked (or new)."""
        self._sets = sets if sets is not None else {}
        self._summaries = summaries
        self._sealed_error = sealed_error
        self._unlock = unlock
        self.disk = disk
        """The files it was read from (``disk.Files``), for ``verify``."""

    def unlock(self, seal: Any) -> Manifest:
        """The manifest with its sealed sets opened with ``seal`` (a ``sealing.SealKey``)."""
        if self._unlock is None:
            return self
        return self._unlock(seal)

    @property
    def sealed(self) -> bool:
        return self._sealed_error is not None

    def explain_sealed(self, error: Callable[[], Exception]) -> None:
        """What reading the sets of this sealed manifest raises (it names the key's variable)."""
        if self._sealed_error is not None:
            self._sealed_error = error

    @property
    def sets(self) -> dict[str, GoldenSet]:
        if self._sealed_error is not None:
            raise self._sealed_error()
        return self._sets

    @property
    def set_names(self) -> list[str]:
        """The registered sets' names, sorted (readable even when sealed)."""
        return sorted(self._summaries if self._summaries is not None else self._sets)

    @property
    def summaries(self) -> dict[str, SetSummary]:
        """What the index shows of each set (sizes are those on disk; 0 for unsaved sets)."""
        if self._summaries is not None:
            return self._summaries
        return {
            name: SetSummary(g.version, g.digest, g.items, g.history, {}, None, g.has_windows)
            for name, g in self._sets.items()
        }

    def model_copy(self, *, update: dict[str, Any]) -> Manifest:
        """A copy with ``update`` applied: ``sets``, ``spec``, ``key_check`` or ``salt``."""
        fields: dict[str, Any] = {
            "spec": self.spec,
            "key_check": self.key_check,
            "sets": self.sets,
            "salt": self.salt,
            "schema_version": self.schema_version,
            "path": self.path,
            "seal": self.seal,
        }
        unknown = set(update) - set(fields)
        if unknown:
            raise TypeError(f"cannot update {sorted(unknown)}")
        fields.update(update)
        return Manifest(**fields)

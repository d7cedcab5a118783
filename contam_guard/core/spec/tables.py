"""Per code point tables for the vectorised path: a class and the code point it contributes.

The compiled kernels (``csrc/native.c``) know nothing of Unicode: they take, per code point, a
class (``normalise.ALNUM`` ... ``SPECIAL``) and the one code point it adds to a word, and hash.
Everything a spec means is in these tables, filled lazily (only for code points actually met:
classifying all 1.1 million code points costs seconds at every start). What one code point
cannot say (a mapping to several code points, a case that depends on the neighbours, NFKC
joining a character to the one before it) is SPECIAL: the record takes the reference path.

Version 1: SPACE for ``str.isspace()``, REMOVED for punctuation and symbols, SPECIAL when the
lowercase is not one code point or is the capital sigma (final or not depends on what follows),
else ALNUM or KEPT with ``str.lower()``; the alnum view is the code point itself when
``str.isalnum()``.

Version 2: U+200B is SPACE; the other format characters and the variation selectors are
REMOVED (step b removes them before anything else, and removing a character inside a word
without splitting it is what REMOVED does, so the two are the same). A code point that NFKC may
join to what precedes it is SPECIAL (``starts_safely``). Every other code point is classified
by what steps c, d and 1 to 3 make of it alone, which is what they make of it inside any text
whose code points all start safely: NFKC of such a text is the NFKC of its code points, one by
one (below), and case folding and lowercasing then work per code point (casefold never leaves a
capital sigma). All whitespace: SPACE. Nothing kept after removing punctuation and symbols:
REMOVED (``…`` is ``...``). Exactly one kept code point, which step e leaves alone in any word
(``_stays_nfc``): ALNUM or KEPT, with it in ``lower``. Anything else (``ß`` is ``ss``, ``ﬁ``
is ``fi``, ``¾`` is ``3⁄4``, ...) is SPECIAL.

Why NFKC works per code point here: NFKC decomposes each code point on its own, reorders only
runs of combining marks (ccc != 0), and composes a character only with the last starter before
it. If each code point's decomposition starts with a starter (ccc 0) that is the second element
of no canonical composition, no run of marks and no composition crosses from one code point to
the next, so NFKC(ab) = NFKC(a) + NFKC(b).

Version 3: version 2's classes, except that a code point classified ALNUM whose character (in
``lower``) is a letter or digit of a script written without spaces (``scripts.is_solo``) is
SOLO: a word on its own. The kernels close the word before it, start a word with it, keep the
KEPT code points after it (its combining marks) in that word, and start the next word at the
next ALNUM or SOLO code point: exactly step f of ``normalise.split_solo``, which decides on the
same character. ALNUM and KEPT must then mean what step f reads (``str.isalnum()`` of that
character); a code point where they would not is SPECIAL (none is known: the tests look).

Version 4: the code points markup starts with (``&``, ``<``, ``[``: ``markup.TRIGGERS``) are
MARKUP; every other code point is classified as in version 3, with step b removing every
default-ignorable code point (REMOVED). The kernels treat MARKUP as REMOVED (they are
punctuation) once the text is rewritten: ``features.py`` rewrites a batch's code points
(``kernel.markup_pass``) before it classifies them, and the scan's prefilter rewrites the strings
it decodes when its tables class ``&`` MARKUP. The rewrite keeps every code point where it was,
so the classes then say all the rest, as in version 3.

The alnum view: ``alnum_char[c]`` is the code point ``c`` gives the alnum view (0: none). From
version 2 on, that may be another code point (fullwidth ``Ａ`` gives ``A``); the kernel that
copies code points unmapped (the prefilter's) takes ``cls_raw_alnum``, in which such code
points are SPECIAL; ``features.py`` maps them. It also stays NFC next to any other such code
point (``_stays_nfc``; else ``c`` is SPECIAL), so the view of a record without a SPECIAL code
point is NFC already: step g of ``alnum-v3`` (version 3) changes only views the reference
path computes (Hangul vowel and trailing consonant jamo, the only letters that can join the
one before them, do not start safely).
"""

from __future__ import annotations

import unicodedata
from functools import cache

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.spec import markup
from contam_guard.core.spec.normalise import (
    ALNUM,
    KEPT,
    MARKUP,
    REMOVED,
    SOLO,
    SPACE,
    SPECIAL,
    UNKNOWN,
    ZERO_WIDTH_SPACE,
    TextSpec,
    is_ignorable,
    is_removed,
)
from contam_guard.core.spec.scripts import is_solo

N_CODEPOINTS = 0x110000
DECOMPOSITIONS_END = 0x30000
"""No code point from here on has a decomposition (checked by the tests)."""
NO_DECOMPOSITIONS = ((0x3400, 0xA000), (0xAC00, 0xD7A4), (0xD800, 0xF900), (0x20000, 0x2F800))
"""CJK unified ideographs, Hangul syllables (decomposed by rule), surrogates and private use:
none has a decomposition in the data (checked by the tests); skipped to save start-up time."""
FIRST_COMBINING = 0x300
"""Below this, every code point has ccc 0 and none is the second element of a composition."""
_HANGUL_SECOND = frozenset(range(0x1161, 0x1176)) | frozenset(range(0x11A8, 0x11C3))
"""Hangul vowel and trailing consonant jamo: composed algorithmically, not from the data."""


@cache
def second_elements() -> frozenset[int]:
    """Code points that are the second element of a canonical composition (a superset: the
    composition exclusions are included, which only makes more code points SPECIAL)."""
    found = set(_HANGUL_SECOND)
    starts = [0, *(end for _, end in NO_DECOMPOSITIONS)]
    stops = [*(start for start, _ in NO_DECOMPOSITIONS), DECOMPOSITIONS_END]
    for cp in (cp for start, stop in zip(starts, stops) for cp in range(start, stop)):
        parts = unicodedata.decomposition(chr(cp)).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            found.add(int(parts[1], 16))
    return frozenset(found)


def starts_safely(ch: str) -> bool:
    """Whether NFKC never joins ``ch`` to what precedes it: its compatibility decomposition
    starts with a starter that is the second element of no canonical composition."""
    first = unicodedata.normalize("NFKD", ch)[0]
    if ord(first) < FIRST_COMBINING:
        return True
    return unicodedata.combining(first) == 0 and ord(first) not in second_elements()


def composes_with_nothing_before(ch: str) -> bool:
    """Whether NFC never joins ``ch`` to what precedes it: its canonical decomposition starts
    with a starter that is the second element of no canonical composition. NFC then splits
    before ``ch``: NFC(a + ch + b) = NFC(a) + NFC(ch + b)."""
    first = unicodedata.normalize("NFD", ch)[0]
    return ord(first) < FIRST_COMBINING or (
        unicodedata.combining(first) == 0 and ord(first) not in second_elements()
    )


def _stays_nfc(ch: str) -> bool:
    """Whether a word (or alnum view) made of such characters is already NFC (step e, or g,
    changes nothing): ``ch`` is NFC and composes with nothing before it."""
    return unicodedata.normalize("NFC", ch) == ch and composes_with_nothing_before(ch)


class CodepointTables:
    """Lazily filled lookup tables indexed by code point, for one spec version."""

    def __init__(self, version: int) -> None:
        if version not in (1, 2, 3, 4):
            raise ValueError(f"no normalisation spec version {version}")
        self.version = version
        self.cls: NDArray[np.uint8] = np.zeros(N_CODEPOINTS, dtype=np.uint8)
        self.lower: NDArray[np.uint32] = np.arange(N_CODEPOINTS, dtype=np.uint32)
        self.is_alnum: NDArray[np.bool_] = np.zeros(N_CODEPOINTS, dtype=np.bool_)
        self.alnum_char: NDArray[np.uint32] = np.zeros(N_CODEPOINTS, dtype=np.uint32)
        self.cls_raw_alnum: NDArray[np.uint8] = (
            self.cls if version == 1 else np.zeros(N_CODEPOINTS, dtype=np.uint8)
        )
        """``cls``, but SPECIAL where the alnum view gets another code point: for a kernel that
        copies alnum code points unmapped. The same array in version 1."""
        self.first_alnum_remap = N_CODEPOINTS
        """The smallest classified code point whose alnum character is another code point: a
        batch below it needs no mapping."""

    def ensure(self, codepoints: NDArray[np.uint32]) -> int:
        """Classify every code point in ``codepoints`` not seen before; returns how many."""
        unseen = codepoints[self.cls[codepoints] == UNKNOWN]
        if unseen.size == 0:
            return 0
        new = set(unseen.tolist())
        classify = self._classify_v1 if self.version == 1 else self._classify_v2
        for cp in sorted(new):
            classify(int(cp))
        return len(new)

    def classify_new(self, codepoints: NDArray[np.uint32]) -> None:
        """Classify the code points not seen before (one gather; rarely any work after it)."""
        if not self.cls[codepoints].all():  # UNKNOWN is 0
            self.ensure(codepoints)

    def _set(self, cp: int, cls: int, lower: str | None = None, alnum: str | None = None) -> None:
        if lower is not None:
            self.lower[cp] = ord(lower)
        if alnum is not None:
            self.is_alnum[cp] = True
            self.alnum_char[cp] = ord(alnum)
        raw = cls
        if alnum is not None and ord(alnum) != cp:
            raw = SPECIAL
            self.first_alnum_remap = min(self.first_alnum_remap, cp)
        self.cls_raw_alnum[cp] = raw
        self.cls[cp] = cls  # last: a code point counts as classified once every table has it

    def _classify_v1(self, cp: int) -> None:
        ch = chr(cp)
        lowered = ch.lower()
        alnum = ch if ch.isalnum() else None
        if ch.isspace():
            self._set(cp, SPACE)
        elif is_removed(ch):
            self._set(cp, REMOVED)
        elif len(lowered) != 1 or cp == 0x03A3:
            # The alnum view keeps the code point itself, so it is exact even here.
            self._set(cp, SPECIAL, alnum=alnum)
        else:
            self._set(cp, ALNUM if alnum else KEPT, lower=lowered, alnum=alnum)

    def _classify_v2(self, cp: int) -> None:
        """Versions 2, 3 and 4."""
        ch = chr(cp)
        if self.version >= 4 and ch in markup.TRIGGERS:
            self._set(cp, MARKUP)
            return
        cls, lower, alnum = _v2_class(ch, self.version)
        if self.version >= 3:
            if lower is not None and (cls == ALNUM) != lower.isalnum():
                cls = SPECIAL  # step f would read the character otherwise than the kernels do
            elif cls == ALNUM and lower is not None and is_solo(lower):
                cls = SOLO
            if cls == SPECIAL:
                lower = alnum = None
        self._set(cp, cls, lower=lower, alnum=alnum)


def _v2_class(ch: str, version: int) -> tuple[int, str | None, str | None]:
    """Version 2's class of ``ch`` (with the code points step b removes in ``version``), the one
    character it adds to a word (ALNUM and KEPT: else None) and the one it adds to the alnum
    view (None: none)."""
    if ch == ZERO_WIDTH_SPACE:
        return SPACE, None, None
    if is_ignorable(ch, version):
        return REMOVED, None, None
    if not starts_safely(ch):
        return SPECIAL, None, None
    compat = unicodedata.normalize("NFKC", ch)
    folded = compat.casefold()
    alnum = [c for c in compat if c.isalnum()]
    if len(alnum) > 1 or (alnum and not _stays_nfc(alnum[0])):
        # The second: step g of alnum-v3 might join it to the character before (none is known:
        # Hangul jamo that compose do not start safely; the tests look).
        return SPECIAL, None, None
    if any(c.isspace() for c in folded):
        return (SPACE if folded.isspace() and not alnum else SPECIAL), None, None
    kept = [c.lower() for c in folded if not is_removed(c)]
    if not kept:
        return (SPECIAL if alnum else REMOVED), None, None
    if len(kept) == 1 and len(kept[0]) == 1 and kept[0] != "\u03a3" and _stays_nfc(kept[0]):
        return (ALNUM if alnum else KEPT), kept[0], (alnum[0] if alnum else None)
    return SPECIAL, None, None


def tables_for(spec: TextSpec) -> CodepointTables:
    """The spec's code point tables: one per process and spec, filled as code points are met."""
    return _tables(spec.version)


@cache
def _tables(version: int) -> CodepointTables:
    return CodepointTables(version)

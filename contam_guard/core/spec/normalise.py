"""Normalisation: the two views of text that the overlap rules compare, in four spec versions.

Spec ``words-v1`` (GPT-3, Brown et al. 2020, Appendix C: "a lowercase, whitespace delimited
word with no punctuation"), in this order:

1. split on whitespace (``str.split()``: the characters for which ``str.isspace()`` is true);
2. remove every Unicode punctuation or symbol character (general category ``P*`` or ``S*``)
   from each word;
3. lowercase the rest (``str.lower()``, which turns a word-final capital sigma into ``ς``);
4. drop words left empty.

Spec ``alnum-v1`` (GPT-4, OpenAI 2023, Appendix C: "remove all spaces and symbols, keeping only
characters (including numbers)"): keep the characters for which ``str.isalnum()`` is true, case
kept.

Spec ``words-v2`` puts four steps before those of ``words-v1``, in this order:

a. every U+200B ZERO WIDTH SPACE becomes a space (U+0020): it marks word boundaries in Thai and
   Khmer, and an invisible space between two words must not glue them into one;
b. every other format character (general category ``Cf``: soft hyphen, ZWNJ, ZWJ, word joiner,
   U+FEFF, the bidi marks and embeddings, tag characters, Arabic number signs, ...) and every
   variation selector (U+180B..U+180D, U+180F, U+FE00..U+FE0F, U+E0100..U+E01EF: Unicode's
   ``Variation_Selector`` property) is removed, without splitting the word it sits in;
c. NFKC (``unicodedata.normalize("NFKC", ...)``): NFD and NFC text become one, and fullwidth
   letters, mathematical alphanumerics, ligatures (``ﬁ`` -> ``fi``), superscripts and other
   compatibility characters become their plain forms (``¾`` -> ``3⁄4``, then ``34`` once the
   fraction slash, a symbol, is removed);
d. case folding (``str.casefold()``): ``ß`` -> ``ss``, ``ς`` -> ``σ``, ``İ`` -> ``i̇``; Cherokee
   lowercase folds to Cherokee uppercase, which step 3 then lowercases again, consistently for
   both cases.

Then steps 1 to 3 as in ``words-v1`` (step 3 no longer changes anything casefold would not have,
except Cherokee, and never sees a capital sigma), then

e. each word is put in NFC (``unicodedata.normalize("NFC", word)``): removing punctuation in
   step 2 can bring a letter and a combining mark together (``z)`` + U+0301), and case folding
   can decompose (``ǰ`` folds to ``j`` + U+030C); with this step, normalised words normalise to
   themselves, and a mark cut from its letter by a punctuation sign still meets it;

and step 4 as in ``words-v1``.

Why b comes before c (the issue listed NFKC first): a format character between a letter and a
combining mark blocks their composition (``e`` ZWJ U+0301 stays decomposed under NFKC), so
removing it afterwards would leave ``é`` spelled two ways. NFKC never produces a format
character, a variation selector or U+200B (checked in ``tests/text``), so removing them first
loses nothing.

Spec ``alnum-v2``: steps a to c, then keep the characters for which ``str.isalnum()`` is true,
case kept. No case folding: GPT-4's report does not mention case and the seed article's listing
keeps it, so the alnum view keeps case in both versions (its numbers reproduce only that way).

Spec ``words-v3`` is ``words-v2`` with one more step, after step 3 and before step e:

f. each word is cut so that every letter or digit of a script written without spaces (Han,
   Hiragana, Katakana, Thai, Lao, Khmer, Myanmar, Tibetan and the other scripts of
   ``core/spec/scripts.py``: ``scripts.is_solo``) is a word on its own, together with the
   characters that are neither letters nor digits right after it (its combining marks: a Thai
   tone mark stays with its consonant); a letter or digit after those starts the next word.
   The letters and digits of other scripts keep forming whitespace words:
   ``"GPT-4在2023年发布"`` gives ``gpt4``, ``在``, ``2023``, ``年``, ``发``, ``布``.

Its alnum view is ``alnum-v3``: ``alnum-v2``, then

g. the view is put in NFC (``unicodedata.normalize("NFC", view)``): removing what is not a
   letter or digit can bring together two letters NFKC kept apart. A Hangul leading consonant
   jamo and a vowel jamo separated by a space, a U+200B (step a) or punctuation stay two code
   points under NFKC and become adjacent once the separator is dropped: U+1100 U+200B U+1161
   gives the two code points U+1100 U+1161 under ``alnum-v2``, whose own view is U+AC00, one
   code point. With this step the view is U+AC00 at once, and the alnum view of an alnum view
   is itself, as step e does for words. Only Hangul vowel and trailing consonant jamo are both
   letters or digits and the second element of a canonical composition (the tests check this
   over every code point), so the step changes nothing else. Text written without spaces needs
   nothing more: GPT-4's rule already works on characters.

``alnum-v2`` stays as it was, not idempotent on such text, because manifests of spec 2 were
hashed with it: changing it would change their hashes without a version to say so (only their
``upgrade`` to the current spec moves them on).

Spec ``words-v4`` / ``alnum-v4`` (version 4) changes two things and adds nothing else:

m. before anything else, HTML and Markdown markup is read as its reader sees it:
   ``core/spec/markup.py`` (``markup.rewrite``) says how, rule by rule. Character references are
   decoded (``&nbsp;``, ``&amp;``, ``&#101;``, ``&#x65;``, from ``html.entities.html5``), HTML
   tags and comments are word boundaries (``<span>``, ``</b>``, ``<br/>``, ``<a href="...">``),
   and a Markdown link (``[text](url)``, ``[text][ref]``) keeps its text with a word boundary on
   each side and loses its URL; an autolink (``<http://...>``) keeps its address as a word of
   its own. The rewrite keeps the text's length, every character where it was: what a reference
   decodes to takes its first places and U+2060 WORD JOINER the rest (removed by step b), and
   what becomes a boundary becomes spaces. So a word's span and an alnum character's offset
   point at the original text (a word ending in a reference ends at its ``&``);
b. (changed) every ``Default_Ignorable_Code_Point`` (Unicode's derived property:
   ``DEFAULT_IGNORABLE``) is removed too, not only the format characters and variation
   selectors of versions 2 and 3, still without splitting the word, and U+200B still a space
   (step a; no other default-ignorable code point is a space). What this adds to version 3:
   U+034F COMBINING GRAPHEME JOINER and U+17B4, U+17B5 (Khmer inherent vowels), marks that
   version 3 kept inside a word; U+115F, U+1160, U+3164 and U+FFA0, the Hangul fillers, letters
   that version 3 kept in both views; and the unassigned code points Unicode reserves for
   future ignorable ones (U+2065, U+FFF0..U+FFF8, U+E0000..U+E0FFF but the tags and selectors).
   Format characters that are not default-ignorable (the Arabic number signs, ...) stay
   removed, as in version 3. NFKC never makes a default-ignorable code point of another one
   (checked in ``tests/text``), so removing them first loses nothing, as for version 2.

Every other step is version 3's, in the same order (a, b, c, d, 1, 2, f, 3, e, 4 for words; a,
b, c, the alnum characters, g for the alnum view), applied to the rewritten text.

A manifest records the spec names it was hashed with (``io.manifest.model.Spec``); text is always
hashed with the manifest's spec, and new manifests use version 4. The functions ``words`` and
``alnum`` below *are* the spec: slow, obvious, used by tests and compared with the vectorised
path (``features.py``, through the code point tables of ``core/spec/tables.py``).

What no normalisation catches (homoglyphs across scripts, rewording, changed numbers):
docs/explanation/rules.md, "What no n-gram rule can catch".
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from contam_guard.core.spec import markup
from contam_guard.core.spec.constants import ALNUM as ALNUM  # noqa: PLC0414 (importable from here too)
from contam_guard.core.spec.constants import KEPT as KEPT  # noqa: PLC0414 (importable from here too)
from contam_guard.core.spec.constants import MARKUP as MARKUP  # noqa: PLC0414 (importable from here too)
from contam_guard.core.spec.constants import REMOVED as REMOVED  # noqa: PLC0414 (importable from here too)
from contam_guard.core.spec.constants import SOLO as SOLO  # noqa: PLC0414 (importable from here too)
from contam_guard.core.spec.constants import SPACE as SPACE  # noqa: PLC0414 (importable from here too)
from contam_guard.core.spec.constants import SPECIAL as SPECIAL  # noqa: PLC0414 (importable from here too)
from contam_guard.core.spec.constants import UNKNOWN as UNKNOWN  # noqa: PLC0414 (importable from here too)
from contam_guard.core.spec.scripts import is_solo

UNICODE_VERSION = unicodedata.unidata_version
ZERO_WIDTH_SPACE = "\u200b"
VARIATION_SELECTORS = ((0x180B, 0x180D), (0x180F, 0x180F), (0xFE00, 0xFE0F), (0xE0100, 0xE01EF))
DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)  # fmt: skip
"""Unicode's ``Default_Ignorable_Code_Point`` (``DerivedCoreProperties.txt``), which Python's
``unicodedata`` does not have. Written out, not asked of a library at run time, so that the
hashes of a spec-4 manifest do not move when a dependency updates its Unicode data: the tests
check it against the ``regex`` module's ``\\p{Default_Ignorable_Code_Point}`` (of Unicode 18.0
there: the same ranges as Unicode 14.0's, the version of Python 3.11's ``unicodedata``)."""


def is_removed(ch: str) -> bool:
    """Whether ``ch`` is punctuation or a symbol (removed from words)."""
    return unicodedata.category(ch)[0] in "PS"


def is_ignorable(ch: str, version: int = 3) -> bool:
    """Whether step b of spec ``version`` (2 and up) removes ``ch``: a format character other
    than U+200B, or a variation selector; from version 4 on, also any other default-ignorable
    code point."""
    if ch == ZERO_WIDTH_SPACE or ch < "\u00ad":  # U+00AD: the first format character
        return False
    cp = ord(ch)
    ranges = DEFAULT_IGNORABLE if version >= 4 else VARIATION_SELECTORS
    return unicodedata.category(ch) == "Cf" or any(lo <= cp <= hi for lo, hi in ranges)


def _v1_words(text: str) -> list[str]:
    cleaned = ("".join(ch for ch in token if not is_removed(ch)).lower() for token in text.split())
    return [word for word in cleaned if word]


def split_solo(chars: str) -> list[str]:
    """Step f on one word's characters (punctuation removed): each letter or digit of a script
    written without spaces starts a word, and a letter or digit after it starts the next one;
    any other character stays in the word it follows."""
    parts: list[str] = []
    current = ""
    solo = False
    for ch in chars:
        if is_solo(ch) or (solo and ch.isalnum()):
            if current:
                parts.append(current)
            current, solo = ch, is_solo(ch)
        else:
            current += ch
    if current:
        parts.append(current)
    return parts


def prepare(text: str, version: int = 3) -> str:
    """Steps a to c of the specs from version 2 on (shared by both views; after step m)."""
    visible = "".join(" " if ch == ZERO_WIDTH_SPACE else ch for ch in text if not is_ignorable(ch, version))
    return unicodedata.normalize("NFKC", visible)


@dataclass(frozen=True)
class TextSpec:
    """One version of the normalisation: its names as a manifest records them and its reference
    functions (its code point tables: ``tables.tables_for``)."""

    version: int
    words_name: str
    alnum_name: str

    def words(self, text: str) -> list[str]:
        """The normalised words of ``text`` under this spec."""
        return self.rewritten_words(self.rewrite(text))

    def alnum(self, text: str) -> str:
        """The alphanumeric-only view of ``text`` under this spec, case kept."""
        source = self.rewrite(text)
        if self.version >= 2:
            source = prepare(source, self.version)
        view = "".join(ch for ch in source if ch.isalnum())
        return unicodedata.normalize("NFC", view) if self.version >= 3 else view  # step g

    def rewrite(self, text: str) -> str:
        """Step m: ``text`` with its markup rewritten (version 4; ``text`` itself before)."""
        return markup.rewrite(text) if self.version >= 4 else text

    def rewritten_words(self, text: str) -> list[str]:
        """The words of a text whose markup is rewritten already (``rewrite``): every step
        after m. (Step m is not idempotent: ``&#91;x](y)`` gives ``[x](y)``, a link.)"""
        if self.version == 1:
            return _v1_words(text)
        words = _v1_words(prepare(text, self.version).casefold())
        if self.version >= 3:
            words = [part for word in words for part in split_solo(word)]
        return [unicodedata.normalize("NFC", word) for word in words]

    @property
    def label(self) -> str:
        return f"{self.words_name}/{self.alnum_name}"


V1 = TextSpec(1, "words-v1", "alnum-v1")
V2 = TextSpec(2, "words-v2", "alnum-v2")
V3 = TextSpec(3, "words-v3", "alnum-v3")
V4 = TextSpec(4, "words-v4", "alnum-v4")
CURRENT = V4
"""The spec of new manifests."""
SPECS = (V1, V2, V3, V4)
WORDS_SPEC = CURRENT.words_name
ALNUM_SPEC = CURRENT.alnum_name


def spec_named(words_name: str, alnum_name: str) -> TextSpec | None:
    """The spec a manifest names, or None when this contam-guard does not know it."""
    for spec in SPECS:
        if (spec.words_name, spec.alnum_name) == (words_name, alnum_name):
            return spec
    return None


def words(text: str, spec: TextSpec = CURRENT) -> list[str]:
    """The normalised words of ``text`` (spec ``words-v4`` unless another is given)."""
    return spec.words(text)


def alnum(text: str, spec: TextSpec = CURRENT) -> str:
    """The alphanumeric-only view of ``text`` (spec ``alnum-v4`` unless another is given)."""
    return spec.alnum(text)

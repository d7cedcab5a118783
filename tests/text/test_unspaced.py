"""Spec words-v3: letters and digits of scripts written without spaces are words on their own.

Truth tables by script, the script list against a second implementation of Unicode's
``Scripts.txt`` (fontTools), and the compiled and numpy kernels against the reference ``words``
and ``located.words`` on random text of Han, kana, Thai, Khmer, Tibetan and Latin with marks,
punctuation and spaces between (and none).
"""

from __future__ import annotations

import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_guard.core.spec import located, normalise, pure_kernels
from contam_guard.core.spec.features import extract_features
from contam_guard.core.spec.hashing import hash_grams, hash_words
from contam_guard.core.spec.normalise import V2, V3
from contam_guard.core.spec.scripts import FIRST_UNSPACED, UNSPACED_SCRIPTS, _unspaced, is_solo
from contam_guard.core.spec.tables import CodepointTables, tables_for

WORDS_V3 = [
    # Chinese: every character a word; punctuation (fullwidth too) removed; Latin and numbers
    # between them keep their whitespace-free words.
    ("下列说法中正确的是", list("下列说法中正确的是")),
    ("GPT-4在2023年发布。", ["gpt4", "在", "2023", "年", "发", "布"]),
    (
        "在孵化室温度为24～26°C的条件下",
        ["在", "孵", "化", "室", "温", "度", "为", "2426c", "的", "条", "件", "下"],
    ),
    ("２０２３年", ["2023", "年"]),  # fullwidth digits: NFKC, then one number
    ("Hello, 世界! 你好world", ["hello", "世", "界", "你", "好", "world"]),
    # Japanese: kana and kanji; the prolonged sound mark ー is Common script, a letter: between
    # two kana it is a word too (the kana around it close it).
    ("コーヒーを飲む", ["コ", "ー", "ヒ", "ー", "を", "飲", "む"]),
    ("ｶﾞｯｺｳ", ["ガ", "ッ", "コ", "ウ"]),  # halfwidth katakana: NFKC composes the voicing mark
    ("㍿", ["株", "式", "会", "社"]),  # one code point, four ideographs
    # Thai, Lao, Khmer, Myanmar, Tibetan: a combining vowel or tone mark stays with its letter.
    ("กินข้าว", ["กิ", "น", "ข้", "า", "ว"]),
    ("ພາສາລາວ", ["ພ", "າ", "ສ", "າ", "ລ", "າ", "ວ"]),
    ("ខ្មែរ", ["ខ្", "មែ", "រ"]),  # U+17C2 is a spacing mark (Mc): it stays too
    ("မြန်မာ", ["မြ", "န်", "မာ"]),
    ("བོད་ཡིག", ["བོ", "ད", "ཡི", "ག"]),  # the tsheg (U+0F0B) is punctuation
    # Other scripts keep whitespace words, Korean (written with spaces) included.
    ("한국어 문장", ["한국어", "문장"]),
    ("Straße café", ["strasse", "café"]),
    ("mixed中ิx", ["mixed", "中ิ", "x"]),  # a mark after a Han letter stays with it
]


@pytest.mark.parametrize(("text", "expected"), WORDS_V3)
def test_words_v3_truth_table(text: str, expected: list[str]) -> None:
    assert normalise.words(text, V3) == expected
    assert normalise.words(text) == expected  # version 3 is the default
    assert [w for w, _, _ in located.words(text, V3)] == expected
    assert extract_features([text], spec=V3).word_counts.tolist() == [len(expected)]


def test_v2_made_one_word_of_a_paragraph() -> None:
    """The blind spot: under words-v2 a Chinese paragraph is one word, so no rule sees it."""
    text = "在本文中我们研究了预训练数据检测问题给定一段文本和对一个黑盒访问"
    assert len(V2.words(text)) == 1
    assert len(V3.words(text)) == len(text)


def test_the_alnum_view_is_unchanged() -> None:
    """GPT-4's view already works on characters: v3's alnum-v3 is alnum-v2 on such text (its
    step g composes only Hangul jamo that NFKC left apart: ``test_normalise``)."""
    assert (V2.alnum_name, V3.alnum_name) == ("alnum-v2", "alnum-v3")
    for text, _ in WORDS_V3:
        assert V3.alnum(text) == V2.alnum(text)


SCRIPT_CODES = {
    "Han": "Hani", "Hiragana": "Hira", "Katakana": "Kana", "Thai": "Thai", "Lao": "Laoo",
    "Khmer": "Khmr", "Myanmar": "Mymr", "Tibetan": "Tibt", "Yi": "Yiii", "Bopomofo": "Bopo",
    "Tangut": "Tang", "Nushu": "Nshu", "Khitan_Small_Script": "Kits", "Tai_Le": "Tale",
    "New_Tai_Lue": "Talu", "Tai_Tham": "Lana", "Tai_Viet": "Tavt", "Ahom": "Ahom",
}  # fmt: skip


def test_the_scripts_are_unicodes_by_a_second_implementation() -> None:
    """Every letter or digit Python's Unicode assigns is a word on its own exactly when
    fontTools' copy of ``Scripts.txt`` (another Unicode version, another implementation) puts it
    in one of the scripts: the list is Unicode's script property, not hand-made ranges."""
    fonttools = pytest.importorskip("fontTools.unicodedata")
    assert set(SCRIPT_CODES) == set(UNSPACED_SCRIPTS)
    wanted = set(SCRIPT_CODES.values())
    differ, counts = [], dict.fromkeys(wanted, 0)
    for cp in range(0x110000):
        ch = chr(cp)
        if not ch.isalnum():
            continue
        script = fonttools.script(ch)
        if is_solo(ch) != (script in wanted):
            differ.append(hex(cp))
        if is_solo(ch):
            counts[script] += 1
    assert differ == []
    # The eight scripts all have letters here; Hangul, Latin and Arabic none.
    assert all(counts[SCRIPT_CODES[s]] > 30 for s in ("Han", "Hiragana", "Katakana", "Thai"))
    assert all(counts[SCRIPT_CODES[s]] > 30 for s in ("Lao", "Khmer", "Myanmar", "Tibetan"))
    assert not any(is_solo(ch) for ch in "한국어abcΩЖ١٢٣")


def test_no_character_before_the_first_unspaced_block_is_of_those_scripts() -> None:
    """``is_solo`` answers without ``regex`` below ``FIRST_UNSPACED``: the script class itself
    must hold no letter or digit there (it holds two Bopomofo tone marks, U+02EA and U+02EB,
    which are neither)."""
    below = [chr(cp) for cp in range(ord(FIRST_UNSPACED)) if _unspaced().match(chr(cp))]
    assert below == ["\u02ea", "\u02eb"]
    assert not any(ch.isalnum() for ch in below)
    assert _unspaced().match(FIRST_UNSPACED.replace("\u0e00", "\u0e01"))  # Thai ko kai: the first letter


def test_marks_and_unassigned_code_points_are_never_words_of_their_own() -> None:
    assert not is_solo("\u0e48")  # Thai tone mark (Mn)
    assert not is_solo("\u17d2")  # Khmer coeng (Mn)
    assert not is_solo("\u3099")  # combining voicing mark (Inherited)
    unassigned = [cp for cp in range(0x31350, 0x323B0) if unicodedata.category(chr(cp)) == "Cn"]
    if unassigned:  # CJK Extension H: Unicode 15; Python 3.11 knows Unicode 14 only
        assert not any(is_solo(chr(cp)) for cp in unassigned)


def test_v3_tables_differ_from_v2_only_by_the_solo_class() -> None:
    v2, v3 = CodepointTables(2), CodepointTables(3)
    everything = np.array([cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000], dtype=np.uint32)
    v2.ensure(everything)
    v3.ensure(everything)
    changed = np.flatnonzero(v2.cls != v3.cls)
    assert changed.size > 90_000
    assert set(v2.cls[changed].tolist()) == {normalise.ALNUM}
    assert set(v3.cls[changed].tolist()) == {normalise.SOLO}
    assert np.array_equal(v2.lower, v3.lower) and np.array_equal(v2.alnum_char, v3.alnum_char)


# ------------------------------------------------------------------------------------------
# The kernels against the reference on text of unspaced scripts

UNITS = [
    *"中文数学题下列说法正确的是々〆ーコーヒーをひらがなカタカナ",
    *"กินข้าวภาษาไทยພາສາລາວខ្មែរမြန်မာབོད་ཡིག",
    "\u0e48", "\u0e34", "\u17d2", "\u0f72", "\u3099", "\u0301",  # marks: after a letter, or alone
    "abc", "Xyz", "2023", "１２", "ｶﾞ", "㍿", "한국어", "ß", "İ", "ΣΟΦΙΑ",
    " ", "  ", "\t", "\n", "\u3000", "\u200b", "，", "。", "、", "-", "'", "(", ")", "…", "",
]  # fmt: skip
unspaced_texts = st.lists(st.sampled_from(UNITS), max_size=60).map("".join)


def _grams(text: str) -> np.ndarray:
    words = V3.words(text)
    chars = np.frombuffer("".join(words).encode("utf-32-le"), dtype="<u4").astype(np.uint32)
    return hash_grams(hash_words(chars, np.array([len(w) for w in words], dtype=np.int64)))


@settings(max_examples=400, deadline=None)
@given(st.lists(unspaced_texts, min_size=1, max_size=6))
def test_vectorised_words_equal_the_reference(texts: list[str]) -> None:
    features = extract_features(texts, spec=V3)
    for record, text in enumerate(texts):
        found = located.words(text, V3)
        assert [w for w, _, _ in found] == V3.words(text)
        lo, hi = features.record_words[record], features.record_words[record + 1]
        assert hi - lo == len(found)
        assert features.word_start[lo:hi].tolist() == [s for _, s, _ in found]
        assert features.word_end[lo:hi].tolist() == [e for _, _, e in found]
        grams = features.gram_hash[lo:hi][features.gram_valid[lo:hi]]
        assert np.array_equal(grams, _grams(text))


@settings(max_examples=300, deadline=None)
@given(st.lists(unspaced_texts, min_size=0, max_size=8))
def test_numpy_kernels_equal_compiled_on_unspaced_text(texts: list[str]) -> None:
    compiled = pytest.importorskip("contam_guard._native")
    tables = tables_for(V3)
    starts = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) + 1 for t in texts], out=starts[1:])
    cps = np.frombuffer("".join(t + "\n" for t in texts).encode("utf-32-le"), dtype=np.uint32).copy()
    tables.classify_new(cps)
    capacity = compiled.count_tokens(cps, tables.cls)
    assert pure_kernels.count_tokens(cps, tables.cls) == capacity
    outputs = []
    for mod in (compiled, pure_kernels):
        out = [np.full(capacity, 7, dtype=t) for t in (np.int64, np.int64, np.int64, np.uint64)]
        flagged = np.zeros(len(texts), dtype=np.bool_)
        count = mod.words_pass(cps, tables.cls, tables.lower, starts, *out, flagged)
        # Past ``count`` the compiled kernel may leave the words of a record it then flagged.
        outputs.append((count, [o[:count].tolist() for o in out], flagged.tolist()))
    assert outputs[0] == outputs[1]
    # count_tokens bounds the words: every record's words fit (the flagged ones make none here).
    assert outputs[0][0] <= capacity


@settings(max_examples=200, deadline=None)
@given(unspaced_texts)
def test_v3_is_blind_to_normalisation_forms_and_invisible_characters(text: str) -> None:
    words = V3.words(text)
    for form in ("NFC", "NFD", "NFKC", "NFKD"):
        assert V3.words(unicodedata.normalize(form, text)) == words
    assert V3.words(text.replace("文", "文\u200d")) == words
    assert V3.words(" ".join(words)) == words  # idempotent

"""The second reading of glued words (``core.spec.glued``): what it splits, what it leaves alone,
its offsets, and that the cheap byte test flags every text the exact reading would read again,
in UTF-8 and in JSON Lines with or without escapes."""

from __future__ import annotations

import base64
import hashlib
import json
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_guard.core.spec import glued
from contam_guard.core.spec.normalise import words

QUESTION = (
    "Janet’s ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes "
    "muffins for her friends every day with four. She sells the remainder at the farmers' market "
    "daily for $2 per fresh duck egg. How much in dollars does she make every day?"
)


def camel(text: str) -> str:
    parts = text.split()
    return parts[0] + "".join(w[:1].upper() + w[1:] for w in parts[1:])


def test_a_camel_case_copy_reads_as_the_item() -> None:
    reading = glued.derived(camel(QUESTION))
    assert reading is not None
    assert words(reading.text) == words(QUESTION)


def test_u180e_for_every_space_reads_as_the_item() -> None:
    reading = glued.derived("\u180e".join(QUESTION.split()))
    assert reading is not None
    assert words(reading.text) == words(QUESTION)


def test_only_glued_tokens_are_split() -> None:
    text = "An iPhone and McDonald's at 5pm. " + camel(QUESTION) + " then getElementById(x) GPT-4"
    reading = glued.derived(text)
    assert reading is not None
    assert reading.text.startswith("An iPhone and McDonald's at 5pm. Janet’s Ducks Lay 16 Eggs")
    assert reading.text.endswith(" then getElementById(x) GPT-4")


def test_what_is_not_glued_words_is_read_once() -> None:
    blob = base64.b64encode(hashlib.sha512(b"seed").digest() * 16).decode()
    for text in (
        QUESTION,
        blob,
        hashlib.sha256(b"x").hexdigest() * 4,
        "getElementsByTagName XMLHttpRequest AbstractBeanFactoryPostProcessor",
        "COVID19 A4 B2B x86_64 iOS17 macOS14 IPv6 UTF8 Win32 Py3k",
        "\u180e".join(["a", "b"]),
    ):
        assert glued.derived(text) is None, text


def test_offsets_map_back() -> None:
    text = "Intro: " + camel(QUESTION) + " end"
    reading = glued.derived(text)
    assert reading is not None
    for at, ch in enumerate(reading.text):
        back = reading.original(at)
        assert reading.shifted(back) == at or ch == " "
        if ch != " " or text[back] == " ":
            assert text[back] == ch
    offsets = np.arange(len(reading.text) + 1, dtype=np.int64)
    assert reading.originals(offsets).tolist() == [reading.original(int(k)) for k in offsets]
    assert reading.original(len(reading.text)) == len(text)


PIECES = (
    "the", "Ducks", "lay", "16", "EGGS", "A", "I", "é", "Élan", "$", "’", ".", ",", "'", '"', "\\",
    "/", "-", "\u180e", "\u200b", "\x1f", "\xa0", "\u2028", "x", "Q", "0", "😀", "\n", " ",
)  # fmt: skip


def _texts(rng: random.Random, count: int) -> list[str]:
    out = []
    for _ in range(count):
        base = camel(QUESTION) if rng.random() < 0.5 else ""
        pieces = [rng.choice(PIECES) for _ in range(rng.randint(5, 60))]
        at = rng.randint(0, len(base))
        out.append(base[:at] + "".join(pieces) + base[at:])
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=2**32))
def test_the_byte_test_flags_every_text_read_again(seed: int) -> None:
    texts = _texts(random.Random(seed), 40)
    again = [bool(glued.joins(t)) for t in texts]
    assert any(again)
    flagged = glued.may_hold(texts)
    assert all(flagged[k] for k, a in enumerate(again) if a)
    for ensure_ascii in (True, False):
        lines = [json.dumps({"text": t}, ensure_ascii=ensure_ascii) for t in texts]
        block = "\n".join(lines).encode("utf-8", "surrogatepass")
        ends = np.cumsum([len(line.encode("utf-8", "surrogatepass")) + 1 for line in lines])
        hit = set(np.searchsorted(ends, glued.candidates(block), side="right").tolist())
        assert all(k in hit for k, a in enumerate(again) if a), ensure_ascii


def test_every_capital_escaped_is_flagged() -> None:
    escaped = "".join(f"\\u{ord(c):04x}" if c.isupper() or not c.isascii() else c for c in camel(QUESTION))
    assert glued.candidates(('{"text": "' + escaped + '"}').encode()).size


def test_prose_is_not_flagged() -> None:
    assert not glued.may_hold([QUESTION, "Ein Beispiel für Text, the iPhone 15 and GPT-4o."]).any()

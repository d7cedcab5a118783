"""Fixtures for the scrub tests: a tmp project with a registered golden set, and CLI runners.

Every test runs in its own tmp folder (the current folder is changed to it) with
``CONTAM_GUARD_KEY`` unset. The golden text is original (not from any benchmark); each
question is long enough (40+ words) to leak a 13-gram from anywhere in it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import Runner, write_jsonl

GOLDEN = [
    {
        "id": "q-amber",
        "question": "The lighthouse keeper at Orrin Point trimmed forty copper wicks every evening, and "
        "her apprentice polished nine brass lenses for each wick before the fog rolled across the "
        "harbour wall; when the autumn storms arrived the keeper doubled the wicks and halved the "
        "lenses. How many lenses did the apprentice polish on a stormy evening?",
    },
    {
        "id": "q-birch",
        "question": "A clockmaker in Tessaly Row assembled thirty-six pendulum clocks in March, gave a "
        "quarter of them to the guild museum, sold eleven to travelling merchants from the salt "
        "coast, and stored the remainder in a cedar cabinet lined with green felt. How many clocks "
        "went into the cedar cabinet that spring?",
    },
]

FILLER = (
    "Field notes from the allotment society: the compost heap needs turning before winter, the "
    "rhubarb crowns were divided in October, and volunteers repaired the rainwater butts by the "
    "gate. Seed potatoes are chitting on the windowsill of the shed and the onion sets arrive soon."
)
"""About 270 characters that share no run of five words with the golden questions."""


class Kit:
    """Helpers the tests share (conftest modules cannot be imported by tests)."""

    golden = GOLDEN
    filler = FILLER
    write_jsonl = staticmethod(write_jsonl)

    @staticmethod
    def phrase(index: int, start: int, count: int) -> str:
        """``count`` whitespace-separated words of golden question ``index`` from word ``start``."""
        return " ".join(str(GOLDEN[index]["question"]).split()[start : start + count])

    @classmethod
    def leaky(cls, index: int, start: int, count: int, before: str = FILLER, after: str = FILLER) -> str:
        """Training text holding ``phrase(index, start, count)`` between fillers."""
        return f"{before} {cls.phrase(index, start, count)} {after}"


@pytest.fixture
def kit() -> Kit:
    return Kit()


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)


@pytest.fixture
def project(tmp_path: Path, cli: Runner) -> Path:
    """``init`` done and the two golden questions registered as set ``gold``, view ``question``."""
    assert cli("init").code == 0
    write_jsonl(tmp_path / "golden" / "gold.jsonl", GOLDEN)
    result = cli("register", "gold", "golden/gold.jsonl", "--field", "question", "--id-field", "id")
    assert result.code == 0, result.output
    return tmp_path

"""No golden text in the guard folder: only hashes, counts, ids, names and the tool's own words.

For every golden item, every normalised word of 4+ characters must not occur (case-insensitive)
in any file under ``.contam-guard/``. Two allowances, both independent of the golden text:

- the tool's own vocabulary: the manifest schema's keys, the spec strings, the default config's
  comments, and what the user typed (set name, field names, file path, item ids). A golden word
  that is also one of these ("question", "every", an id "1000") cannot be told apart from it.
- the binary files' arrays are random-looking bytes, so a short word appears in them by chance
  (a given 4-letter word about once per 4 GB of random bytes, but tables are not random
  everywhere). Instead each file is checked to hold nothing but its JSON header, its arrays at
  exactly the sizes its counts imply and zero padding, which leaves no room for anything else;
  the arrays are then cut out before the 4+ search, and words of 8+ characters are also searched
  in the full raw files. The ids are checked to be exactly the registered ids.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from contam_guard.cli import main
from contam_guard.cli.commands.init import GITATTRIBUTES, GITIGNORE
from contam_guard.core.config import DEFAULT_CONFIG_TEXT
from contam_guard.core.spec.hashing import GRAM_N
from contam_guard.core.spec.normalise import words
from contam_guard.io.manifest import binfile
from contam_guard.io.manifest.disk_arrays import ITEM_WEIGHTS
from contam_guard.io.manifest.ids import Ids
from contam_guard.io.manifest.model import GoldenFile, SetVersion, Spec
from contam_guard.io.manifest.names import stem_of
from contam_guard.io.manifest.packed import Shape
from contam_guard.io.manifest.schema import DataFile, Index, Seal, SetEntry, SetMeta, ViewEntry
from tests.helpers import set_file, write_jsonl

GSM8K_TEST = Path(__file__).resolve().parents[2].parent / "shared/data/gsm8k/test.jsonl"
HEX32 = re.compile(r"[0-9a-f]{32}")
GOLDEN = [
    {
        "id": "n1",
        "question": "Bartholomew the clockmaker repaired seventeen pendulums while his apprentice "
        "Wilhelmina varnished eleven walnut cabinets. How many pieces were finished?",
        "answer": "Seventeen pendulums plus eleven cabinets makes twenty-eight finished pieces. #### 28",
    },
    {
        "id": "n2",
        "question": "A zookeeper in Quixborough feeds marmalade sandwiches to fourteen capybaras "
        "and butterscotch biscuits to nine tortoises. How many animals eat treats?",
        "answer": "Fourteen capybaras and nine tortoises are twenty-three hungry animals. #### 23",
    },
    {
        "id": "n3",
        "question": "The Thistlewick orchestra tuned thirty violoncellos, then a thunderclap "
        "snapped strings on eight. How many violoncellos remained perfectly tuned?",
        "answer": "Thirty violoncellos minus eight snapped leaves twenty-two tuned instruments. #### 22",
    },
]


def cli(cwd: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> None:
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    with pytest.raises(SystemExit) as info:
        main(list(args))
    assert info.value.code in (0, None), args


def strip_payloads(data: dict[str, Any]) -> dict[str, Any]:
    """The index ``data`` with each digest replaced by a placeholder (each checked to be one), and
    each set file named by its stem (its name holds the digest of its bytes)."""
    out: dict[str, Any] = json.loads(json.dumps(data))
    assert HEX32.fullmatch(out["digest"])
    out["digest"] = "<digest>"
    for golden in out["sets"].values():
        for record in (golden, *golden["history"]):
            assert HEX32.fullmatch(record["digest"])
            record["digest"] = "<digest>"
        assert HEX32.fullmatch(golden["ids_digest"])
        golden["ids_digest"] = "<digest>"
        for file in golden["data"].values():
            assert HEX32.fullmatch(file["digest"])
            file.update(digest="<digest>", bytes=0)
        golden["data"] = {stem_of(rel): file for rel, file in golden["data"].items()}
        golden["ids"] = stem_of(golden["ids"])
        for view in golden["views"].values():
            assert HEX32.fullmatch(view["digest"]) and HEX32.fullmatch(view["tables"])
            view.update(digest="<digest>", tables="<digest>", file=stem_of(view["file"]))
            view.update(windows=view["windows"] and stem_of(view["windows"]))
    return out


def strip_binary(path: Path, ids: list[str] | None) -> str:
    """A binary file's header (JSON), after checking that the file holds nothing else but its
    arrays, at exactly the sizes its counts imply, and zeros (``ids``: what the ids file must hold)."""
    data = path.read_bytes()
    header = binfile.header_of(data, path.name)
    arrays = binfile.arrays_of(data, header, path.name)
    covered = np.zeros(len(data), dtype=np.bool_)
    covered[: 16 + int.from_bytes(data[8:12], "little")] = True
    for spec in header["arrays"].values():
        start = spec["offset"]
        covered[start : start + spec["length"] * np.dtype(spec["dtype"]).itemsize] = True
    gaps = np.frombuffer(data, np.uint8)[~covered]
    assert set(gaps.tolist()) <= {0, 0x20}, path  # padding: spaces after the header, then zeros
    items = header["items"]
    if header["kind"] == "ids":
        assert ids is not None and list(Ids(arrays["offsets"], arrays["bytes"])) == ids
    for name in ("grams", "windows"):
        if header.get(name) is not None:
            shape = Shape(**{k: header[name][k] for k in ("count", "bucket_bits", "payload_bits")})
            for part, size in shape.sizes().items():
                assert arrays[f"{name}.{part}"].size == size, (path, name, part)
    if header["kind"] == "view":
        words_ = arrays["words"].astype(np.int64)
        assert words_.size == arrays["alnum"].size == items
        assert header["grams"]["count"] == int(np.maximum(words_ - (GRAM_N - 1), 0).sum())
    # Numbers in the header are sizes and offsets (checked above), whatever the text; the set's
    # record (in the ids file) repeats the index's digests.
    text = re.sub(r"\b[0-9a-f]{32}\b", "<digest>", json.dumps(header, sort_keys=True))
    return re.sub(r"\d+", "<n>", text)


def without_ids(path: Path) -> bytes:
    """A file's bytes, an ids file's ids left out (they are checked to be the registered ids;
    run together they can spell any number)."""
    data = path.read_bytes()
    if stem_of(path.name) != "_ids.bin":
        return data
    spec = binfile.header_of(data, path.name)["arrays"]["bytes"]
    return data[: spec["offset"]] + data[spec["offset"] + spec["length"] :]


def tool_vocabulary(typed: list[str], ids: list[str]) -> str:
    """Everything the tool writes whatever the golden text: schema keys, spec strings, the default
    config, and what the user typed. A golden word inside it ("item" in "items") is not checked."""
    models = (Index, SetEntry, SetMeta, ViewEntry, DataFile, Seal, Spec, GoldenFile, SetVersion)
    fixed = [
        *(key for model in models for key in model.model_fields),
        *map(str, Spec().model_dump().values()),
        "contam-guard-manifest",
        "view windows ids offsets bytes units groups remainders payloads count bucket_bits payload_bits "
        "kind items digest arrays dtype length offset alnum words grams",
        "set name spec version history id_field files rules templates views field tables",
        ITEM_WEIGHTS,
        DEFAULT_CONFIG_TEXT,
        GITATTRIBUTES,
        GITIGNORE,
    ]
    return "\n".join([*fixed, *typed, *ids]).lower()


def folder_texts(guard: Path, *, stripped: bool, ids: list[str] | None = None) -> dict[str, str]:
    texts = {}
    for path in sorted(guard.rglob("*")):
        if not path.is_file():
            continue
        if path.suffix == ".bin":
            text = strip_binary(path, ids) if stripped else path.read_bytes().decode("latin-1")
        else:
            text = path.read_text(encoding="utf-8")
            if stripped and path.name == "manifest.json":
                text = json.dumps(strip_payloads(json.loads(text)), sort_keys=True, indent=2)
        texts[path.relative_to(guard).as_posix()] = text.lower()
    return texts


def checked_words(items: list[dict[str, str]], vocabulary: str) -> set[str]:
    golden_words = {w for item in items for text in item.values() for w in words(text) if len(w) >= 4}
    return {w for w in golden_words if w not in vocabulary}


def long_words_in(data: bytes, candidates: list[str]) -> set[str]:
    """Which ``candidates`` (8+ bytes in UTF-8) occur in ``data``: every 8-byte window of the data
    as one uint64, matched against the words' first 8 bytes, then confirmed (fast on megabytes)."""
    encoded = {w: w.encode("utf-8") for w in candidates}
    if len(data) < 8 or not encoded:
        return set()
    packed = np.empty(len(data) - 7, np.uint64)
    for offset in range(8):  # windows starting at offset, offset + 8, ... read as little-endian words
        column = np.frombuffer(data, "<u8", count=(len(data) - offset) // 8, offset=offset)
        packed[offset::8] = column[: len(packed[offset::8])]
    prefixes = {int.from_bytes(e[:8], "little"): w for w, e in encoded.items()}
    table = np.sort(np.fromiter(prefixes, np.uint64))
    slot = np.minimum(np.searchsorted(table, packed), table.size - 1)
    hits = np.flatnonzero(table[slot] == packed)
    found = set()
    for start in hits.tolist():
        for word, raw in encoded.items():
            if data.startswith(raw, start):
                found.add(word)
    return found


def leaked_words(
    guard: Path, items: list[dict[str, str]], vocabulary: str, ids: list[str] | None = None
) -> tuple[list[str], int]:
    """Golden words (4+ chars, outside the vocabulary) in the guard folder, and how many were checked."""
    checked = sorted(checked_words(items, vocabulary))
    stripped = folder_texts(guard, stripped=True, ids=ids)
    found = {w for w in checked if any(w in t for t in stripped.values())}
    long_words = [w for w in checked if len(w.encode("utf-8")) >= 8]
    for path in sorted(guard.rglob("*")):
        if path.is_file():
            found |= long_words_in(without_ids(path).lower(), long_words)
    return sorted(found), len(checked)


def test_no_golden_word_in_the_guard_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_jsonl(tmp_path / "golden" / "tq.jsonl", GOLDEN)
    cli(tmp_path, monkeypatch, "init")
    cli(
        tmp_path,
        monkeypatch,
        "register",
        "tq",
        "golden/tq.jsonl",
        "--field",
        "question",
        "--field",
        "answer",
        "--id-field",
        "id",
    )
    vocabulary = tool_vocabulary(["tq", "question", "answer", "golden/tq.jsonl"], [g["id"] for g in GOLDEN])
    found, checked = leaked_words(tmp_path / ".contam-guard", GOLDEN, vocabulary, [g["id"] for g in GOLDEN])
    assert any(p.suffix == ".bin" for p in (tmp_path / ".contam-guard").rglob("*"))  # they were read
    assert found == []
    assert checked >= 40
    distinctive = {"bartholomew", "wilhelmina", "quixborough", "violoncellos", "capybaras", "pendulums"}
    assert distinctive <= checked_words(GOLDEN, vocabulary)


def test_the_check_catches_text_in_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same check fails when golden text is present (here: a stray copy in the folder)."""
    write_jsonl(tmp_path / "golden" / "tq.jsonl", GOLDEN)
    cli(tmp_path, monkeypatch, "init")
    write_jsonl(tmp_path / ".contam-guard" / "notes.jsonl", GOLDEN[1:2])
    found, _ = leaked_words(tmp_path / ".contam-guard", GOLDEN, tool_vocabulary([], []))
    assert "quixborough" in found and "bartholomew" not in found
    assert long_words_in(b"xx" + base64.b64encode(b"x") + b"QUIXBOROUGH".lower() + b"y", ["quixborough"])


def test_only_hashes_depend_on_the_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Registering other text of the same shape changes nothing but arrays and digests."""
    manifests = []
    for label, rows in (
        ("real", GOLDEN),
        ("decoy", [{k: f"zq{n} {k} xv" for k in g} | {"id": g["id"]} for n, g in enumerate(GOLDEN)]),
    ):
        root = tmp_path / label
        write_jsonl(root / "golden" / "tq.jsonl", rows)
        cli(root, monkeypatch, "init")
        cli(root, monkeypatch, "register", "tq", "golden/tq.jsonl", "--field", "question", "--id-field", "id")
        manifests.append(json.loads((root / ".contam-guard/manifest.json").read_text()))
        strip_binary(set_file(root / ".contam-guard/sets/tq", "question.bin"), None)
    assert strip_payloads(manifests[0]) == strip_payloads(manifests[1])
    assert manifests[0] != manifests[1]


@pytest.mark.gsm8k
@pytest.mark.skipif(not GSM8K_TEST.is_file(), reason=f"GSM8K test set not found at {GSM8K_TEST}")
def test_no_gsm8k_word_in_the_guard_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = [json.loads(line) for line in GSM8K_TEST.read_text(encoding="utf-8").splitlines() if line.strip()]
    cli(tmp_path, monkeypatch, "init")
    cli(
        tmp_path,
        monkeypatch,
        "register",
        "gsm8k",
        str(GSM8K_TEST),
        "--field",
        "question",
        "--field",
        "answer",
    )
    manifest = tmp_path / ".contam-guard" / "manifest.json"
    vocabulary = tool_vocabulary(
        # what was typed: the golden file's path, which the manifest records from the project root
        ["gsm8k", "question", "answer", str(GSM8K_TEST)],
        [str(i) for i in range(len(items))],
    )
    ids = [str(i) for i in range(len(items))]
    found, checked = leaked_words(tmp_path / ".contam-guard", items, vocabulary, ids)
    size = sum(p.stat().st_size for p in manifest.parent.rglob("*") if p.is_file())
    print(
        f"\nGSM8K test ({len(items)} items, views question+answer): the guard folder is {size:,} bytes; "
        f"{checked} distinct golden words of 4+ characters checked"
    )
    assert found == []
    assert checked > 5000
    assert 0 < size < 20_000_000

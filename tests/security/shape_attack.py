"""The length-and-repetition attack on a keyed manifest, as someone without the key runs it.

The attacker holds candidate texts (a leaked draft, the public benchmark a private one was made
from) and the committed manifest folder, and reads whatever the folder shows in the clear: per
item, the word count, the alnum-character count, the order in which its keyed 5-gram hashes
repeat and how often its window hashes repeat. Keying hides what a hash is, not whether two are
equal, so these "shapes" can be computed from each candidate with the public spec and compared.
An item is confirmed when exactly one candidate has its shape.

The attacker reads the index, and each binary file whose header it can read (an unkeyed
manifest's, with the public code); a sealed file shows it nothing.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from contam_guard.core.spec.features import extract_features
from contam_guard.core.spec.hashing import GRAM_N, WINDOW_CHARS
from contam_guard.io.manifest import binfile
from contam_guard.io.manifest.packed import PackedTable, Shape

Signature = tuple[int, int, tuple[int, ...], tuple[int, ...]]


def signature(words: int, alnum: int, grams: Sequence[int], windows: Sequence[int]) -> Signature:
    """The shape: counts, the repetition pattern of the 5-grams in order (each as the place of its
    first occurrence), and the multiplicities of the windows (their order is not needed)."""
    first: dict[int, int] = {}
    pattern = tuple(first.setdefault(h, i) for i, h in enumerate(grams))
    return int(words), int(alnum), pattern, tuple(sorted(Counter(windows).values()))


def candidate_signatures(texts: list[str]) -> list[Signature]:
    """Each candidate's shape, from its unkeyed hashes (equal exactly where the keyed ones are)."""
    features = extract_features(texts, windows=True)
    out = []
    for r in range(len(texts)):
        w0, w1 = int(features.record_words[r]), int(features.record_words[r + 1])
        c0, c1 = int(features.record_chars[r]), int(features.record_chars[r + 1])
        grams = features.gram_hash[w0:w1][features.gram_valid[w0:w1]].tolist()
        windows = features.window_hash[c0:c1][features.window_valid[c0:c1]].tolist()
        out.append(signature(w1 - w0, c1 - c0, grams, windows))
    return out


def item_signatures(index: Path) -> list[Signature]:
    """The shape of every item whose numbers the folder shows in the clear (first view of each set)."""
    raw = json.loads(index.read_text())
    out: list[Signature] = []
    for golden in raw["sets"].values():
        views = golden.get("views")
        if not views:  # sealed: the attacker does not know which file is which view, nor can read one
            continue
        view = next(iter(views.values()))
        main = _readable(index.parent / view["file"])
        win = _readable(index.parent / view["windows"]) if view.get("windows") else None
        if main is None:
            continue
        header, arrays = main
        words, alnum = arrays["words"].astype(np.int64), arrays["alnum"].astype(np.int64)
        table = _table(header, arrays, "grams")
        gram_hashes = np.empty(table.count, np.uint64)
        gram_hashes[table.all_payloads.astype(np.int64)] = table.all_hashes
        owners = None
        windows = np.zeros(0, np.uint64)
        if win is not None:
            wt = _table(win[0], win[1], "windows")
            order = np.argsort(wt.all_payloads, kind="stable")
            windows, owners = wt.all_hashes[order], wt.all_payloads[order].astype(np.int64)
        out += _per_item(words, alnum, gram_hashes, windows, owners)
    return out


def _readable(path: Path) -> tuple[dict[str, Any], dict[str, Any]] | None:
    data = path.read_bytes()
    try:
        header = binfile.header_of(data, path.name)
    except Exception:  # sealed: not a container the attacker can read
        return None
    return header, binfile.arrays_of(data, header, path.name)


def _table(header: dict[str, Any], arrays: dict[str, Any], name: str) -> PackedTable:
    shape = Shape(**{k: header[name][k] for k in ("count", "bucket_bits", "payload_bits")})
    return PackedTable(
        shape, **{part: arrays[f"{name}.{part}"] for part in ("units", "groups", "remainders", "payloads")}
    )


def _per_item(
    words: np.ndarray, alnum: np.ndarray, grams: np.ndarray, windows: np.ndarray, owners: np.ndarray | None
) -> list[Signature]:
    gram_base = np.concatenate([[0], np.cumsum(np.maximum(words - (GRAM_N - 1), 0))])
    window_counts = np.maximum(alnum - (WINDOW_CHARS - 1), 0)
    window_base = np.concatenate([[0], np.cumsum(window_counts)])
    out = []
    for i in range(words.size):
        item_windows = (
            windows[window_base[i] : window_base[i + 1]] if owners is None else windows[owners == i]
        )
        item_grams = grams[gram_base[i] : gram_base[i + 1]]
        out.append(signature(int(words[i]), int(alnum[i]), item_grams.tolist(), item_windows.tolist()))
    return out


def confirmed_items(index: Path, candidates: list[str]) -> dict[int, int]:
    """Item -> the one candidate of the same shape, for every item that has exactly one."""
    by_shape: dict[Signature, list[int]] = {}
    for number, shape in enumerate(candidate_signatures(candidates)):
        by_shape.setdefault(shape, []).append(number)
    found = {}
    for item, shape in enumerate(item_signatures(index)):
        matches = by_shape.get(shape, [])
        if len(matches) == 1:
            found[item] = matches[0]
    return found


def visible_index(index: Path) -> dict[str, dict[str, int]]:
    """What a sealed index shows of each set beyond digests: version, item total, how many files."""
    raw = json.loads(index.read_text())
    shown = {}
    for name, golden in raw["sets"].items():
        hidden = ("id_field", "files", "rules", "views", "ids_digest")
        assert all(golden.get(key) is None for key in hidden), golden
        shown[name] = {"version": golden["version"], "items": golden["items"], "files": len(golden["data"])}
    return shown

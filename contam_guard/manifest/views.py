"""Hash one text field of a golden set into a manifest view, under the manifest's normalisation spec."""

from __future__ import annotations

import numpy as np

from contam_guard.engine.batching import batches
from contam_guard.manifest.digests import view_digest
from contam_guard.manifest.model import View, encode_array
from contam_guard.text.features import extract_features
from contam_guard.text.hashing import HashKey
from contam_guard.text.normalise import CURRENT, TextSpec

_BATCH_CHARS = 1 << 20


def hash_view(field: str, texts: list[str], key: HashKey | None, spec: TextSpec = CURRENT) -> View:
    """The view of ``texts`` (one per item) hashed under ``spec`` (and ``key``, when keyed)."""
    words, alnum, grams, windows = [], [], [], []
    for batch in batches(texts, _BATCH_CHARS, len):
        features = extract_features(batch, key=key, windows=True, spec=spec)
        words.append(features.word_counts)
        alnum.append(features.alnum_counts)
        grams.append(features.gram_hash[features.gram_valid])
        windows.append(features.window_hash[features.window_valid])
    arrays = {
        "words": encode_array(np.concatenate(words), "<i4"),
        "alnum_chars": encode_array(np.concatenate(alnum), "<i4"),
        "grams": encode_array(np.concatenate(grams), "<u8"),
        "windows": encode_array(np.concatenate(windows), "<u8"),
    }
    return View(field=field, digest=view_digest(field, arrays), **arrays)

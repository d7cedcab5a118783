"""Hash one text field of a golden set into a manifest view, under the manifest's normalisation spec."""

from __future__ import annotations

import numpy as np

from contam_guard.core.spec.features import extract_features
from contam_guard.core.spec.hashing import GRAM_N, HashKey
from contam_guard.core.spec.normalise import CURRENT, TextSpec
from contam_guard.io.batching import batches
from contam_guard.io.manifest.digests import item_order_digest
from contam_guard.io.manifest.model import View, ViewData
from contam_guard.io.manifest.templates import TemplateSettings, find_templates

_BATCH_CHARS = 1 << 20


def hash_view(
    field: str,
    texts: list[str],
    key: HashKey | None,
    spec: TextSpec = CURRENT,
    *,
    windows: bool = True,
    templates: TemplateSettings | None = None,
) -> View:
    """The view of ``texts`` (one per item) hashed under ``spec`` (and ``key``, when keyed);
    without ``windows`` (a set not registered for GPT-4's rule), no window hashes (the alnum
    lengths are kept); with ``templates``, its template n-grams marked (``io.manifest.templates``)."""
    words, alnum, grams, found = [], [], [], []
    for batch in batches(texts, _BATCH_CHARS, len):
        # the windows are hashed even when not stored: their pass gives the alnum lengths,
        # which are kept (the GPT-3 rule's default N for unspaced text and `sets` read them)
        features = extract_features(batch, key=key, windows=True, spec=spec)
        words.append(features.word_counts)
        alnum.append(features.alnum_counts)
        grams.append(features.gram_hash[features.gram_valid])
        if windows:
            found.append(features.window_hash[features.window_valid])
    word_counts = np.concatenate(words).astype(np.int64)
    alnum_counts = np.concatenate(alnum).astype(np.int64)
    gram_hashes = np.concatenate(grams).astype(np.uint64)
    window_hashes = np.concatenate(found).astype(np.uint64) if windows else None
    marks = None
    if templates is not None:
        marks = find_templates(gram_hashes, np.maximum(word_counts - (GRAM_N - 1), 0), templates)
    return View(
        field,
        item_order_digest(field, word_counts, alnum_counts, gram_hashes, window_hashes),
        ViewData.from_items(word_counts, alnum_counts, gram_hashes, window_hashes, marks),
    )

"""The words a search index holds: the rules' normalised words, hashed as a scan hashes them.

The vectorised kernels of ``text.features`` (and its reference path for the rare records they
cannot do) give each word's 64-bit hash and its span in the text; the index and its queries
both go through ``word_hashes``, so a query finds exactly what the normalisation makes equal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from contam_guard.text import features, located
from contam_guard.text.hashing import HashArray
from contam_guard.text.normalise import TextSpec
from contam_guard.text.tables import tables_for

IntArray = features.IntArray


@dataclass(frozen=True)
class Words:
    """Every word of a batch of texts: ``hashes``, ``start``/``end`` (character span in its
    text) and ``bounds`` (``bounds[t]`` is the index of text t's first word; one more entry)."""

    hashes: HashArray
    start: IntArray
    end: IntArray
    bounds: IntArray


def word_hashes(texts: Sequence[str], spec: TextSpec) -> Words:
    """The normalised words of each of ``texts`` under ``spec``, hashed (unkeyed)."""
    n = len(texts)
    tables = tables_for(spec)
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=n)
    text_start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths + 1, out=text_start[1:])
    joined = "\n".join(texts) + "\n" if n else ""
    codepoints = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.uint32)
    record, start, end, hashes, flagged = features._words(codepoints, text_start, tables)
    special = np.flatnonzero(flagged)
    if special.size:
        parts = [located.pieces(texts[r]) for r in special.tolist()] if spec.version == 2 else None
        reference = features._words_reference(texts, special, spec, parts)
        record, start, end, hashes = features._merge((record, start, end, hashes), reference)
    bounds = np.searchsorted(record, np.arange(n + 1)).astype(np.int64)
    return Words(hashes, start, end, bounds)

"""A persistent search index of training files: exact phrase counts and BM25 ranking.

``contam-guard index`` builds it (``build``), ``contam-guard search`` and ``contam-guard serve``
query it (``query``, ``server``). Words are the rules' words (``core.spec.normalise``, hashed by the
same kernels as a scan), so an exact search counts what an n-gram rule would match:

- exact: a suffix array (``pydivsufsort``) over each shard's stream of word ids (``exact``);
- fuzzy: a BM25 index (``tantivy``) whose terms are the same word hashes (``bm25``).

The layout on disk and its atomic replacement are in ``store``.
"""

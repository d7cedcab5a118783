"""Hash-only rules for copies the n-gram rules miss: changed numbers and rewordings.

Both work from the manifest alone. At ``register`` time each view gets two *derived views*
(``views.py``): ``FIELD~numbers-v1``, the 5-gram hashes of the item's words with every number
masked (``numbers.py``), and ``FIELD~words-v1``, the hashes of its stemmed content words
(``content.py``). At scan time the same masking and stemming are applied to each training
string and hashed under the manifest's spec and key (``hashing.py``); ``matching.py`` finds
the longest masked run per (item, record) and an IDF-weighted overlap of content words through
an inverted index, and ``scan_pass.py`` runs that over the sources a scan read. The rules
(``rules/numbers.py``, ``rules/reworded.py``) read the result like any other statistics.
"""

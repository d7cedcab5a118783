"""The numbers the spec and the compiled kernels share, in one module below both.

``core.spec.hashing`` defines the hashes with them, ``core.spec.normalise`` the classes, the readers the
paragraphs; ``native`` checks at load that the compiled kernels were built with the same values.
"""

from __future__ import annotations

GRAM_N = 5
"""Word n-grams are stored as 5-grams: a shared run of r >= 5 words is exactly r - 4
consecutive shared 5-grams on one diagonal, so every longer n follows from them."""
WINDOW_CHARS = 50
"""GPT-4's substring length, in characters of the alnum view."""
CHAR_BASE = 0x9E3779B97F4A7C15  # odd, so it is invertible mod 2**64
WORD_BASE = 0xC2B2AE3D27D4EB4F
LEN_MIX = 0x165667B19E3779F9

PARAGRAPH_BYTES = 16 << 10
"""A record of a plain-text file ends after the line at which it reaches this many bytes, if no
blank line ends it before (``io.readers.paragraphs``)."""

# The classes of code points (``core.spec.normalise``; ``core.spec.tables`` builds the tables).
UNKNOWN = 0  # not classified yet
ALNUM = 1  # kept in words; gives one character of the alnum view
KEPT = 2  # kept in words, nothing in the alnum view (marks, controls; format characters in v1)
REMOVED = 3  # removed from words without splitting them (punctuation, symbols; v2: Cf, selectors)
SPACE = 4  # a word boundary; nothing in either view
SPECIAL = 5  # anything else: the record takes the reference path (see ``tables.py``)
SOLO = 6  # v3: a word on its own (the word before it closes; marks after it join it; see ``tables.py``)
MARKUP = 7  # v4: may start markup (``markup.TRIGGERS``); in words and the alnum view, as REMOVED

"""Visible redaction of personal data in training-side snippets (``--redact-pii``).

As the ROOTS search tool did for its results (Piktus et al. 2023, "The ROOTS Search Tool",
Section 3.2), snippets keep their shape and show *that* something was removed: ``[EMAIL]``,
``[PHONE]``, ``[IP]``, ``[KEY]``. Regular expressions, so some personal data will slip through
and some harmless strings (a long hex digest) will be masked; a reviewer still sees the shared
run and its numbers, which is what the review is for.
"""

from __future__ import annotations

import re

_KEY_PREFIXES = (
    r"sk-[A-Za-z0-9_-]{20,}",  # OpenAI-style secret keys
    r"gh[pousr]_[A-Za-z0-9]{30,}",  # GitHub tokens
    r"github_pat_[A-Za-z0-9_]{30,}",
    r"AKIA[0-9A-Z]{16}",  # AWS access key ids
    r"AIza[0-9A-Za-z_-]{35}",  # Google API keys
    r"xox[abprs]-[A-Za-z0-9-]{10,}",  # Slack tokens
    r"hf_[A-Za-z0-9]{30,}",  # Hugging Face tokens
)
# Long mixed letter-and-digit strings look like keys even without a known prefix.
_GENERIC_KEY = r"(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{32,}"

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("[EMAIL]", re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")),
    ("[KEY]", re.compile(r"\b(?:" + "|".join(_KEY_PREFIXES) + r"|" + _GENERIC_KEY + r")\b")),
    (
        "[IP]",
        re.compile(r"\b(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\b"),
    ),
    ("[IP]", re.compile(r"\b(?:[0-9A-Fa-f]{1,4}:){3,7}[0-9A-Fa-f]{1,4}\b")),
    # Phone numbers: an optional +country code, then at least three groups of digits with
    # separators, or a (area) code; plain arithmetic ("16 - 3 - 4") has too few digits.
    (
        "[PHONE]",
        re.compile(
            r"(?<![\w+])(?:\+\d{1,3}[\s.-]?)?"
            r"(?:\(\d{2,4}\)[\s.-]?\d{3,4}[\s.-]?\d{3,4}|\d{2,4}[\s.-]\d{3,4}[\s.-]\d{3,4})(?!\w)"
            r"|(?<![\w+])\+\d{1,3}[\s.-]?\d{6,12}(?!\w)"
        ),
    ),
)


def redact(text: str) -> str:
    """``text`` with e-mail addresses, keys, IP addresses and phone numbers replaced by markers."""
    for marker, pattern in PATTERNS:
        text = pattern.sub(marker, text)
    return text

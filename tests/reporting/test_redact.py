"""PII redaction of training-side snippets: a truth table of what is masked and what is not."""

from __future__ import annotations

import pytest

from contam_guard.reporting.redact import redact

CASES = [
    ("write to jane.doe+news@example.co.uk today", "write to [EMAIL] today"),
    ("call +1 (555) 123-4567 now", "call [PHONE] now"),
    ("call 555-123-4567 now", "call [PHONE] now"),
    ("ring 020 7946 0958", "ring [PHONE]"),
    ("server at 192.168.10.254 is down", "server at [IP] is down"),
    ("v6 2001:0db8:85a3:0000:0000:8a2e:0370:7334 here", "v6 [IP] here"),
    ("key sk-abcdefghijklmnopqrstuvwxyz123456 leaked", "key [KEY] leaked"),
    ("token ghp_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ ok", "token [KEY] ok"),
    ("aws AKIAIOSFODNN7EXAMPLE here", "aws [KEY] here"),
    # Not personal data: arithmetic, dates, prices, versions, ordinary long words.
    ("Janet sells 16 - 3 - 4 = 9 duck eggs", "Janet sells 16 - 3 - 4 = 9 duck eggs"),
    ("165 ÷ 40 = 4.125, so 5 buses", "165 ÷ 40 = 4.125, so 5 buses"),
    ("on 2023-04-05 it cost $1,200.50", "on 2023-04-05 it cost $1,200.50"),
    ("version 3.11.7 of python", "version 3.11.7 of python"),
    ("internationalization-and-localization", "internationalization-and-localization"),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_redaction_truth_table(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_redaction_is_idempotent() -> None:
    text = "mail a@b.io or 10.0.0.1, key sk-abcdefghijklmnopqrstuvwxyz123456"
    assert redact(redact(text)) == redact(text)

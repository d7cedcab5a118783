"""PII redaction of training-side snippets: a truth table of what is masked and what is not."""

from __future__ import annotations

import base64
import json

import pytest

from contam_guard.core.redact import redact

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


def _jwt(signature: str = "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c") -> str:
    def part(value: dict[str, str]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part({'sub': '1234567890'})}.{signature}"


PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END RSA PRIVATE KEY-----"
# Each class of personal data or secret with a positive case (masked) and a negative one (a
# near miss that is not personal data, left as it is).
CLASSES = [
    # US social security numbers: valid area, group and serial (python-stdnum) ...
    ("ssn 536-22-1234 on file", "ssn [SSN] on file"),
    ("ssn 536 22 1234 on file", "ssn [SSN] on file"),
    # ... but not area 000, 666 or 9xx, group 00, or the Woolworth card's number.
    ("case 000-12-3456 closed", "case 000-12-3456 closed"),
    ("card 078-05-1120 shown", "card 078-05-1120 shown"),
    # IBANs whose check digits are right, with or without spaces ...
    ("pay DE89 3704 0044 0532 0130 00 now", "pay [IBAN] now"),
    ("pay GB82WEST12345698765432 now", "pay [IBAN] now"),
    # ... not one with a wrong check digit.
    ("ref DE89370400440532013001 kept", "ref DE89370400440532013001 kept"),
    # IPv6 addresses, compressed or not ...
    ("host fe80::1ff:fe23:4567:890a up", "host [IP] up"),
    ("host 2001:db8::8a2e:370:7334 up", "host [IP] up"),
    # ... not clock times, C++ scopes or short compressed forms of no one.
    ("at 12:30:45 sharp", "at 12:30:45 sharp"),
    ("std::vector and a::b", "std::vector and a::b"),
    # Private-key blocks, whole, or to the snippet's end when it is cut inside one ...
    (f"key {PEM} done", "key [KEY] done"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA", "[KEY]"),
    # ... not a public key's header.
    ("-----BEGIN PUBLIC KEY----- is public", "-----BEGIN PUBLIC KEY----- is public"),
    # JWTs whose header and payload decode (detect-secrets' check), signature included ...
    (f"auth {_jwt()} end", "auth [KEY] end"),
    # ... not a string that only starts like one.
    ("eyJnotajwt.eyJbad.sig", "eyJnotajwt.eyJbad.sig"),
    # E-mail written to dodge scrapers ...
    ("mail john＠example.com now", "mail [EMAIL] now"),
    ("mail john [at] example [dot] com now", "mail [EMAIL] now"),
    ("mail john (at) example.com now", "mail [EMAIL] now"),
    ("link ?to=john%40example.com&x=1", "link ?to=[EMAIL]&x=1"),
    # ... not prose with "at", nor arithmetic with @.
    ("she met him at the station.", "she met him at the station."),
    ("we sold 2@3.5 each", "we sold 2@3.5 each"),
    # Passwords in URLs (detect-secrets' basic-auth detector): the password only.
    ("db https://admin:hunter2@db.example.com/x", "db https://admin:[KEY]/x"),
    ("see https://db.example.com/admin", "see https://db.example.com/admin"),
]


@pytest.mark.parametrize(("text", "expected"), CLASSES)
def test_each_class_has_a_positive_and_a_negative_case(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_redaction_truth_table(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_redaction_is_idempotent() -> None:
    text = "mail a@b.io or 10.0.0.1, key sk-abcdefghijklmnopqrstuvwxyz123456"
    assert redact(redact(text)) == redact(text)

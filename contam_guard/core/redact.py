"""Visible redaction of personal data and secrets in training-side snippets (``--redact-pii``).

As the ROOTS search tool did for its results (Piktus et al. 2023, "The ROOTS Search Tool",
Section 3.2), snippets keep their shape and show *that* something was removed: ``[EMAIL]``,
``[PHONE]``, ``[IP]``, ``[KEY]``, ``[SSN]``, ``[IBAN]``. Every detector finds spans in the
original text; overlapping spans are merged and each is replaced by the marker of the one that
starts first, so one detector's marker never feeds another's pattern.

- Secrets: the token detectors of Yelp's detect-secrets (cloud keys, GitHub, GitLab, Slack,
  Stripe, OpenAI tokens, JWTs checked for their JSON parts, passwords in URLs, ...), private-key
  blocks from their ``BEGIN ... PRIVATE KEY`` line to the ``END`` line (or the snippet's end),
  and long mixed letter-and-digit or base64 strings (a key of no known shape, a key block's
  lines without its header).
- US social security numbers (``123-45-6789``, with dashes or spaces) and IBANs (with or
  without spaces), each only when python-stdnum validates it (SSN area, group and serial rules;
  the IBAN's country length and check digits).
- IPv4 addresses; IPv6 addresses, compressed (``fe80::1``) or not, that the standard library
  parses.
- E-mail addresses, also written to dodge a scraper: a fullwidth ``＠``, `` [at] `` /
  `` (at) `` with `` [dot] ``, or URL-encoded (``john%40example.com``).
- Phone numbers: an optional +country code, then three groups of digits, or an (area) code.

Patterns, so some personal data will slip through and some harmless strings (a long hex digest)
will be masked; a reviewer still sees the shared run and its numbers, which is what the review
is for.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator

from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector
from stdnum import iban as stdnum_iban
from stdnum.us import ssn as stdnum_ssn

EMAIL, PHONE, IP, KEY, SSN, IBAN = "[EMAIL]", "[PHONE]", "[IP]", "[KEY]", "[SSN]", "[IBAN]"
MARKERS = (EMAIL, PHONE, IP, KEY, SSN, IBAN)
"""Every marker a redacted snippet may hold (the served page highlights them)."""

Span = tuple[int, int]
Detector = Callable[[str], Iterator[Span]]

# detect-secrets' detectors of a token by its own shape. Left out: the keyword and high-entropy
# detectors (they judge a line of code by its variable names or need per-file settings) and its
# public-IPv4 one (every IPv4 address is masked below).
SECRET_DETECTORS: tuple[type[RegexBasedDetector], ...] = (
    ArtifactoryDetector,
    AWSKeyDetector,
    AzureStorageKeyDetector,
    BasicAuthDetector,
    DiscordBotTokenDetector,
    GitHubTokenDetector,
    GitLabTokenDetector,
    JwtTokenDetector,
    MailchimpDetector,
    NpmDetector,
    OpenAIDetector,
    PypiTokenDetector,
    SendGridDetector,
    SlackDetector,
    SquareOAuthDetector,
    StripeDetector,
    TelegramBotTokenDetector,
    TwilioKeyDetector,
)
_KEY_SHAPES = (
    # Long mixed letter-and-digit strings look like keys even without a known prefix.
    r"\b(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{32,}\b",
    # base64 runs (a key block's lines seen without their header)
    r"(?<![A-Za-z0-9+/])(?=[A-Za-z0-9+/]*\d)(?=[A-Za-z0-9+/]*[A-Za-z])[A-Za-z0-9+/]{40,}={0,2}",
    r"\bhf_[A-Za-z0-9]{30,}\b",  # Hugging Face tokens
    r"\bAIza[0-9A-Za-z_-]{35}\b",  # Google API keys
)
_KEY_END = re.compile(r"-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|Private-MAC: *[0-9a-fA-F]+")

_AT = r"(?:@|＠|%40|\s?[\[({<]\s?at\s?[\])}>]\s?)"
_DOT = r"(?:\.|．|%2e|\s?[\[({<]\s?dot\s?[\])}>]\s?)"
_EMAIL = re.compile(rf"[\w.+-]+{_AT}[\w-]+(?:{_DOT}[\w-]+)*{_DOT}(?=[\w-]*[^\W\d_])[\w-]+", re.IGNORECASE)
_IPV4 = re.compile(r"\b(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\b")
_IPV6 = re.compile(
    r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|\d{1,3}(?:\.\d{1,3}){3})?(?![\w:])"
)
_SSN = re.compile(r"(?<![\w-])\d{3}([- ])\d{2}\1\d{4}(?![\w-])")
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])")
# Phone numbers: an optional +country code, then at least three groups of digits with
# separators, or a (area) code; plain arithmetic ("16 - 3 - 4") has too few digits.
_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[\s.-]?)?"
    r"(?:\(\d{2,4}\)[\s.-]?\d{3,4}[\s.-]?\d{3,4}|\d{2,4}[\s.-]\d{3,4}[\s.-]\d{3,4})(?!\w)"
    r"|(?<![\w+])\+\d{1,3}[\s.-]?\d{6,12}(?!\w)"
)


def _matches(pattern: re.Pattern[str], accept: Callable[[str], bool] = lambda _: True) -> Detector:
    def find(text: str) -> Iterator[Span]:
        for match in pattern.finditer(text):
            if accept(match.group()):
                yield match.span()

    return find


_JWT_SIGNATURE = re.compile(r"[A-Za-z0-9_=-]*")
_SECRET_PATTERNS = [(kind, pattern) for kind in SECRET_DETECTORS for pattern in kind().denylist]
_PRIVATE_KEY_HEADERS = list(PrivateKeyDetector().denylist)


def _secrets(text: str) -> Iterator[Span]:
    """What detect-secrets' detectors match: the whole match, but only the password of a URL's
    ``user:password@``; a JWT only when its parts decode, with its signature (which the
    detector's pattern leaves out)."""
    for detector, pattern in _SECRET_PATTERNS:
        for match in pattern.finditer(text):
            if detector is BasicAuthDetector:
                yield match.span(1)
            elif detector is JwtTokenDetector:
                if JwtTokenDetector.is_formally_valid(match.group()):
                    signature = _JWT_SIGNATURE.match(text, match.end())
                    yield match.start(), signature.end() if signature else match.end()
            else:
                yield match.span()


def _private_keys(text: str) -> Iterator[Span]:
    """A private key from detect-secrets' header line (with its ``-----``) to its end line, or
    to the end of the text when the snippet stops inside it."""
    for pattern in _PRIVATE_KEY_HEADERS:
        for match in pattern.finditer(text):
            start = match.start()
            while start > 0 and text[start - 1] == "-":
                start -= 1
            end = _KEY_END.search(text, match.end())
            yield start, end.end() if end else len(text)


def _keys(text: str) -> Iterator[Span]:
    for shape in _KEY_SHAPES:
        yield from (m.span() for m in re.finditer(shape, text))


def _is_ipv6(candidate: str) -> bool:
    if sum(c in "0123456789abcdefABCDEF" for c in candidate) < 4:  # "::1", "a::b": no one's address
        return False
    try:
        ipaddress.IPv6Address(candidate)
    except ValueError:
        return False
    return True


DETECTORS: tuple[tuple[str, Detector], ...] = (
    (KEY, _private_keys),
    (KEY, _secrets),
    (EMAIL, _matches(_EMAIL)),
    (IBAN, _matches(_IBAN, stdnum_iban.is_valid)),
    (SSN, _matches(_SSN, lambda found: bool(stdnum_ssn.is_valid(found.replace(" ", "-"))))),
    (KEY, _keys),
    (IP, _matches(_IPV6, _is_ipv6)),
    (IP, _matches(_IPV4)),
    (PHONE, _matches(_PHONE)),
)
"""(marker, detector): where spans start together, the one listed first names the marker."""


def spans(text: str) -> list[tuple[int, int, str]]:
    """The spans to mask in ``text``, merged where they overlap: (start, end, marker)."""
    found = [
        (start, end, order, marker)
        for order, (marker, detect) in enumerate(DETECTORS)
        for start, end in detect(text)
        if end > start
    ]
    merged: list[tuple[int, int, str]] = []
    for start, end, _, marker in sorted(found, key=lambda s: (s[0], s[2])):
        if merged and start <= merged[-1][1]:  # overlapping or touching: one mask
            last = merged[-1]
            merged[-1] = (last[0], max(last[1], end), last[2])
        else:
            merged.append((start, end, marker))
    return merged


def redact(text: str) -> str:
    """``text`` with every span ``spans`` finds replaced by its marker."""
    out, at = [], 0
    for start, end, marker in spans(text):
        out += [text[at:start], marker]
        at = end
    out.append(text[at:])
    return "".join(out)

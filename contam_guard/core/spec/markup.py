"""Step m of spec 4: HTML and Markdown markup read as a reader sees it, the text's length kept.

``rewrite(text)`` returns a text of the same length in which every character stays where it
was, so that a word's span and an alnum character's offset in the rewritten text are its
place in the original (findings, snippets and scrub cuts point at the original text). One
pass, left to right; at each ``&``, ``<`` or ``[`` (the only characters markup starts with),
the first of these that matches there is rewritten and the pass goes on after it (what it
produced is never read again as markup):

1. **Character reference** (HTML's, a semicolon required): ``&`` NAME ``;`` where NAME``;`` is a
   key of the standard library's table of HTML5 named references (``html.entities.html5``:
   NAME is 1 to 31 ASCII letters and digits, a letter first); ``&#`` DIGITS ``;``; ``&#x`` (or
   ``&#X``) HEXDIGITS ``;``. It becomes what it decodes to (``html.unescape`` of it: a number
   that names no character gives U+FFFD or nothing, as HTML says; one, sometimes two code
   points), followed by as many U+2060 WORD JOINER as fill its length (spec 4 removes them, as
   it removes every default-ignorable code point, without splitting the word). ``caf&eacute;``
   is ``café``; ``&nbsp;`` is U+00A0, a space; ``&amp;`` is ``&``, punctuation, as ``&`` was.
   A name without its semicolon (``&nbsp`` , which browsers also accept) is left as it is.
2. **HTML comment**: ``<!--`` up to the first ``-->`` after it (``<!-->`` and ``<!--->`` are
   comments too, as in CommonMark); it becomes spaces.
3. **Autolink** (CommonMark): ``<`` SCHEME ``:`` REST ``>``, SCHEME an ASCII letter then 1 to 31
   ASCII letters, digits, ``+``, ``.`` or ``-``, REST any code points but controls, space, ``<``
   and ``>``; or ``<`` LOCAL ``@`` DOMAIN ``>`` (an e-mail address: LOCAL of ASCII letters,
   digits and ``.!#$%&'*+/=?^_`{|}~-``, DOMAIN of ASCII letters, digits, ``.`` and ``-``). The
   link's text is the address itself: the two brackets become spaces (the address is a word of
   its own, not glued onto its neighbours) and what is between stays as it is.
4. **HTML tag**: ``<`` then an ASCII letter, ``/`` and an ASCII letter, ``!`` and an ASCII letter
   (a declaration) or ``?`` (a processing instruction), then any code points but ``<`` and
   ``>``, then ``>``: ``<span>``, ``</b>``, ``<br/>``, ``<a href="...">``. It becomes spaces: a
   word boundary. (So does ``<b and c>`` in ``a<b and c>d``, as a browser would hide it;
   ``a < b`` is not a tag.)
5. **Markdown link**: ``[`` TEXT ``]`` followed by ``(`` DESTINATION ``)`` (an inline link;
   DESTINATION holds no ``[`` or ``]`` and its parentheses balance, so a title in quotes and a
   Wikipedia URL with ``(...)`` are inside) or by ``[`` LABEL ``]`` (a reference link; LABEL
   holds no ``[`` or ``]`` and may be empty). TEXT holds no ``[`` or ``]``. The ``[`` becomes a
   space, TEXT is rewritten by these same rules (a tag in it must end inside it), and the rest,
   ``](...)`` or ``][...]``, becomes spaces: the link's text stays, a word boundary on each side,
   and the URL is gone. An image (``![alt](src)``) keeps its alt text (``!`` is punctuation).

Anything else stays as it is (``&``, ``<`` and ``[`` are punctuation: removed from words).
Escapes (``\\[``), code spans and HTML's raw text elements (``<script>``) are not recognised:
this is a reading of markup in text, not a Markdown or HTML parser. Every rule runs in time
linear in the text (each search stops at the next character its rule cannot contain, and the
search for ``-->`` is remembered), as the compiled kernel (``csrc/native.c``) does.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from html.entities import html5

SPACE = " "
FILL = "\u2060"
"""What fills the rest of a character reference: WORD JOINER, which spec 4 removes."""
TRIGGERS = "&<["
"""The characters markup starts with (spec 4's tables class them ``normalise.MARKUP``)."""

_LOCAL = r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~\-]"
_CANDIDATE = re.compile(r"&[#A-Za-z]|<(?:!--|/?[A-Za-z]|![A-Za-z]|\?|" + _LOCAL + r"+@)|\[")
"""Where a rule may match: ``&``, ``<`` or ``[`` followed by what each rule's match starts with
(a search in the regex engine skips the rest, such as GSM8K's ``<<48/2=24>>``, at C speed)."""
_REFERENCE = re.compile(r"&(?:#([0-9]+)|#[xX]([0-9A-Fa-f]+)|([A-Za-z][A-Za-z0-9]{0,30}));")
_AUTOLINK = re.compile(
    r"<(?:[A-Za-z][A-Za-z0-9+.\-]{1,31}:[^\x00-\x20\x7f<>]*|" + _LOCAL + r"+@[A-Za-z0-9.\-]+)>"
)
_TAG = re.compile(r"<(?:/?[A-Za-z]|![A-Za-z]|\?)[^<>]*>")
_BRACKET = re.compile(r"[\[\]]")
_PAREN_OR_BRACKET = re.compile(r"[\[\]()]")
MAX_CODEPOINT_DIGITS = 8
"""More significant decimal digits than this name no character (nor do more than 6 hex digits)."""


def decode_reference(reference: str) -> str:
    """What a character reference (``&...;``, matched by rule 1) decodes to."""
    if reference[1] != "#":
        return html5[reference[1:]]
    hexadecimal = reference[2] in "xX"
    digits = reference[3 if hexadecimal else 2 : -1].lstrip("0") or "0"
    # Python's int() refuses thousands of digits: a long number names no character anyway.
    too_long = len(digits) > (6 if hexadecimal else MAX_CODEPOINT_DIGITS)
    value = 0x110000 if too_long else int(digits, 16 if hexadecimal else 10)
    return html.unescape(f"&#{value};")


@dataclass
class _CommentEnds:
    """Where the first ``-->`` at or after ``start`` (below the limit) is: -1 for none. Searches
    go left to right, so one answer serves every later search that starts before it."""

    start: int = -1
    found: int = -1

    def first(self, text: str, start: int, limit: int) -> int:
        if self.start < 0 or (self.found != -1 and self.found < start):
            self.start, self.found = start, text.find("-->", start, limit)
        return self.found


def rewrite(text: str) -> str:
    """``text`` with its markup rewritten (the rules above), of the same length."""
    if "&" not in text and "<" not in text and "[" not in text:
        return text
    parts: list[str] = []
    _rewrite(text, 0, len(text), parts)
    return "".join(parts)


def _rewrite(text: str, start: int, end: int, parts: list[str]) -> None:
    """Append the rewrite of ``text[start:end]`` (no match runs past ``end``) to ``parts``."""
    comments = _CommentEnds()
    done = i = start
    while (found := _CANDIDATE.search(text, i, end)) is not None:
        i = found.start()
        replacement = None
        if text[i] == "&":
            replacement = _reference(text, i, end)
        elif text[i] == "<":
            replacement = _angle(text, i, end, comments)
        else:
            link = _link(text, i, end)
            if link is not None:
                close, after = link
                parts += [text[done:i], SPACE]
                _rewrite(text, i + 1, close, parts)
                parts.append(SPACE * (after - close))
                done = i = after
                continue
        if replacement is None:
            i += 1
            continue
        parts += [text[done:i], replacement]
        done = i = i + len(replacement)
    parts.append(text[done:end])


def _reference(text: str, i: int, end: int) -> str | None:
    match = _REFERENCE.match(text, i, end)
    if match is None or (match.group(3) is not None and match.group(3) + ";" not in html5):
        return None
    decoded = decode_reference(match.group())
    return decoded + FILL * (match.end() - i - len(decoded))


def _angle(text: str, i: int, end: int, comments: _CommentEnds) -> str | None:
    if text.startswith("<!--", i, end):
        close = comments.first(text, i + 2, end)
        return None if close < 0 else SPACE * (close + 3 - i)
    autolink = _AUTOLINK.match(text, i, end)
    if autolink is not None:
        return SPACE + autolink.group()[1:-1] + SPACE
    tag = _TAG.match(text, i, end)
    return None if tag is None else SPACE * (tag.end() - i)


def _link(text: str, i: int, end: int) -> tuple[int, int] | None:
    """A Markdown link at ``text[i]`` (``[``): where its text ends (the ``]``) and where the link
    ends, or None."""
    close = _BRACKET.search(text, i + 1, end)
    if close is None or text[close.start()] != "]":
        return None
    j = close.start()
    if text.startswith("(", j + 1, end):
        depth = 0
        for mark in _PAREN_OR_BRACKET.finditer(text, j + 1, end):
            if mark.group() in "[]":
                return None
            depth += 1 if mark.group() == "(" else -1
            if depth == 0:
                return j, mark.end()
        return None
    if text.startswith("[", j + 1, end):
        label = _BRACKET.search(text, j + 2, end)
        if label is not None and text[label.start()] == "]":
            return j, label.end()
    return None

"""A code-aware view: what a rephrased function keeps of the one it copies.

The rules use the docstrings' prose (``docstring_spans`` and what follows, at the end: the
``FIELD~code-v1`` view); the token stream and its shape n-grams are measured only
(``benchmarks/reword_ideas.py``).

A rephrasing of a benchmark function renames its identifiers, changes the values in its
doctests, rewords its docstring and may restructure a loop. What survives:

- the *shape* of the code where it was not restructured: the language's tokens with every
  identifier one placeholder and every literal another (a type-2 clone keeps the same
  stream), taken as n-grams (``shape_grams``);
- the library calls and keywords it makes (``len``, ``sorted``, ``append``, ``hashlib``):
  names a rename leaves alone, kept as themselves in the stream when they are builtins or
  attribute names (``KEEP_NAMES``: attribute names are what an API spells, not a choice);
- the *docstring's* content words, which a rewording keeps as the prose rule's features
  (``docstring_features``: the prose features of the docstrings, with doctest lines left out,
  since their values are what a rephrasing changes).

Python is tokenized by its own ``tokenize`` module; a text it cannot tokenize (not Python,
or a fragment cut mid-string) by Pygments's lexer for the language (``pygments``), which never
fails. Everything here is a pure function of the text: features are strings that the manifest
would store hashed and keyed, like every other feature.
"""

from __future__ import annotations

import ast
import builtins
import io
import keyword
import re
import textwrap
import tokenize
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from pygments.lexers.python import PythonLexer
from pygments.token import Comment, Keyword, Literal, Name, Operator, Punctuation, String, Text, Whitespace

from contam_guard.core.reword.content import content_words
from contam_guard.core.reword.words import normalised_words
from contam_guard.core.spec import located
from contam_guard.core.spec.normalise import CURRENT, TextSpec

IDENT = "ID"
NUMBER = "NUM"
STRING = "STR"
KEEP_NAMES = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)
"""Names kept as themselves: a rename changes the program's own names, never these."""
_LAYOUT = {tokenize.NEWLINE: "NL", tokenize.INDENT: "IN", tokenize.DEDENT: "DE"}
_SKIP = {tokenize.NL, tokenize.COMMENT, tokenize.ENCODING, tokenize.ENDMARKER}
_DOCTEST = re.compile(
    r"^\s*(>>>|\.\.\.|[\w.]+\(.*\)\s*(==|=>|➞|=)|for\s+\w+\s*=|input:|output:|example)", re.I
)


@dataclass(frozen=True)
class Lexed:
    """A text as the code view sees it: its abstracted token stream and its docstrings."""

    shape: list[str]
    docstrings: list[str]


def lex(source: str, *, keep_attributes: bool = True) -> Lexed:
    """The abstracted stream and the docstrings of Python ``source`` (Pygments when
    ``tokenize`` fails on it)."""
    try:
        return _lex_python(textwrap.dedent(source), keep_attributes)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return _lex_pygments(source, keep_attributes)


def _lex_python(source: str, keep_attributes: bool) -> Lexed:
    shape: list[str] = []
    docs: list[str] = []
    tokens = list(_tokens(source))
    for k, tok in enumerate(tokens):
        kind, text = tok.type, tok.string
        if kind in _SKIP:
            continue
        if kind in _LAYOUT:
            shape.append(_LAYOUT[kind])
        elif kind == tokenize.NAME:
            after_dot = k > 0 and tokens[k - 1].string == "."
            keep = text in KEEP_NAMES or (keep_attributes and after_dot)
            shape.append(text if keep else IDENT)
        elif kind == tokenize.NUMBER:
            shape.append(NUMBER)
        elif kind == tokenize.STRING:
            if _statement(tokens, k):
                docs.append(_string_value(text))
            else:
                shape.append(STRING)
        elif kind == tokenize.OP:
            shape.append(text)
        elif not shape or shape[-1] != STRING:  # FSTRING_* pieces and the like: one literal
            shape.append(STRING)
    return Lexed(shape, docs)


def _tokens(source: str) -> Iterator[tokenize.TokenInfo]:
    return tokenize.generate_tokens(io.StringIO(source).readline)


def _statement(tokens: Sequence[tokenize.TokenInfo], k: int) -> bool:
    """A string that is a whole statement (a docstring, or a string used as a comment)."""
    before = k - 1
    while before >= 0 and tokens[before].type in (tokenize.NL, tokenize.COMMENT):
        before -= 1
    starts = before < 0 or tokens[before].type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
    return starts and k + 1 < len(tokens) and tokens[k + 1].type in (tokenize.NEWLINE, tokenize.ENDMARKER)


def _string_value(literal: str) -> str:
    body = literal.lstrip("rRbBuUfF")
    for quote in ('"""', "'''", '"', "'"):
        if body.startswith(quote) and body.endswith(quote) and len(body) >= 2 * len(quote):
            return body[len(quote) : -len(quote)]
    return body


def _lex_pygments(source: str, keep_attributes: bool) -> Lexed:
    shape: list[str] = []
    docs: list[str] = []
    previous = ""
    for kind, text in PythonLexer().get_tokens(source):
        if kind in Whitespace or kind in Text or kind in Comment:
            if "\n" in text and shape and shape[-1] != "NL":
                shape.append("NL")
            continue
        if kind in String.Doc:
            docs.append(_string_value(text))
        elif kind in String:
            if not shape or shape[-1] != STRING:
                shape.append(STRING)
        elif kind in Literal:
            shape.append(NUMBER)
        elif kind in Keyword:
            shape.append(text)
        elif kind in Name:
            keep = text in KEEP_NAMES or (keep_attributes and previous == ".")
            shape.append(text if keep else IDENT)
        elif kind in Operator or kind in Punctuation:
            shape.append(text)
        previous = text
    return Lexed(shape, docs)


def shape_grams(shape: Sequence[str], n: int = 8) -> list[str]:
    """The ``n``-grams of an abstracted stream, each one feature (a stream shorter than ``n``: none)."""
    return [" ".join(shape[k : k + n]) for k in range(len(shape) - n + 1)]


def prose_lines(docstring: str) -> str:
    """A docstring without its examples: doctest lines (``>>>``), the output line after each,
    and lines that show a call and its result (``f(1) == 2``, ``For x = ... the output``)."""
    kept: list[str] = []
    skip_output = False
    for line in docstring.splitlines():
        if _DOCTEST.match(line):
            skip_output = line.lstrip().startswith(">>>")
            continue
        if skip_output and line.strip():
            skip_output = False
            continue
        skip_output = False
        kept.append(line)
    return "\n".join(kept)


def docstring_features(
    lexed: Lexed, *, drop_examples: bool = True, prose: Callable[[list[str]], list[str]] = content_words
) -> list[str]:
    """The prose rule's content features (``prose``: of normalised words) of the docstrings,
    examples left out."""
    out: list[str] = []
    for doc in lexed.docstrings:
        text = prose_lines(doc) if drop_examples else doc
        out += prose(normalised_words(text, CURRENT))
    return out


def code_features(source: str, n: int = 8, *, drop_examples: bool = True) -> list[str]:
    """The code view's features of ``source``: shape n-grams (marked ``~``, so that they never
    meet a prose feature) and the docstrings' content features."""
    lexed = lex(source)
    return ["~" + gram for gram in shape_grams(lexed.shape, n)] + docstring_features(
        lexed, drop_examples=drop_examples
    )


# --- the code view the rules use: docstring prose by character span ------------------------

CODE_VIEW = "code-v1"
"""The derived view of a field whose items hold Python docstrings: their prose's content features
(``views.build_derived``); a training string's docstrings are scored against it (the
``reworded`` rule)."""
CODE_MIN_FEATURES = 8
"""An item's code view needs this many features before its pairs count: a one-line docstring
("Return the sum of the list.") says what many modules' functions say."""
_TRIPLE = re.compile(r"(\"\"\"|''')(.*?)(?:\1|\Z)", re.S)
"""A triple-quoted string's body; one left open runs to the end (a paragraph of a source file
cut at a blank line inside a docstring)."""


def docstring_spans(text: str) -> list[tuple[int, int]]:
    """Where the prose of ``text``'s triple-quoted strings lies (start, end), line by line:
    the body of every ``\"\"\"...\"\"\"`` / ``'''...'''`` (a docstring, or any long string; one left
    open: to the end) without its examples (``prose_lines``: doctest lines, the output after
    each, lines that show a call and its result). A pure function of the text, so the
    registered item and a scanned string are read alike; no tokenizer, which a fragment of code
    (a paragraph) would fail."""
    if '"""' not in text and "'''" not in text:
        return []
    spans: list[tuple[int, int]] = []
    for found in _TRIPLE.finditer(text):
        at = found.start(2)
        skip_output = False
        for line in found.group(2).splitlines(keepends=True):
            start, at = at, at + len(line)
            if _DOCTEST.match(line):
                skip_output = line.lstrip().startswith(">>>")
                continue
            if skip_output and line.strip():
                skip_output = False
                continue
            skip_output = False
            spans.append((start, at))
    return spans


def in_spans(starts: Sequence[int], spans: Sequence[tuple[int, int]]) -> list[bool]:
    """Whether each of ``starts`` (sorted character offsets) lies in one of ``spans`` (sorted,
    disjoint)."""
    out: list[bool] = []
    k = 0
    for start in starts:
        while k < len(spans) and spans[k][1] <= start:
            k += 1
        out.append(k < len(spans) and spans[k][0] <= start)
    return out


def docstring_words(text: str, spec: TextSpec) -> list[str]:
    """The normalised words of ``text`` that begin in its docstrings' prose (``docstring_spans``):
    what a scan takes of a training string by the same offsets."""
    spans = docstring_spans(text)
    if not spans:
        return []
    found = located.words(text, spec)
    inside = in_spans([start for _, start, _ in found], spans)
    return [word for (word, _, _), kept in zip(found, inside) if kept]


def is_python(text: str) -> bool:
    """Whether ``text`` is Python code: it parses (dedented), and holds a statement that is not
    a bare expression (a definition, an assignment, a ``return``, an import ...). A sentence does
    not parse; a number, a name or a sum parses but is a bare expression."""
    try:
        with warnings.catch_warnings():  # prose parsed as code: "invalid decimal literal" and the like
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(not isinstance(node, ast.Expr) for node in tree.body)


def is_code_field(texts: Sequence[str]) -> bool:
    """Whether a field's items are code (most of its non-empty ones ``is_python``): such a field
    is read for its docstrings (``CODE_VIEW``), not as prose, whose features (names, ``return``,
    ``len``) any program shares."""
    filled = [text for text in texts if text.strip()]
    return bool(filled) and 2 * sum(map(is_python, filled)) > len(filled)

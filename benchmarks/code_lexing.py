"""The code view's research prototype (decision R5): Python's own tokenizer (Pygments' lexer for
text it refuses), identifiers and literals abstracted to placeholders (a type-2 clone keeps the
same stream), n-grams of that stream, and the docstrings' prose features. The rules kept only the
docstrings' prose (``contam_guard/core/reword/code.py``); ``benchmarks/reword_ideas.py`` measures
the rest.
"""

from __future__ import annotations

import builtins
import io
import keyword
import textwrap
import tokenize
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from pygments.lexers.python import PythonLexer
from pygments.token import Comment, Keyword, Literal, Name, Operator, Punctuation, String, Text, Whitespace

from contam_guard.core.reword.code import prose_flags
from contam_guard.core.reword.content import content_words
from contam_guard.core.reword.words import normalised_words
from contam_guard.core.spec.normalise import CURRENT

IDENT = "ID"
NUMBER = "NUM"
STRING = "STR"
KEEP_NAMES = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)
"""Names kept as themselves: a rename changes the program's own names, never these."""
_LAYOUT = {tokenize.NEWLINE: "NL", tokenize.INDENT: "IN", tokenize.DEDENT: "DE"}
_SKIP = {tokenize.NL, tokenize.COMMENT, tokenize.ENCODING, tokenize.ENDMARKER}


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
    lines = docstring.splitlines()
    return "\n".join(line for line, prose in zip(lines, prose_flags(lines)) if prose)


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

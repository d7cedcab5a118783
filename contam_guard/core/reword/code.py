"""The code view of the rewording rules: what a rephrased function keeps of the one it copies.

A rephrasing of a benchmark function renames its identifiers, changes the values in its
doctests, rewords its docstring and may restructure a loop; what the rules read of it is its
docstrings' prose, examples left out (their values are what a rephrasing changes), as the prose
rule's content features: a field of code gets a derived ``FIELD~code-v1`` view of them at
registration (``is_code_field``), and a scanned string's docstring words are scored against it
(``docstring_spans``, ``docstring_words``). Everything here is a pure function of the text. (The
abstracted token stream and its shape n-grams were measured and left out of the rules:
``benchmarks/code_lexing.py``, decision R5.)
"""

from __future__ import annotations

import ast
import re
import textwrap
import warnings
from collections.abc import Iterable, Iterator, Sequence

from contam_guard.core.spec import located
from contam_guard.core.spec.normalise import TextSpec

_DOCTEST = re.compile(
    r"^\s*(>>>|\.\.\.|[\w.]+\(.*\)\s*(==|=>|➞|=)|for\s+\w+\s*=|input:|output:|example)", re.I
)


def prose_flags(lines: Iterable[str]) -> Iterator[bool]:
    """For each line of a docstring, whether it is prose: not an example (a doctest line
    ``>>>``/``...``, the output line after a ``>>>``, a line that shows a call and its result
    such as ``f(1) == 2`` or ``For x = ... the output``)."""
    skip_output = False
    for line in lines:
        if _DOCTEST.match(line):
            skip_output = line.lstrip().startswith(">>>")
            yield False
        elif skip_output and line.strip():
            skip_output = False
            yield False
        else:
            skip_output = False
            yield True


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
    open: to the end) without its examples (``prose_flags``). A pure function of the text, so the
    registered item and a scanned string are read alike; no tokenizer, which a fragment of code
    (a paragraph) would fail."""
    if '"""' not in text and "'''" not in text:
        return []
    spans: list[tuple[int, int]] = []
    for found in _TRIPLE.finditer(text):
        at = found.start(2)
        lines = found.group(2).splitlines(keepends=True)
        for line, prose in zip(lines, prose_flags(lines)):
            start, at = at, at + len(line)
            if prose:
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

"""The code view prototype (benchmarks/code_lexing.py): a rename, a changed doctest value or a reworded
docstring leaves the features it should leave, on Python's tokenizer and on Pygments."""

from __future__ import annotations

from benchmarks.code_lexing import IDENT, NUMBER, STRING, code_features, lex, prose_lines, shape_grams

ORIGINAL = '''
def has_close(numbers, threshold):
    """Check whether any two numbers are closer to each other than the threshold.
    >>> has_close([1.0, 2.0], 0.5)
    False
    """
    for i, a in enumerate(numbers):
        for j, b in enumerate(numbers):
            if i != j and abs(a - b) < threshold:
                return True
    return False
'''

RENAMED = '''
def near_pair(vals, limit):
    """Check whether any two numbers are closer to each other than the limit.
    >>> near_pair([3.0, 7.5], 0.1)
    True
    """
    for k, x in enumerate(vals):
        for m, y in enumerate(vals):
            if k != m and abs(x - y) < limit:
                return True
    return False
'''


def test_identifiers_and_literals_become_placeholders() -> None:
    lexed = lex("total = count + 1.5 * len(items)  # a comment\nname = 'x'\n")
    assert lexed.shape == [
        IDENT,
        "=",
        IDENT,
        "+",
        NUMBER,
        "*",
        "len",
        "(",
        IDENT,
        ")",
        "NL",
        IDENT,
        "=",
        STRING,
        "NL",
    ]


def test_a_renamed_copy_has_the_same_shape() -> None:
    assert lex(ORIGINAL).shape == lex(RENAMED).shape


def test_docstrings_are_taken_out_of_the_stream() -> None:
    lexed = lex(ORIGINAL)
    assert len(lexed.docstrings) == 1 and lexed.docstrings[0].strip().startswith("Check whether")
    assert STRING not in lexed.shape


def test_attribute_names_are_kept() -> None:
    assert lex("out.append(x)\n").shape == [IDENT, ".", "append", "(", IDENT, ")", "NL"]
    assert lex("out.append(x)\n", keep_attributes=False).shape[2] == IDENT


def test_examples_leave_the_docstring_prose() -> None:
    doc = "Sum the list.\n>>> total([1, 2])\n3\nf(2) == 4\nFor x = 5 the output should be 6.\nReturns an int."
    assert prose_lines(doc).split() == ["Sum", "the", "list.", "Returns", "an", "int."]


def test_changed_doctest_values_change_no_feature() -> None:
    original = {f for f in code_features(ORIGINAL) if not f.startswith("~")}
    renamed = {f for f in code_features(RENAMED) if not f.startswith("~")}
    assert original ^ renamed == {"thres", "limit"}  # prose features: stems cut to 5 (words-v2)


def test_shape_grams() -> None:
    assert shape_grams(["a", "b", "c"], 2) == ["a b", "b c"]
    assert shape_grams(["a"], 2) == []


def test_text_tokenize_refuses_goes_through_pygments() -> None:
    cut = 'def f(x):\n    """unterminated docstring\n    return x\n'
    lexed = lex(cut)  # tokenize raises on the open string; Pygments reads it
    assert "def" in lexed.shape
    javascript_like = "function add(a, b) { return a + b; }"
    assert IDENT in lex(javascript_like).shape

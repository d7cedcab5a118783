"""The command line's process defaults are set before numpy and pydantic load, and a user's own
setting wins (``contam_guard.cli.process``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from contam_guard.cli.process import DEFAULTS

PROBE = (
    "import json, os, sys; import contam_guard.cli; names = list(sys.modules); "
    "print(json.dumps({'order': [names.index(m) for m in "
    "('contam_guard.cli.process', 'numpy', 'pydantic')], "
    "'env': {k: os.environ.get(k) for k in sys.argv[1:]}}))"
)


def probe(env: dict[str, str]) -> dict[str, Any]:
    argv = [sys.executable, "-c", PROBE, *sorted(DEFAULTS)]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout))


def test_the_defaults_are_set_before_numpy_and_pydantic_are_imported() -> None:
    env = {k: v for k, v in os.environ.items() if k not in DEFAULTS}
    got = probe(env)
    process, numpy, pydantic = got["order"]
    assert process < numpy and process < pydantic
    assert got["env"] == DEFAULTS


@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_a_value_the_user_set_wins(name: str) -> None:
    env = {**{k: v for k, v in os.environ.items() if k not in DEFAULTS}, name: "4"}
    assert probe(env)["env"] == {**DEFAULTS, name: "4"}

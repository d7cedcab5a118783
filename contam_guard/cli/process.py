"""Defaults of the command line's process, set before numpy and pydantic are imported.

``contam_guard.cli`` imports this module before anything that loads them (its name sorts first
among the package's imports there). Each is a default: a value the user set wins.

- ``OPENBLAS_NUM_THREADS=1``: numpy's OpenBLAS starts a thread per core when numpy is imported,
  a good part of the CPU time of a commit hook's start; contam-guard does no linear algebra.
- ``PYDANTIC_DISABLE_PLUGINS=__all__``: pydantic looks for plugins among every installed
  package's entry points when the first model is built; the settings and manifest models are
  contam-guard's own, and no plugin has business with them.
"""

from __future__ import annotations

import os

DEFAULTS = {"OPENBLAS_NUM_THREADS": "1", "PYDANTIC_DISABLE_PLUGINS": "__all__"}

for _name, _value in DEFAULTS.items():
    os.environ.setdefault(_name, _value)

"""Defaults of the command line's process, set before numpy and pydantic are imported.

``contam_guard.cli`` imports this module before anything that loads them (its name sorts first
among the package's imports there). Each is a default: a value the user set wins.

- ``OPENBLAS_NUM_THREADS=1``: numpy's OpenBLAS starts a thread per core when numpy is imported,
  a good part of the CPU time of a commit hook's start; contam-guard does no linear algebra.
- ``PYDANTIC_DISABLE_PLUGINS=__all__``: pydantic looks for plugins among every installed
  package's entry points when the first model is built; the settings and manifest models are
  contam-guard's own, and no plugin has business with them.

And the garbage collector's youngest generation is collected every 100,000 new objects, not
every 700: the imports alone leave some 50,000 that live to the end, and the default walked
them again and again: 127 collections (one full) took 52 ms of a one-record scan that takes
0.32 s, 321 collections 160 ms of a scan of 98 MB; now none and one. Cycles of garbage are still
collected, in larger steps. The command line's process only: a program that imports
contam_guard as a library keeps its own settings.
"""

from __future__ import annotations

import gc
import os

YOUNG_OBJECTS = 100_000
"""New objects between two collections of the youngest generation (Python's default: 700)."""

DEFAULTS = {"OPENBLAS_NUM_THREADS": "1", "PYDANTIC_DISABLE_PLUGINS": "__all__"}

for _name, _value in DEFAULTS.items():
    os.environ.setdefault(_name, _value)

_, _older, _oldest = gc.get_threshold()
gc.set_threshold(YOUNG_OBJECTS, _older, _oldest)

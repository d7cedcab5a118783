"""Each peer in its own virtualenv under a cache folder outside the repo, made on first use.

The cache is ``$CONTAM_GUARD_BENCH_CACHE`` or ``~/.cache/contam-guard-bench``; each peer gets
``<cache>/<peer>/`` with a ``.installed`` stamp holding what was installed. A venv whose stamp
differs from the wanted interpreter and requirements is rebuilt; delete the folder to force it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a measured child: this one, as a user's shell would have it.

    ``PYTHONDONTWRITEBYTECODE`` is dropped: with it set, a package run from its source tree (an
    editable install, as here) is compiled from source by every process, a fifth of a second that
    no user of a pip-installed wheel pays (pip compiles the bytecode when it installs). Without
    it the first run writes the bytecode and every later run reads it, as a user's would.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, **extra}


def cache_root() -> Path:
    default = Path.home() / ".cache" / "contam-guard-bench"
    return Path(os.environ.get("CONTAM_GUARD_BENCH_CACHE", default))


def python_version(python: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run(
            [python, "-c", "import sys; print(*sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    major, minor = out.stdout.split()
    return int(major), int(minor)


def full_version(python: str) -> str:
    out = subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                         capture_output=True, text=True, check=False)  # fmt: skip
    return out.stdout.strip() or "?"


def find_python(minimum: tuple[int, int]) -> str | None:
    """An interpreter of at least ``minimum``: this one, one on PATH, or one from pyenv."""
    if sys.version_info[:2] >= minimum:
        return sys.executable
    candidates: list[str] = []
    for minor in range(minimum[1], minimum[1] + 4):
        found = shutil.which(f"python{minimum[0]}.{minor}")
        if found:
            candidates.append(found)
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    if pyenv.is_dir():
        candidates += [str(p / "bin" / "python3") for p in sorted(pyenv.iterdir())]
    versions = [(v, c) for c in candidates if (v := python_version(c)) is not None and v >= minimum]
    return min(versions)[1] if versions else None  # the oldest that will do: the one wheels exist for


@dataclass(frozen=True)
class Venv:
    root: Path

    @property
    def python(self) -> str:
        return str(self.root / "bin" / "python")

    def bin(self, name: str) -> str:
        return str(self.root / "bin" / name)


def ensure_venv(name: str, python: str, installs: list[list[str]]) -> Venv | str:
    """The venv ``<cache>/<name>`` with ``pip install <args>`` done for each of ``installs``.

    Returns the Venv, or a reason it could not be made (with the log's last lines).
    """
    root = cache_root() / name
    stamp = root / ".installed"
    wanted = json.dumps({"python": python_version(python), "installs": installs}, sort_keys=True)
    if stamp.is_file() and stamp.read_text() == wanted:
        return Venv(root)
    shutil.rmtree(root, ignore_errors=True)
    root.parent.mkdir(parents=True, exist_ok=True)
    log = root.parent / f"{name}.install.log"
    print(f"installing {name} into {root} (first run; log: {log})", file=sys.stderr, flush=True)
    venv = Venv(root)
    commands = [[python, "-m", "venv", str(root)]]
    commands += [[venv.python, "-m", "pip", "install", "--quiet", *args] for args in installs]
    with log.open("w") as out:
        for command in commands:
            out.write(f"$ {' '.join(command)}\n")
            out.flush()
            code = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False).returncode
            if code != 0:
                lines = [
                    line
                    for line in log.read_text(errors="replace").splitlines()
                    if line.strip() and not line.startswith("WARNING: Location")
                ]
                shutil.rmtree(root, ignore_errors=True)
                return f"install failed ({' '.join(command[3:]) or 'venv'}): {' | '.join(lines[-2:])[-200:]}"
    stamp.write_text(wanted)
    return venv

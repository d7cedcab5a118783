"""Lines of code per top-level part of the package, at two commits (or a commit and the tree).

    python -m benchmarks.loc BEFORE [AFTER]     # AFTER: the working tree when left out

A part is a top-level package (``core/``, ``io/``, ...) or a module at the package root
(``config.py``); lines are those of the ``.py`` files read from git (``git show``), blank lines
and comment-only lines left out. Parts that exist at only one side show a dash at the other.
"""

from __future__ import annotations

import argparse
import subprocess
from collections import Counter
from pathlib import Path

PACKAGE = "contam_guard"
REPO = Path(__file__).resolve().parents[1]


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True).stdout


def _code_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))


def _part(path: str) -> str:
    inner = path[len(PACKAGE) + 1 :]
    return inner.split("/", 1)[0] + "/" if "/" in inner else inner


def count(commit: str | None) -> Counter[str]:
    """Code lines per part at ``commit`` (None: the working tree)."""
    if commit is None:
        files = [str(p.relative_to(REPO)) for p in (REPO / PACKAGE).rglob("*.py")]
        texts = ((f, (REPO / f).read_text(encoding="utf-8")) for f in files)
    else:
        files = [
            f for f in _git("ls-tree", "-r", "--name-only", commit, PACKAGE).splitlines() if f.endswith(".py")
        ]
        texts = ((f, _git("show", f"{commit}:{f}")) for f in files)
    lines: Counter[str] = Counter()
    for name, text in texts:
        lines[_part(name)] += _code_lines(text)
    return lines


def table(before: Counter[str], after: Counter[str], labels: tuple[str, str]) -> str:
    rows = [f"| part of `{PACKAGE}` | {labels[0]} | {labels[1]} |", "| --- | --- | --- |"]
    for part in sorted(set(before) | set(after), key=lambda p: (not p.endswith("/"), p)):
        cells = [f"{side[part]:,}" if part in side else "—" for side in (before, after)]
        rows.append(f"| `{part}` | {cells[0]} | {cells[1]} |")
    rows.append(f"| **total** | {sum(before.values()):,} | {sum(after.values()):,} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("before", help="a commit")
    parser.add_argument("after", nargs="?", help="a commit (default: the working tree)")
    args = parser.parse_args(argv)
    labels = (args.before, args.after or "working tree")
    print(table(count(args.before), count(args.after), labels))


if __name__ == "__main__":
    main()

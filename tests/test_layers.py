"""The package's layers hold: computed from the code's own imports (``ast``), every import of
every module, function-local and ``TYPE_CHECKING`` ones included.

- No import circles between modules.
- An import only points down ``LAYERS`` (a layer may import its own and lower layers): the
  command line drives the engines, the engines drive the library, the library never reaches up.
- The package root holds only the public face and a few modules (``ROOT_MODULES``).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from tests.helpers import REPO

PACKAGE = REPO / "contam_guard"
LAYERS: list[tuple[str, ...]] = [
    ("contam_guard.errors", "contam_guard.version"),
    ("contam_guard.core.spec",),
    ("contam_guard.io",),
    ("contam_guard.core",),
    ("contam_guard.report",),
    (
        "contam_guard.search",
        "contam_guard.probe",
        "contam_guard.impact",
        "contam_guard.guard",
        "contam_guard.catalogue",
    ),
    ("contam_guard.engines",),
    ("contam_guard.cli", "contam_guard.__main__", "contam_guard"),
]
"""Lowest first: the spec (normalisation, hashing, the kernels' loader) under the readers and the
manifest on disk, those under the scanning library, the reporters, the other jobs, the engines
and the command line. ``contam_guard`` itself (the public face) loads its names lazily from below."""
ROOT_MODULES = {"__init__.py", "__main__.py", "errors.py", "version.py"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """Every contam_guard module ``path`` imports, anywhere in it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module_name(path).rsplit(".", 0 if path.name == "__init__.py" else 1)[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")
                base = ".".join(parent[: len(parent) - node.level + 1] + ([base] if base else []))
            # the names imported: a submodule of ``base``, or a name defined in it (``graph``
            # falls back from the first to the second)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return {name for name in found if name == "contam_guard" or name.startswith("contam_guard.")}


def graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        for imported in imports_of(path):
            # ``from contam_guard.x import y``: y may be a name in x, or the module x.y
            target = imported
            while target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]
            if target != name and target in modules:
                edges[name].add(target)
    return edges


def layer_of(module: str) -> int:
    best, depth = len(LAYERS) - 1, -1
    for number, layer in enumerate(LAYERS):
        for prefix in layer:
            if (module == prefix or module.startswith(prefix + ".")) and prefix.count(".") > depth:
                best, depth = number, prefix.count(".")
    return best


def test_no_import_circles() -> None:
    edges = graph()
    seen: dict[str, int] = {}
    circles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        seen[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if seen.get(nxt) == 1:
                circles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in seen:
                visit(nxt, [*path, nxt])
        seen[node] = 2

    for start in sorted(edges):
        if start not in seen:
            visit(start, [start])
    assert not circles, "\n".join(" -> ".join(c) for c in circles[:20])


def test_imports_point_down_the_layers() -> None:
    upward = [
        f"{source} -> {target}"
        for source, targets in sorted(graph().items())
        for target in sorted(targets)
        if source != "contam_guard" and layer_of(target) > layer_of(source)
    ]
    assert not upward, "\n".join(upward)


def test_the_root_holds_only_the_public_face() -> None:
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.name not in ROOT_MODULES)
    assert not loose, loose

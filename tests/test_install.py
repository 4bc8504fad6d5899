"""Install truth: what ``pip install .`` (no extras) brings is enough to run ra.

The dev environment has more than a plain install (the bench and semantic extras, for
one), so this test holds the source to its declared dependencies: every third-party module
the package imports is one that ``pyproject.toml`` names. ``tests/smoke_install.sh`` (run
by ``make test``) checks the real thing in a clean virtual environment.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Extras whose modules ra imports only inside the functions that use them.
DEFERRED_EXTRAS = ("semantic", "semantic-onnx")


def _imports(tree: ast.AST, deferred: bool = False):
    """Yield (module, deferred) for every absolute import; deferred ones sit in a function."""
    for node in ast.iter_child_nodes(tree):
        inner = deferred or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        if isinstance(node, ast.Import):
            yield from ((a.name, deferred) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module, deferred
        yield from _imports(node, inner)


def _imported_roots() -> dict[str, set[tuple[str, bool]]]:
    roots: dict[str, set[tuple[str, bool]]] = {}
    for path in (REPO / "src" / "ra").rglob("*.py"):
        for name, deferred in _imports(ast.parse(path.read_text())):
            roots.setdefault(name.split(".")[0], set()).add((path.name, deferred))
    return roots


def _names(deps: list[str]) -> set[str]:
    return {re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0].lower().replace("_", "-")
            for d in deps}


def _declared() -> tuple[set[str], set[str]]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    optional = set().union(*(_names(extras[e]) for e in DEFERRED_EXTRAS))
    return _names(project["dependencies"]), optional


def test_every_imported_module_is_a_declared_dependency():
    """Base dependencies anywhere; the semantic extras' modules only inside functions,
    so importing ra never needs them (tests/test_semantic.py runs the no-extra path)."""
    dists = packages_distributions()
    declared, optional = _declared()
    missing = {}
    for root, uses in _imported_roots().items():
        if root in sys.stdlib_module_names or root == "ra":
            continue
        names = {d.lower().replace("_", "-") for d in dists.get(root, [root])}
        # torch and onnxruntime arrive with the extras' packages, not named by them.
        extra = names & optional or root in {"torch", "onnxruntime"}
        for file, deferred in uses:
            if not (names & declared or (extra and deferred)):
                missing.setdefault(root, set()).add(file)
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"

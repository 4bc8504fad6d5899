"""Install truth: what ``pip install .`` (no extras) brings is enough to run ra.

The dev environment has more than a plain install (NumPy comes with rank-bm25, for one),
so these tests hold the source to its declared dependencies: every third-party module the
package imports is one that ``pyproject.toml`` names, and an update runs with NumPy
unimportable. ``tests/smoke_install.sh`` (run by ``make test``) checks the real thing in a
clean virtual environment.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Imported only under ``contextlib.suppress(ImportError)``: used when present.
OPTIONAL = {"numpy"}


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
        if root in sys.stdlib_module_names or root == "ra" or root in OPTIONAL:
            continue
        names = {d.lower().replace("_", "-") for d in dists.get(root, [root])}
        # torch and onnxruntime arrive with the extras' packages, not named by them.
        extra = names & optional or root in {"torch", "onnxruntime"}
        for file, deferred in uses:
            if not (names & declared or (extra and deferred)):
                missing.setdefault(root, set()).add(file)
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"


def test_an_incremental_update_runs_without_numpy(tmp_path):
    """pyarrow works without NumPy, and so must ra: ``to_numpy`` raised ImportError in
    every update after an edit when NumPy was not installed."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(3):
        (docs / f"n{i}.md").write_text(f"# Note {i}\n\nalpha beta note{i}\n")
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./docs"\n')
    script = textwrap.dedent("""
        import sys
        sys.modules["numpy"] = None  # import numpy raises ImportError
        from pathlib import Path
        from ra.cli.app import main
        assert main(["update"]) == 0
        Path("docs/n1.md").write_text("# Note 1\\n\\ngamma delta fresh\\n")
        Path("docs/n3.md").write_text("# Note 3\\n\\nalpha epsilon\\n")
        code = main(["search", "gamma", "--list"])
        assert code == 0, code
        assert main(["search", "alpha", "--list"]) == 0
        assert "numpy" not in sys.modules or sys.modules["numpy"] is None
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={"HOME": str(tmp_path), "RA_DAEMON": "0",
                                                       "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "n1.md" in proc.stdout and "n3.md" in proc.stdout

"""The architecture as the tree shows it: packages are layers, imports point down, no cycles.

Every module's imports are read with ``ast`` — module-level and deferred (inside
functions) alike, and ``__import__``/``importlib.import_module`` of a literal name — so
a lazy import is a dependency like any other. A module may import its own layer and the
layers below it (``LAYERS``, top first); an import cycle between modules is an error even
within one layer.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "ra"

#: Layers, top first. A name is a package of ``ra`` or a module at its root.
LAYERS = (
    {"cli", "serve"},
    {"agents"},
    {"query"},
    {"index"},
    {"pipeline"},
    {"store"},
    {"text"},
    {"config"},
    {"errors", ""},  # "" is ``ra`` itself (its __init__: the version)
)
MAX_ROOT_MODULES = 6


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imported_names(path: Path, name: str) -> set[str]:
    """Every dotted name ``path`` imports, resolved to absolute names."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Call) and _dynamic_import(node):
            found.add(node.args[0].value)
    return found


def _dynamic_import(node: ast.Call) -> bool:
    func = node.func
    named = ((isinstance(func, ast.Name) and func.id == "__import__")
             or (isinstance(func, ast.Attribute) and func.attr == "import_module"))
    return (named and bool(node.args) and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str))


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: {m for m in imported_names(path, name) if m in mods and m != name}
            for name, path in mods.items()}


def layer(module: str) -> int:
    top = module.split(".")[1] if "." in module else ""
    for rank, names in enumerate(LAYERS):
        if top in names:
            return rank
    raise AssertionError(f"{module} belongs to no layer: add its package to LAYERS")


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles():
    assert cycles(graph()) == []


def test_no_module_imports_a_layer_above_it():
    upward = [f"{src} (layer {layer(src)}) imports {dst} (layer {layer(dst)})"
              for src, targets in graph().items() for dst in sorted(targets)
              if layer(dst) < layer(src)]
    assert upward == []


def test_the_root_holds_few_modules():
    root = [p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]
    assert len(root) <= MAX_ROOT_MODULES, root


@pytest.mark.parametrize("init", sorted(PACKAGE.glob("*/__init__.py")),
                         ids=lambda p: p.parent.name)
def test_each_package_says_what_it_holds_and_may_import(init):
    doc = ast.get_docstring(ast.parse(init.read_text())) or ""
    assert "may import" in doc.lower(), f"{init}: say what the package may import"
    assert "TODO" not in doc


# --- the checks can fail -----------------------------------------------------------------

def test_a_cycle_is_found():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_deferred_and_dynamic_imports_count(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from ra.cli import app\n"
                      "__import__('ra.serve.mcp')\n"
                      "import importlib\nimportlib.import_module('ra.query.search')\n")
    names = imported_names(module, "ra.text.m")
    assert {"ra.cli.app", "ra.serve.mcp", "ra.query.search"} <= names


def test_layers_rank_the_surfaces_above_the_errors():
    assert layer("ra.cli.app") < layer("ra.query.search") < layer("ra.index.reader")
    assert layer("ra.index.reader") < layer("ra.pipeline.run") < layer("ra.config.settings")
    assert layer("ra.errors") == len(LAYERS) - 1

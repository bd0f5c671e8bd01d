"""The import graph of the project's packages, read from the source (every ``import`` and
``from … import`` anywhere in a module, lazy imports inside functions included, plus
``importlib.import_module("…")`` with a literal name): no package imports a layer above it and no two
modules import each other, directly or through others."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Which packages each package may import. ``runtime`` serves the layers above it and imports none
# of them; ``cli`` is the application edge on top of everything.
ALLOWED: dict[str, frozenset[str]] = {
    "schemas": frozenset({"schemas"}),
    "policies": frozenset({"schemas", "policies"}),
    "runtime": frozenset({"schemas", "policies", "runtime"}),
    "nodes": frozenset({"schemas", "policies", "runtime", "nodes"}),
    "graphs": frozenset({"schemas", "policies", "runtime", "nodes", "graphs"}),
    "evals": frozenset({"schemas", "policies", "runtime", "nodes", "graphs", "evals"}),
    "benchmarks": frozenset({"schemas", "policies", "runtime", "nodes", "graphs", "benchmarks"}),
    "cli": frozenset({"schemas", "policies", "runtime", "nodes", "graphs", "evals", "benchmarks", "cli"}),
}
PACKAGES = frozenset(ALLOWED)


def module_name(path: Path) -> str:
    """The import name of a project file: every top-level folder is a package of ``reins``."""
    parts = ["reins", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> str:
    """``reins.runtime.llm`` -> ``runtime``: the folder a module lives in."""
    return module.split(".")[1]


def project_modules() -> dict[str, Path]:
    return {module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))}


def imported_names(module: str, path: Path) -> set[str]:
    """Every module name this module's source imports (absolute, relative, lazy or via importlib)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names.add(target)
            # ``from package import submodule`` imports the submodule.
            names.update(f"{target}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.add(node.args[0].value)
    return names


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {
        module: {name for name in imported_names(module, path) if name in modules and name != module}
        for module, path in modules.items()
    }


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if layer(target) not in ALLOWED[layer(module)]
    )


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
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

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_project_packages_are_all_checked():
    modules = project_modules()
    assert {layer(name) for name in modules} == PACKAGES
    assert {"reins.runtime.contracts", "reins.cli", "reins.cli.diagrams", "reins.evals.contracts", "reins.runtime.tools.toolbox"} <= set(modules)


def test_no_package_imports_a_layer_above_it():
    assert upward_imports(import_graph()) == []


def test_no_import_cycles_between_modules():
    assert cycles(import_graph()) == []


@pytest.mark.parametrize(
    ("graph", "upward", "cyclic"),
    [
        ({"reins.runtime.a": {"reins.runtime.b"}, "reins.runtime.b": set()}, [], []),
        ({"reins.runtime.a": {"reins.graphs.x"}, "reins.graphs.x": set()}, ["reins.runtime.a -> reins.graphs.x"], []),
        ({"reins.policies.a": {"reins.nodes.x"}, "reins.nodes.x": {"reins.policies.a"}}, ["reins.policies.a -> reins.nodes.x"], [["reins.nodes.x", "reins.policies.a"]]),
        (
            {"reins.runtime.a": {"reins.runtime.b"}, "reins.runtime.b": {"reins.runtime.c"}, "reins.runtime.c": {"reins.runtime.a"}},
            [],
            [["reins.runtime.a", "reins.runtime.b", "reins.runtime.c"]],
        ),
        ({"reins.cli": {"reins.graphs.x", "reins.benchmarks.run"}, "reins.graphs.x": set(), "reins.benchmarks.run": set()}, [], []),
    ],
)
def test_the_checks_catch_upward_imports_and_cycles(graph, upward, cyclic):
    assert upward_imports(graph) == upward
    assert cycles(graph) == cyclic


def test_lazy_relative_and_importlib_imports_are_read(tmp_path):
    source = tmp_path / "mod.py"
    source.write_text(
        "import importlib\n"
        "def later():\n"
        "    from reins.graphs.delivery_chain import build_graph\n"
        "    from . import sibling\n"
        "    return importlib.import_module('reins.evals.run')\n"
    )
    names = imported_names("reins.runtime.mod", source)
    assert {"reins.graphs.delivery_chain", "reins.runtime.sibling", "reins.evals.run"} <= names

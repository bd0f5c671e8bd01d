"""``reins`` is the public API: every name in ``reins.__all__`` says what it is and shows one call, and
``help(reins)`` lists them all. The README, the docs and the notebooks import nothing else of Reins."""

from __future__ import annotations

import ast
import inspect
import pydoc
import re
from pathlib import Path

import nbformat
import pytest

import reins

ROOT = Path(__file__).resolve().parents[1]
SOURCE_EDIT = "# at the end of "  # a block that shows an addition to Reins' own source, not a user's code


def _constant(value: object) -> bool:
    return not (inspect.isclass(value) or inspect.isroutine(value))


@pytest.mark.parametrize("name", reins.__all__)
def test_each_public_name_has_a_docstring_that_shows_one_call(name):
    value = getattr(reins, name)
    if _constant(value):  # an instance: documented, with a call, in the package's own docstring
        (line,) = [line for line in reins.__doc__.splitlines() if line.startswith(f"- ``{name}``:")]
        following = reins.__doc__[reins.__doc__.index(line):].split("\n- ")[0]
        assert "(" in following, f"{name}: show one call"
        return
    own = value.__dict__.get("__doc__") if inspect.isclass(value) else value.__doc__
    assert own and not own.startswith(f"{value.__name__}("), f"{name} has no docstring of its own"
    assert re.search(rf"\b{name}[.(]|\({name}\)", own), f"{name}'s docstring shows no call of {name}"


def test_help_lists_every_public_name():
    text = pydoc.render_doc(reins, renderer=pydoc.plaintext)
    for name in reins.__all__:
        assert name in text


def _imports_of_reins(code: str) -> set[str]:
    """The names a snippet imports from Reins, as ``module:name`` (``module`` alone for ``import x``)."""
    found = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "reins":
            found |= {f"{node.module}:{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "reins"}
    return found


def _python_blocks(path: Path) -> list[str]:
    if path.suffix == ".ipynb":
        return [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    blocks = re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S)
    return [block for block in blocks if not block.startswith(SOURCE_EDIT)]


DOCUMENTS = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "notebooks").glob("*.ipynb")])


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_documentation_imports_only_the_public_api(path):
    public = {f"reins:{name}" for name in reins.__all__} | {"reins"}
    used = set().union(*map(_imports_of_reins, _python_blocks(path)))
    assert used - public == set(), f"{path.name} imports internal names; export them in reins/__init__.py or use a public one"


def test_the_import_check_catches_a_deep_import():
    assert _imports_of_reins("from reins.runtime.llm.models import ModelSet\nimport reins.graphs") == {
        "reins.runtime.llm.models:ModelSet", "reins.graphs"}

"""``policies/`` stays pure and walkable: only packages at its top level, each opening with a
docstring that names its concern, and no import of I/O, LangGraph, a model client or a layer above."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

POLICIES = Path(__file__).resolve().parents[2] / "policies"

# Top-level modules a policy may import: the project's pure layers, pure parts of the standard library,
# and the few pure libraries the rules are written with.
PURE = frozenset({
    "__future__", "annotated_types", "ast", "base64", "codecs", "collections", "copy", "dataclasses",
    "datetime", "decimal", "difflib", "email", "enum", "fnmatch", "fractions", "functools", "hashlib",
    "html", "ipaddress", "itertools", "json", "math", "operator", "pydantic", "re", "snowballstemmer",
    "string", "textwrap", "types", "typing", "unicodedata", "urllib", "yaml",
})
PROJECT_PURE = ("reins.policies", "reins.schemas")


def impure_imports(source: str) -> list[str]:
    """Every import in ``source`` (lazy ones too) that a pure policy may not make."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        else:
            continue
        for name in names:
            if name.startswith("reins"):
                if not name.startswith(PROJECT_PURE):
                    found.append(name)
            elif name.split(".")[0] not in PURE:
                found.append(name)
    return found


@pytest.mark.parametrize(
    ("source", "impure"),
    [
        ("import re\nfrom collections.abc import Mapping\n", []),
        ("from reins.policies.text.redaction import redact\nfrom reins.schemas.tools import X\n", []),
        ("import os\n", ["os"]),
        ("def f():\n    import subprocess\n", ["subprocess"]),
        ("from langgraph.types import interrupt\n", ["langgraph.types"]),
        ("from langchain_core.messages import AIMessage\n", ["langchain_core.messages"]),
        ("from reins.runtime.llm import models\n", ["reins.runtime.llm"]),
        ("from reins.nodes.assistant import executor\n", ["reins.nodes.assistant"]),
        ("from pathlib import Path\n", ["pathlib"]),
    ],
)
def test_the_purity_check_catches_what_it_should(source, impure):
    assert impure_imports(source) == impure


def test_policies_has_only_packages_at_its_top_level():
    modules = sorted(p.name for p in POLICIES.glob("*.py") if p.name != "__init__.py")
    assert modules == []
    packages = sorted(p.name for p in POLICIES.iterdir() if (p / "__init__.py").exists())
    assert {"assistant", "audit", "delivery", "models", "tasklist", "text", "tools", "verdict"} <= set(packages)


@pytest.mark.parametrize("package", sorted(p.name for p in POLICIES.iterdir() if (p / "__init__.py").exists()))
def test_every_package_opens_with_a_docstring_naming_its_concern(package):
    docstring = ast.get_docstring(ast.parse((POLICIES / package / "__init__.py").read_text()))
    assert docstring and len(docstring.split()) >= 8, package


@pytest.mark.parametrize("path", sorted(POLICIES.rglob("*.py")), ids=lambda p: str(p.relative_to(POLICIES)))
def test_no_policy_imports_io_langgraph_or_a_layer_above(path):
    assert impure_imports(path.read_text()) == []

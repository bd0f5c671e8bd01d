"""LangGraph's private node wrapper (``RunnableCallable``) is used in exactly one module,
``reins.runtime.execution.calls``: the day LangGraph moves or renames it, the first test here fails (not a graph in
some user's notebook), and the second keeps a second import of it from creeping in."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import reins.runtime.execution.calls as calls

ROOT = Path(__file__).resolve().parents[2]
PRIVATE_MODULE = "langgraph._internal._runnable"
HOME = "runtime/execution/calls.py"  # the one module allowed to import it
PACKAGES = ("schemas", "policies", "runtime", "nodes", "graphs", "evals", "benchmarks", "cli")


def test_the_private_node_wrapper_is_where_runtime_calls_imports_it_from():
    wrapper = importlib.import_module(PRIVATE_MODULE).RunnableCallable
    assert calls.RunnableCallable is wrapper

    def logic(state):
        yield from ()
        return {"seen": state["n"]}

    node = calls.node(logic)
    assert isinstance(node, wrapper)
    assert node.invoke({"n": 3}) == {"seen": 3}  # LangGraph's wrapper still runs our sync function


def _uses_of_the_wrapper(path: Path) -> list[str]:
    """Imports of ``RunnableCallable`` (from wherever) and names or attributes that reach it."""
    found = []
    for item in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(item, ast.ImportFrom):
            found += [f"{item.module}.{alias.name}" for alias in item.names if alias.name == "RunnableCallable"]
        elif isinstance(item, ast.Import):
            found += [alias.name for alias in item.names if alias.name.startswith(PRIVATE_MODULE)]
        elif isinstance(item, ast.Name) and item.id == "RunnableCallable":
            found.append(item.id)
        elif isinstance(item, ast.Attribute) and item.attr == "RunnableCallable":
            found.append(item.attr)
    return found


def test_no_other_module_uses_the_private_wrapper():
    users = {
        str(path.relative_to(ROOT)): names
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if (names := _uses_of_the_wrapper(path))
    }
    assert set(users) == {HOME}, users
    assert f"{PRIVATE_MODULE}.RunnableCallable" in users[HOME]


# Every private LangGraph or LangChain name the project reads, and the one module allowed to read it.
LANGCHAIN_PRIVATE = "runtime/llm/langchain_private.py"
PRIVATE_NAMES = {
    ("langgraph._internal._runnable", "RunnableCallable"): "runtime/execution/calls.py",
    ("langgraph._internal._constants", "CONFIG_KEY_CHECKPOINTER"): "runtime/execution/user_input.py",
    ("langgraph._internal._constants", "CONFIG_KEY_CHECKPOINT_MAP"): "runtime/execution/user_input.py",
    ("langchain.chat_models.base", "_BUILTIN_PROVIDERS"): LANGCHAIN_PRIVATE,
    ("langchain_core.tracers._streaming", "_StreamingCallbackHandler"): LANGCHAIN_PRIVATE,
    ("langchain_core.runnables.config", "var_child_runnable_config"): LANGCHAIN_PRIVATE,
}
# The same for LangGraph's private configuration keys, written as strings: the key, and where.
PRIVATE_KEYS = {"__pregel_runtime": "runtime/tools/runner.py"}


def _is_private(module: str, name: str) -> bool:
    """A name LangGraph or LangChain does not publish: from a private module, underscored, or listed."""
    ours = module.split(".")[0] in ("langgraph", "langchain", "langchain_core")
    return ours and ("._" in f".{module}" or name.startswith("_") or (module, name) in PRIVATE_NAMES)


def _private_imports(path: Path) -> list[tuple[str, str]]:
    return [
        (item.module, alias.name)
        for item in ast.walk(ast.parse(path.read_text(), filename=str(path)))
        if isinstance(item, ast.ImportFrom) and item.module
        for alias in item.names
        if _is_private(item.module, alias.name)
    ]


def _private_keys(path: Path) -> list[str]:
    """String constants shaped like LangGraph's private config keys (``__pregel_…``)."""
    return [item.value for item in ast.walk(ast.parse(path.read_text(), filename=str(path)))
            if isinstance(item, ast.Constant) and isinstance(item.value, str) and item.value.startswith("__pregel_")]


def test_every_private_langgraph_name_still_resolves_and_is_read_in_its_one_module():
    for (module, name), home in PRIVATE_NAMES.items():
        assert hasattr(importlib.import_module(module), name), f"LangGraph moved {module}.{name} (read by {home})"
    found = {
        (module, name, str(path.relative_to(ROOT)))
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        for module, name in _private_imports(path)
    }
    assert found == {(module, name, home) for (module, name), home in PRIVATE_NAMES.items()}


def test_every_private_string_key_is_langgraphs_and_written_only_in_its_one_module():
    from langgraph._internal import _constants

    values = {value for value in vars(_constants).values() if isinstance(value, str)}
    assert set(PRIVATE_KEYS) <= values, f"LangGraph renamed {sorted(set(PRIVATE_KEYS) - values)}"
    found = {
        (key, str(path.relative_to(ROOT)))
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        for key in _private_keys(path)
    }
    assert found <= set(PRIVATE_KEYS.items()), found


def test_langgraph_server_stamps_its_version_in_a_runs_metadata():
    """``user_input.served_run`` tells a server's run by this key; the day the server stops setting it,
    this fails (a refused resume under Studio would mark the thread "error" again)."""
    import importlib.util

    package = importlib.util.find_spec("langgraph_api")  # importing its modules needs a server's settings
    source = (Path(package.submodule_search_locations[0]) / "stream.py").read_text(encoding="utf-8")
    assert 'config["metadata"]["langgraph_api_version"]' in source

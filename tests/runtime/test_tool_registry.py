"""Tool registry: unique well-formed names, scopes that isolate, sub-agents that cannot call tools."""

from __future__ import annotations

from dataclasses import replace

import pytest
from pydantic import BaseModel

from reins.runtime.tools.registry import (
    RegisteredTool,
    RegistryError,
    SubagentToolDefinition,
    ToolRegistry,
)
from reins.runtime.tools.toolbox import default_registry

CHAT = "chat"
MANAGER = "delivery-chain-manager"


class NoteArgs(BaseModel):
    note: str = ""


class ExpressionArgs(BaseModel):
    expression: str


def _subagent(name: str, **changes) -> RegisteredTool:
    definition = SubagentToolDefinition(
        id=name,
        role_instruction="write the plan",
        input_artifact_kinds=("requirement",),
        output_artifact_kind="plan",
        non_goals=("do not review",),
        scopes=(MANAGER,),
    )
    return RegisteredTool(
        name=name,
        description="plan sub-agent",
        args_schema=NoteArgs,
        scopes=frozenset({MANAGER}),
        subagent=replace(definition, **changes),
    )


def _chat_tool(name: str = "calculator", scopes: frozenset[str] = frozenset({CHAT})) -> RegisteredTool:
    return RegisteredTool(
        name=name,
        description="evaluate arithmetic",
        args_schema=ExpressionArgs,
        scopes=scopes,
        func=lambda expression: str(len(expression)),
    )


@pytest.fixture
def registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(_chat_tool())
    registry.register(_subagent("plan-subagent"))
    return registry


@pytest.mark.parametrize(
    "name", ["calculator", "http_get", "plan-subagent", "read_doc2", "a"], ids=lambda name: name
)
def test_snake_and_kebab_names_are_accepted(name):
    assert ToolRegistry().register(_chat_tool(name)).name == name


@pytest.mark.parametrize(
    "name",
    ["", "Calculator", "http get", "http__get", "-lead", "trail_", "2fast", "plan.subagent", "mixed-style_name", "é"],
    ids=["empty", "capital", "space", "double-underscore", "leading-dash", "trailing-underscore", "digit-first", "dot",
         "mixed", "non-ascii"],
)
def test_bad_names_raise(name):
    with pytest.raises(RegistryError, match="snake_case or kebab-case"):
        ToolRegistry().register(_chat_tool(name))


def test_duplicate_names_raise_even_across_scopes(registry):
    with pytest.raises(RegistryError, match="already registered"):
        registry.register(_chat_tool("calculator", scopes=frozenset({"tasklist-agent"})))
    assert registry.for_scope("tasklist-agent").names == ()


def test_a_tool_needs_a_scope():
    with pytest.raises(RegistryError, match="no scope"):
        ToolRegistry().register(_chat_tool(scopes=frozenset()))


def test_scopes_isolate(registry):
    chat, manager = registry.for_scope(CHAT), registry.for_scope(MANAGER)
    assert chat.names == ("calculator",)
    assert manager.names == ("plan-subagent",)
    assert chat.get("plan-subagent") is None
    assert manager.get("calculator") is None
    assert registry.for_scope("unknown").names == ()
    assert registry.scopes() == {CHAT, MANAGER}


def test_a_tool_in_two_scopes_is_visible_in_both():
    registry = ToolRegistry()
    registry.register(_chat_tool("read_doc", scopes=frozenset({CHAT, "tasklist-agent"})))
    assert registry.for_scope(CHAT).names == registry.for_scope("tasklist-agent").names == ("read_doc",)


def test_subagent_with_allowed_tools_raises():
    with pytest.raises(RegistryError, match="no nested delegation"):
        ToolRegistry().register(_subagent("plan-subagent", allowed_tools=("calculator",)))


@pytest.mark.parametrize(
    "changes", [{"id": "task-subagent"}, {"scopes": (CHAT,)}, {"scopes": (MANAGER, CHAT)}], ids=["id", "scope", "extra-scope"]
)
def test_subagent_definition_must_match_its_tool(changes):
    with pytest.raises(RegistryError, match="does not match its definition"):
        ToolRegistry().register(_subagent("plan-subagent", **changes))


def test_langchain_tools_carry_name_description_and_schema(registry):
    (tool,) = registry.for_scope(CHAT).langchain_tools()
    assert (tool.name, tool.description) == ("calculator", "evaluate arithmetic")
    assert tool.invoke({"expression": "1+2"}) == "3"
    assert set(tool.args) == {"expression"}


def test_subagent_tools_cannot_be_called_directly(registry):
    (tool,) = registry.for_scope(MANAGER).langchain_tools()
    with pytest.raises(RuntimeError, match="executed by the graph"):
        tool.invoke({"note": "go"})


def test_scoped_tools_iterate_and_count(registry):
    scoped = registry.for_scope(CHAT)
    assert len(scoped) == 1
    assert [tool.name for tool in scoped] == ["calculator"]


def test_default_registry_keeps_chat_and_manager_apart():
    registry = default_registry()
    chat, manager = registry.for_scope(CHAT), registry.for_scope(MANAGER)
    assert chat.names and manager.names
    assert not set(chat.names) & set(manager.names)
    assert all(tool.subagent is None for tool in chat)  # chat never sees a sub-agent
    assert all(tool.subagent is not None for tool in manager)  # the manager sees only sub-agents
    assert len(manager) == 5

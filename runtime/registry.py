"""One registry for every tool, sub-agents included; ``for_scope`` is the only way a graph gets tools.

Chat never sees the manager's sub-agents and the manager sees only its five, because each graph
asks for exactly one scope.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel

# snake_case or kebab-case, not a mix of both.
_NAME = re.compile(r"^[a-z][a-z0-9]*(?:(?:_[a-z0-9]+)*|(?:-[a-z0-9]+)*)$")


class RegistryError(ValueError):
    """A tool definition is invalid or collides with one already registered."""


@dataclass(frozen=True)
class SubagentToolDefinition:
    """What a sub-agent is for: the manager reads this, the runtime enforces it."""

    id: str
    role_instruction: str
    input_artifact_kinds: tuple[str, ...]
    output_artifact_kind: str
    non_goals: tuple[str, ...]
    scopes: tuple[str, ...]
    allowed_tools: tuple[str, ...] = ()  # sub-agents call no tools: no nested delegation


@dataclass(frozen=True)
class RegisteredTool:
    name: str
    description: str
    args_schema: type[BaseModel]
    scopes: frozenset[str]
    func: Callable[..., Any] | None = None
    result_schema: type[BaseModel] | None = None
    subagent: SubagentToolDefinition | None = None

    def as_langchain_tool(self) -> BaseTool:
        """A LangChain tool for binding; sub-agents have no callable here — the graph runs them."""

        def _not_direct(**_: Any) -> Any:
            raise RuntimeError(f"{self.name} is executed by the graph, not called directly")

        return StructuredTool.from_function(
            func=self.func or _not_direct,
            name=self.name,
            description=self.description,
            args_schema=self.args_schema,
        )


@dataclass(frozen=True)
class ScopedTools:
    scope: str
    tools: tuple[RegisteredTool, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(tool.name for tool in self.tools)

    def get(self, name: str) -> RegisteredTool | None:
        return next((tool for tool in self.tools if tool.name == name), None)

    def langchain_tools(self) -> list[BaseTool]:
        return [tool.as_langchain_tool() for tool in self.tools]

    def __iter__(self) -> Iterator[RegisteredTool]:
        return iter(self.tools)

    def __len__(self) -> int:
        return len(self.tools)


@dataclass
class ToolRegistry:
    _tools: dict[str, RegisteredTool] = field(default_factory=dict)

    def register(self, tool: RegisteredTool) -> RegisteredTool:
        if not _NAME.match(tool.name):
            raise RegistryError(f"tool name {tool.name!r} must be snake_case or kebab-case")
        if tool.name in self._tools:
            raise RegistryError(f"tool {tool.name!r} is already registered")
        if not tool.scopes:
            raise RegistryError(f"tool {tool.name!r} has no scope")
        if tool.subagent is not None:
            if tool.subagent.allowed_tools:
                raise RegistryError(f"sub-agent {tool.name!r} may not call tools (no nested delegation)")
            # The definition the manager reads must describe this very tool, in the same scopes.
            if tool.subagent.id != tool.name or frozenset(tool.subagent.scopes) != tool.scopes:
                raise RegistryError(f"sub-agent {tool.name!r} does not match its definition's id and scopes")
        self._tools[tool.name] = tool
        return tool

    def for_scope(self, scope: str) -> ScopedTools:
        return ScopedTools(scope, tuple(t for t in self._tools.values() if scope in t.scopes))

    def scopes(self) -> set[str]:
        return {scope for tool in self._tools.values() for scope in tool.scopes}

"""One registry for every tool, sub-agents included; ``for_scope`` is the only way a graph gets tools.

Chat never sees the manager's sub-agents and the manager sees only its five, because each graph
asks for exactly one scope.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from reins.policies.tools.approval import Approval, approval_for, approval_note

if TYPE_CHECKING:  # LangChain loads only when a tool is bound or run: `reins chat --help` stays fast
    from langchain_core.tools import BaseTool

# snake_case or kebab-case, not a mix of both.
_NAME = re.compile(r"^[a-z][a-z0-9]*(?:(?:_[a-z0-9]+)*|(?:-[a-z0-9]+)*)$")
# What a provider accepts as a function name: MCP tools are offered as ``<server>__<tool>``.
OFFERED_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class RegistryError(ValueError):
    """A tool definition is invalid or collides with one already registered."""


@lru_cache(maxsize=512)
def _json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A model's JSON schema, built once: every step's prompt lists every tool's argument types
    (read only, never changed)."""
    return model.model_json_schema()


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
    """One tool, declared once: everything that offers, documents, checks or runs it reads this.

    ``read_only``: the call changes nothing (a lost connection may be retried); ``approval``: its
    one approval trait (``reins.policies.tools.approval``: ``run`` / ``ask`` / ``question``), derived from
    ``read_only`` when not declared — the only thing that decides whether a call pauses;
    ``aliases``: how prose refers to it (the answer check); ``help``: its line in ``/help`` and
    ``reins chat --help`` (the approval note is added from the trait); ``tool``: a ready LangChain
    tool (an MCP tool) used instead of ``func``,
    whose ``args_schema`` is then a JSON schema; ``server``: the MCP server it comes from;
    ``timeout_s``: the deadline of one call; ``trace_result``: the trace names what the call returned
    (e.g. the notes ``forget`` deleted), for tools whose result is the user's own data;
    ``sinks``: the arguments that direct an effect or carry data out (a recipient, an address, a URL,
    a path, a command, an amount) — the data-flow policy checks where their values came from;
    ``None`` (an MCP tool without a declaration) makes every argument a sink and egress; ``actions``: the
    words a request uses for what the tool does (default: the verb its name opens with); ``egress``:
    the sinks that send data out of the machine (a URL, host, query, header, recipient) — after
    untrusted content they need a destination the user named, read-only or not; ``free``: sinks the
    model may write itself (a body for a recipient the user named), checked for tainted values only.

    Example: ``RegisteredTool("fetch_page", "Fetch a web page", PageArgs, frozenset({"chat"}), func=fetch, read_only=True, sinks=("url",), egress=("url",))``
    """

    name: str
    description: str
    args_schema: type[BaseModel] | dict[str, Any]
    scopes: frozenset[str]
    func: Callable[..., Any] | None = None
    result_schema: type[BaseModel] | None = None
    subagent: SubagentToolDefinition | None = None
    read_only: bool = False
    aliases: tuple[str, ...] = ()
    help: str = ""
    approval: Approval | None = None
    tool: BaseTool | None = None
    server: str | None = None
    timeout_s: float = 30.0
    trace_result: bool = False
    sinks: tuple[str, ...] | None = None
    actions: tuple[str, ...] = ()
    egress: tuple[str, ...] = ()
    free: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.approval is None:
            object.__setattr__(self, "approval", approval_for(read_only=self.read_only))

    @property
    def trait(self) -> Approval:
        """The approval trait (declared or derived): what the executor, /help and doctor read."""
        return self.approval or approval_for(read_only=self.read_only)

    @property
    def asks_user(self) -> bool:
        """A question to the user: the graph answers it, nothing executes."""
        return self.trait == "question"

    @property
    def runnable(self) -> bool:
        """The runtime can execute it (a function or an MCP tool); ask_user and sub-agents are
        answered by their graph."""
        return self.func is not None or self.tool is not None

    @property
    def parameters(self) -> tuple[str, ...]:
        schema = self.args_schema
        if isinstance(schema, dict):
            return tuple(schema.get("properties") or {})
        return tuple(schema.model_fields)

    @property
    def argument_types(self) -> dict[str, Any]:
        """The required parameters and each parameter's JSON-schema type (``string`` when unsaid)."""
        schema = self.args_schema if isinstance(self.args_schema, dict) else _json_schema(self.args_schema)
        properties = schema.get("properties") or {}
        types = {name: spec.get("type") if isinstance(spec.get("type"), str) else "string"
                 for name, spec in properties.items() if isinstance(spec, dict)}
        return {"required": [name for name in schema.get("required") or [] if name in properties], "types": types}

    def as_langchain_tool(self) -> BaseTool:
        """A LangChain tool for binding; sub-agents have no callable here — the graph runs them."""
        from langchain_core.tools import StructuredTool

        if self.tool is not None:
            return self.tool

        def _not_direct(**_: Any) -> Any:
            raise RuntimeError(f"{self.name} is executed by the graph, not called directly")

        def call(**kwargs: Any) -> Any:  # a plain function: LangChain inspects it (a callable object fails)
            return self.func(**kwargs)  # type: ignore[misc]

        return StructuredTool.from_function(
            func=call if self.func is not None else _not_direct,
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

    def aliases(self) -> dict[str, tuple[str, ...]]:
        """How prose names each tool (its name first), for the answer check."""
        return {tool.name: tuple(dict.fromkeys((tool.name, *tool.aliases))) for tool in self.tools}

    def help_lines(self) -> tuple[str, ...]:
        """One line per tool for ``/help`` and ``reins chat --help``: its declared help, or its
        name and the first sentence of its description."""
        return tuple((tool.help or f"{tool.name}  {tool.description.split('. ')[0][:100]}") + approval_note(tool.trait)
                     for tool in self.tools)

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
        if not (OFFERED_NAME if tool.server else _NAME).match(tool.name):
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

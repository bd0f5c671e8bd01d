"""The tools Reins ships, assembled above the registry so that ``runtime/tools/registry.py`` imports none
of its users (``chat_tools`` and ``subagents`` register into it; this module puts them together)."""

from __future__ import annotations

from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS, Reviewers
from reins.runtime.tools import chat_tools, memory_tools, skill_tools, subagents
from reins.runtime.tools.mcp_tools import McpSource, McpToolset, load_mcp_tools
from reins.runtime.tools.registry import ScopedTools, ToolRegistry
from reins.runtime.config.settings import Settings


def default_registry(reviewers: Reviewers = DEFAULT_REVIEWERS) -> ToolRegistry:
    """Every tool Reins ships, each in its scopes: the manager's sub-agents (one per reviewer of
    ``reviewers``), the chat tools and the skill and memory tools of the chat.

    Example: ``registry = default_registry(); registry.register(RegisteredTool(...)); build_assistant(registry=registry)``
    """
    registry = ToolRegistry()
    subagents.register(registry, reviewers)
    chat_tools.register(registry)
    skill_tools.register(registry)
    memory_tools.register(registry)
    return registry


def chat_servers(registry: ToolRegistry | None = None, mcp_config: McpSource = None, *, from_env: bool = True
                 ) -> tuple[ScopedTools, McpToolset]:
    """The registry's chat scope and the user's MCP servers as loaded (``mcp_config``, else
    ``REINS_MCP_CONFIG`` unless ``from_env`` is false): their tools, problems and notices."""
    tools = (registry or default_registry()).for_scope(chat_tools.CHAT_SCOPE)
    source = mcp_config if mcp_config is not None or not from_env else Settings.from_env().mcp_config
    return tools, load_mcp_tools(source, scope=chat_tools.CHAT_SCOPE, reserved=tools.names)


def chat_toolset(registry: ToolRegistry | None = None, mcp_config: McpSource = None, *, from_env: bool = True
                 ) -> ScopedTools:
    """The assistant's tools: the registry's chat scope, plus the user's MCP tools (``chat_servers``).
    Nothing else ever loads MCP tools: they exist in chat only."""
    tools, extra = chat_servers(registry, mcp_config, from_env=from_env)
    return ScopedTools(tools.scope, (*tools.tools, *extra.tools))

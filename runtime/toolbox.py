"""The tools Reins ships, assembled above the registry so that ``runtime/registry.py`` imports none
of its users (``chat_tools`` and ``subagents`` register into it; this module puts them together)."""

from __future__ import annotations

from runtime import chat_tools, memory_tools, skill_tools, subagents
from runtime.registry import ToolRegistry


def default_registry() -> ToolRegistry:
    """Every tool Reins ships, each in its scopes: the manager's sub-agents, the chat, skill and memory tools."""
    registry = ToolRegistry()
    subagents.register(registry)
    chat_tools.register(registry)
    skill_tools.register(registry)
    memory_tools.register(registry)
    return registry

"""The tools Reins ships, assembled above the registry so that ``runtime/registry.py`` imports none
of its users (``chat_tools`` and ``subagents`` register into it; this module puts them together)."""

from __future__ import annotations

from policies.reviewers import DEFAULT_REVIEWERS, Reviewers
from runtime import chat_tools, subagents
from runtime.registry import ToolRegistry


def default_registry(reviewers: Reviewers = DEFAULT_REVIEWERS) -> ToolRegistry:
    """Every tool Reins ships, each in its scopes: the manager's sub-agents (one per reviewer of
    ``reviewers``) and the chat tools."""
    registry = ToolRegistry()
    subagents.register(registry, reviewers)
    chat_tools.register(registry)
    return registry

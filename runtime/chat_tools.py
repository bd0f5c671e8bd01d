"""The assistant's chat tools (scope ``chat``)."""

from runtime.registry import ToolRegistry


def register(registry: ToolRegistry) -> None:
    """Add the chat tools to ``registry`` (filled in by the assistant work)."""

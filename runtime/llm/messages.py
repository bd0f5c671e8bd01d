"""The text of a chat message, whatever shape its content has (a string or a list of content parts),
and a turn's tool calls written as text read back as native ones."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from langchain_core.messages import AIMessage

from reins.policies.models.text_tool_calls import recover_text_tool_calls


def message_text(message: Any, separator: str = "") -> str:
    """The message's text: a string content as it is, content parts joined by ``separator`` (a text
    part gives its ``text``, any other part its string form). A bare content is read the same way."""
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    return separator.join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)


def with_text_tool_calls(message: Any, offered: Collection[str]) -> AIMessage | None:
    """A turn without a native call whose text is exactly calls to ``offered`` tools
    (``reins.policies.models.text_tool_calls``), as the same turn with those calls as native ones (ids
    ``text-1`` …, no text left); None for a turn with native or malformed calls, or any other text.
    The calls are proposals like native ones: the caller's policy still decides on them."""
    if getattr(message, "tool_calls", None) or getattr(message, "invalid_tool_calls", None):
        return None
    found = recover_text_tool_calls(message_text(message), offered)
    if not found:
        return None
    calls = [{"name": call.name, "args": dict(call.args), "id": f"text-{n}", "type": "tool_call"}
             for n, call in enumerate(found, 1)]
    return AIMessage(content="", tool_calls=calls, response_metadata=dict(getattr(message, "response_metadata", {}) or {}),
                     usage_metadata=getattr(message, "usage_metadata", None))

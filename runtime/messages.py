"""The text of a chat message, whatever shape its content has (a string or a list of content parts)."""

from __future__ import annotations

from typing import Any


def message_text(message: Any, separator: str = "") -> str:
    """The message's text: a string content as it is, content parts joined by ``separator`` (a text
    part gives its ``text``, any other part its string form). A bare content is read the same way."""
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    return separator.join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)

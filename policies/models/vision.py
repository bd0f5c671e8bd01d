"""A chat message with an image: which model may read it (pure).

LangChain carries images as content blocks of a message (``{"type": "image", ...}`` in its standard
blocks, ``{"type": "image_url", "image_url": {...}}`` in the OpenAI form). A turn whose message holds
one goes to the model configured as able to read images (the ``vision`` role, ``REINS_MODEL_VISION``);
with none configured it is refused in one line before any model call — another model would answer
without seeing the image, or its provider would refuse the request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

IMAGE_BLOCK_TYPES = frozenset({"image", "image_url"})
NO_VISION_MODEL = ("This message has an image, and no model that reads images is configured: set REINS_MODEL_VISION "
                   "to a vision-capable model, or send the message without the image.")
ImageRoute = Literal["text", "vision", "refuse"]


def image_blocks(content: Any) -> list[Mapping[str, Any]]:
    """The image blocks of a message's content (none for a plain string)."""
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, Mapping) and block.get("type") in IMAGE_BLOCK_TYPES]


def text_blocks(content: Any) -> str:
    """The message's text without its images: a string as it is, else its text blocks joined."""
    if isinstance(content, str):
        return content
    parts = [block if isinstance(block, str) else block.get("text", "") for block in content or []
             if isinstance(block, str) or (isinstance(block, Mapping) and block.get("type") == "text")]
    return " ".join(part for part in parts if isinstance(part, str))


def image_route(images: int, vision_configured: bool) -> ImageRoute:
    """Where a turn goes: ``text`` (no image: its usual roles), ``vision`` (the vision role reads it)
    or ``refuse`` (an image and no model that reads images)."""
    if images <= 0:
        return "text"
    return "vision" if vision_configured else "refuse"


MAX_IMAGE_BYTES = 5 * 1024 * 1024  # an image a chat message may carry (providers cap theirs near here)
_SIGNATURES = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"))


def image_type(head: bytes) -> str | None:
    """The MIME type of a PNG or JPEG file from its first bytes, None for anything else (the name's
    suffix is not believed)."""
    return next((mime for signature, mime in _SIGNATURES if head.startswith(signature)), None)


def with_images(text: str, images: list[Mapping[str, Any]]) -> str | list[Any]:
    """A message's content: the text alone, or a text block followed by the image blocks."""
    return [{"type": "text", "text": text}, *images] if images else text

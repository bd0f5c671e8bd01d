"""``/image PATH`` in ``reins chat``: a PNG or JPEG file read as an image content block, sent with the
next message to the model that reads images (the ``vision`` role; without one the turn is refused in
one line, ``reins.policies.models.vision``). A missing, oversized or non-image file is one line."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from reins.cli.errors import UserError
from reins.policies.models.vision import MAX_IMAGE_BYTES, image_type

IMAGE_COMMAND = "/image"


def read_image(argument: str) -> dict[str, Any]:
    """The image block of the file ``argument`` names ({"type": "image", "base64", "mime_type"})."""
    words = argument.strip()
    if not words:
        raise UserError("usage: /image PATH (a PNG or JPEG file)")
    path = Path(words.strip("'\"")).expanduser()
    name = path.name or words
    try:
        if not path.is_file():
            raise UserError(f"{name}: no such file")
        size = path.stat().st_size
        if size > MAX_IMAGE_BYTES:
            raise UserError(f"{name} is larger than {MAX_IMAGE_BYTES // (1024 * 1024)} MiB")
        with path.open("rb") as source:
            data = source.read(MAX_IMAGE_BYTES + 1)
    except OSError as error:
        raise UserError(f"{name}: cannot be read ({error.strerror or type(error).__name__})") from None
    mime = image_type(data[:16])
    if mime is None:
        raise UserError(f"{name} is not a PNG or JPEG image")
    if len(data) > MAX_IMAGE_BYTES:
        raise UserError(f"{name} is larger than {MAX_IMAGE_BYTES // (1024 * 1024)} MiB")
    return {"type": "image", "base64": base64.b64encode(data).decode("ascii"), "mime_type": mime}


def image_command(text: str) -> str | None:
    """The argument of ``/image ARG`` (possibly empty), None when ``text`` is not the command."""
    head, _, rest = text.partition(" ")
    return rest if head.lower() == IMAGE_COMMAND else None

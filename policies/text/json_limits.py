"""Limits on JSON a model (or a person) hands the runtime: size and nesting depth (pure).

Deeply nested JSON makes a recursive reader (the JSON decoder, pydantic, a walk over the value)
overflow the stack; a huge answer wastes memory before any schema looks at it. Every answer is
checked here first, and a breach is a ``JsonLimitError`` (a ``ValueError``) with a stable code that
the contract layer treats like any other invalid output.
"""

from __future__ import annotations

import json
from typing import Any

MAX_JSON_CHARS = 1_000_000  # far above any contract's bounded fields
MAX_JSON_DEPTH = 32  # the deepest contract nests well under ten levels


class JsonLimitError(ValueError):
    """JSON over a limit; ``code`` is ``json_too_large`` or ``json_too_deep``."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def json_depth(value: Any, stop_at: int | None = None) -> int:
    """Nesting depth of dicts and lists (a scalar is 0, ``[]`` is 1), without recursion; stops
    counting once ``stop_at`` is exceeded."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if stop_at is not None and deepest > stop_at:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def check_json_value(value: Any, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``value`` (already parsed) if it nests at most ``max_depth`` levels, else JsonLimitError."""
    if json_depth(value, stop_at=max_depth) > max_depth:
        raise JsonLimitError("json_too_deep", f"JSON nested deeper than {max_depth} levels")
    return value


def parse_json(text: str | bytes, *, max_chars: int = MAX_JSON_CHARS, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` within the limits: JsonLimitError over them, ValueError for invalid JSON."""
    if len(text) > max_chars:
        raise JsonLimitError("json_too_large", f"JSON longer than {max_chars} characters")
    try:
        value = json.loads(text)
    except RecursionError:  # nested past the decoder's own stack: over any depth limit
        raise JsonLimitError("json_too_deep", f"JSON nested deeper than {max_depth} levels") from None
    return check_json_value(value, max_depth)

"""Was a model response cut off at its token limit? (pure)

A response that stopped at ``max_tokens`` is not an answer: a truncated JSON object fails to parse
or, worse, parses as a shorter valid object, and a truncated free-text draft reads like a draft.
Providers say so in the response metadata under different names; this is the one place that knows
them. A truncated response is a contract failure with the code ``truncated``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TRUNCATED = "truncated"

# (metadata key, values meaning "stopped at the token limit")
_TRUNCATION_MARKERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("finish_reason", frozenset({"length", "max_tokens", "MAX_TOKENS"})),  # OpenAI-compatible, Gemini
    ("stop_reason", frozenset({"max_tokens"})),  # Anthropic
    ("done_reason", frozenset({"length"})),  # Ollama's native API
)


def is_truncated(response_metadata: Mapping[str, Any] | None) -> bool:
    """True when the provider reports that it stopped because the output hit the token limit."""
    metadata = response_metadata or {}
    for key, values in _TRUNCATION_MARKERS:
        if str(metadata.get(key) or "") in values:
            return True
    incomplete = metadata.get("incomplete_details")  # the Responses API
    return isinstance(incomplete, Mapping) and incomplete.get("reason") == "max_output_tokens"

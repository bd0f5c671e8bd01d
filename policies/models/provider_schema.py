"""The JSON schema a provider is sent, derived from a contract's strict one (pure).

Local servers compile a response schema or a tool's parameters into a sampling grammar, and their
grammar builders refuse what they cannot compile: llama.cpp refuses a repetition of 2000 or more (a
string ``maxLength: 2000`` fails with "failed to parse grammar"; 1999 is accepted) and a ``pattern``
that is not anchored ``^…$`` or uses lookaround, back-references or word boundaries. The schema
sent is therefore the strict one with those keywords removed — the bound stops being a constraint
on sampling, never a constraint on the answer: the full strict schema still validates every answer
locally (``reins.runtime.contracts.checks``), so an answer past a removed bound is refused there and gets
the one repair.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# The smallest repetition count a grammar builder refuses (llama.cpp: 2000; 1999 compiles).
GRAMMAR_REPETITION_LIMIT = 2000
REPETITION_KEYWORDS: tuple[str, ...] = ("maxLength", "minLength", "maxItems", "minItems", "maxProperties",
                                        "minProperties")
# Regex features the grammar builders do not compile: groups with ``(?`` (lookaround, non-capturing,
# named), back-references and word boundaries.
_UNCOMPILABLE = re.compile(r"\(\?|\\[1-9bB]")


def pattern_compiles(pattern: str) -> bool:
    """Whether a grammar builder takes this ``pattern``: anchored at both ends, nothing it rejects."""
    return pattern.startswith("^") and pattern.endswith("$") and len(pattern) >= 2 and not _UNCOMPILABLE.search(pattern)


def provider_schema(schema: Any) -> Any:
    """``schema`` (a JSON schema, or any part of one) with what grammar builders refuse removed: a
    repetition keyword of ``GRAMMAR_REPETITION_LIMIT`` or more, a pattern they cannot compile. A new
    object; the strict schema is left as it is. Property names are data, never keywords: a property
    called ``pattern`` or ``maxLength`` is kept."""
    if isinstance(schema, list):
        return [provider_schema(item) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    derived: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("properties", "$defs", "definitions", "patternProperties") and isinstance(value, Mapping):
            derived[key] = {name: provider_schema(part) for name, part in value.items()}
            continue
        if key in REPETITION_KEYWORDS and _count(value) and value >= GRAMMAR_REPETITION_LIMIT:
            continue
        if key == "pattern" and isinstance(value, str) and not pattern_compiles(value):
            continue
        derived[key] = provider_schema(value)
    return derived


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def repetition_overruns(schema: Any, path: str = "$") -> list[str]:
    """Where ``schema`` still has a repetition keyword at or past the limit (empty: a grammar builder
    takes it). For the checks over every schema Reins sends."""
    found: list[str] = []
    if isinstance(schema, list):
        for index, item in enumerate(schema):
            found += repetition_overruns(item, f"{path}[{index}]")
    elif isinstance(schema, Mapping):
        for key, value in schema.items():
            if key in ("properties", "$defs", "definitions", "patternProperties") and isinstance(value, Mapping):
                for name, part in value.items():
                    found += repetition_overruns(part, f"{path}.{name}")
            elif key in REPETITION_KEYWORDS and _count(value) and value >= GRAMMAR_REPETITION_LIMIT:
                found.append(f"{path}.{key}={value}")
            else:
                found += repetition_overruns(value, f"{path}.{key}")
    return found

"""The offline stand-in's calls to a tool the message names: every required parameter filled from the
message, typed from the tool's schema (as PydanticAI's ``TestModel`` fills a tool's arguments from
its schema, but with the user's own values).

Forms: ``use <tool> on "<text>"`` (quoted texts fill the text parameters in order) and ``use <tool>
with <name>=<value> …`` (``name: value`` too; values quoted or single words); numbers in the message
fill the number parameters in order. A call whose required parameters are not all filled is not
made: ``usage`` says the form that works.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

NAMED_CALL = re.compile(r"\buse\s+([A-Za-z0-9_-]{1,64})\b(?:\s+(?:on|with)\b)?([^\n]*)", re.I)
_PAIR = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]{0,63})\s*[=:]\s*(?:\"([^\"]*)\"|([^\s,\"]+))")
_QUOTED = re.compile(r"\"([^\"]*)\"")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
_TRUE = frozenset({"true", "yes", "on", "1"})


def _typed(value: str, kind: str) -> Any:
    """``value`` as the schema's type; None when it is not one."""
    try:
        if kind == "integer":
            return int(float(value)) if float(value).is_integer() else None
        if kind == "number":
            return float(value)
    except ValueError:
        return None
    if kind == "boolean":
        return value.strip().lower() in _TRUE
    if kind == "array":
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


def fill_arguments(rest: str, parameters: Sequence[str], required: Sequence[str],
                   types: Mapping[str, str]) -> dict[str, Any] | None:
    """The arguments a message gives after ``use <tool>``: named pairs first, then quoted texts and
    numbers in order for the remaining required parameters. None when a required one stays empty."""
    args: dict[str, Any] = {}
    for match in _PAIR.finditer(rest):
        name, value = match.group(1), match.group(2) if match.group(2) is not None else match.group(3)
        if name in parameters and (typed := _typed(value, types.get(name, "string"))) is not None:
            args[name] = typed
    unnamed = _PAIR.sub(" ", rest)
    texts = _QUOTED.findall(unnamed)
    numbers = _NUMBER.findall(_QUOTED.sub(" ", unnamed))
    for name in required or parameters[:1]:
        if name in args:
            continue
        kind = types.get(name, "string")
        pool = numbers if kind in ("integer", "number") else texts
        while pool and name not in args:
            typed = _typed(pool.pop(0), kind)
            if typed is not None:
                args[name] = typed
    return args if all(name in args for name in (required or parameters[:1])) else None


def usage(tool: str, parameters: Sequence[str], required: Sequence[str], types: Mapping[str, str]) -> str:
    """The form that calls ``tool`` offline, its required parameters named with an example value."""
    example = {"integer": "3", "number": "2.5", "boolean": "true"}
    pairs = " ".join(f'{name}={example.get(types.get(name, "string"), chr(34) + "…" + chr(34))}'
                     for name in (required or parameters[:1]))
    return f"use {tool} with {pairs}".rstrip()

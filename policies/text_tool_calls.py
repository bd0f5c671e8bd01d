"""Tool calls a model wrote as text instead of as native ``tool_calls`` (pure).

Small local models (Qwen2.5-Coder through llama.cpp, for one) often answer a tool-calling turn with
the call written out as JSON text and no native call. ``recover_text_tool_calls`` turns such a text
back into the calls it names — only when the whole text, after trimming, is nothing but calls:

- one or more JSON objects ``{"name": <an offered tool>, "arguments": {...}}``, bare, each in a
  fenced block (```` ```json ```` … ```` ``` ````) or in ``<tool_call>`` … ``</tool_call>`` tags, or a
  JSON list of such objects;
- followed by nothing, or by padding that carries no words and opens nothing (no letter, no
  ``{ [ < " ' `````): what a server that pads to ``max_tokens`` appends (``.0000…``, blank lines).

Anything else gives None and the turn counts as having no tool call: prose that names a tool, a
name that was not offered, an object with other keys or non-object arguments, a duplicate key, an
object, fence or tag cut off before it closes. Recovered calls are proposals like native ones: the
caller sends them through the same policy, which may still refuse them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

TextToolCallMode = Literal["recover", "refuse"]
TEXT_TOOL_CALL_MODES: tuple[str, ...] = get_args(TextToolCallMode)
MAX_TEXT_CHARS = 32_000  # a manager turn is bounded far below this; anything longer is not a call

_FENCE_OPEN = re.compile(r"```[ \t]*(?:json)?[ \t]*\r?\n", re.IGNORECASE)
_FENCE_CLOSE = "```"
_TAG_OPEN, _TAG_CLOSE = "<tool_call>", "</tool_call>"
_OPENERS = frozenset("{[<\"'`")


@dataclass(frozen=True)
class TextToolCall:
    """One call recovered from text: the tool's name and its arguments, as the model wrote them."""

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)


class _NotCalls(ValueError):
    """The text is not exactly a sequence of tool calls."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(keys) != len(set(keys)):
        raise _NotCalls("duplicate key")
    return dict(pairs)


_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicates)


def _loads(text: str) -> Any:
    value, end = _DECODER.raw_decode(text.strip())
    if end != len(text.strip()):
        raise _NotCalls("text after the JSON inside a block")
    return value


def _calls_in(value: Any, offered: Collection[str]) -> list[TextToolCall]:
    items = value if isinstance(value, list) else [value]
    if not items:
        raise _NotCalls("empty list")
    calls = []
    for item in items:
        if not isinstance(item, dict) or set(item) != {"name", "arguments"}:
            raise _NotCalls("not a {name, arguments} object")
        name, args = item["name"], item["arguments"]
        if not isinstance(name, str) or name not in offered or not isinstance(args, dict):
            raise _NotCalls("a tool that was not offered, or arguments that are not an object")
        calls.append(TextToolCall(name, args))
    return calls


def is_padding(tail: str) -> bool:
    """Text after the last call that may be ignored: no words, and nothing a call could start with."""
    return not any(char.isalpha() or char in _OPENERS for char in tail)


def _block(text: str, opener_end: int, closer: str) -> tuple[str, int]:
    close = text.find(closer, opener_end)
    if close < 0:
        raise _NotCalls("block cut off before it closes")
    return text[opener_end:close], close + len(closer)


def _split(text: str, offered: Collection[str]) -> list[TextToolCall]:
    calls: list[TextToolCall] = []
    position = 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            break
        fence = _FENCE_OPEN.match(text, position)
        if fence:
            body, position = _block(text, fence.end(), _FENCE_CLOSE)
            calls += _calls_in(_loads(body), offered)
        elif text.startswith(_TAG_OPEN, position):
            body, position = _block(text, position + len(_TAG_OPEN), _TAG_CLOSE)
            calls += _calls_in(_loads(body), offered)
        elif text[position] in "{[":
            value, position = _DECODER.raw_decode(text, position)
            calls += _calls_in(value, offered)
        elif calls and is_padding(text[position:]):
            break
        else:
            raise _NotCalls("prose")
    return calls


def recover_text_tool_calls(text: str, offered: Collection[str]) -> tuple[TextToolCall, ...] | None:
    """The calls ``text`` consists of (each naming one of ``offered``), or None when it is anything
    else (see the module docstring). Never an empty tuple: no call is None."""
    if not isinstance(text, str) or len(text) > MAX_TEXT_CHARS:
        return None
    try:
        calls = _split(text.strip(), frozenset(offered))
    except (_NotCalls, ValueError, RecursionError):  # json.JSONDecodeError is a ValueError
        return None
    return tuple(calls) or None

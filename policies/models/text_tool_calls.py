"""Tool calls a model wrote as text instead of as native ``tool_calls`` (pure).

Small local models (Qwen2.5-Coder through llama.cpp, for one) often answer a tool-calling turn with
the call written out as text and no native call. ``recover_text_tool_calls`` turns such a text back
into the calls it names — only when the whole text, after trimming, is nothing but calls, in the
shapes the common open model families write them:

- a JSON call object ``{"name": <an offered tool>, "arguments": {...}}``; ``arguments`` may also be a
  JSON *string* holding that object (the OpenAI wire form), the key may be ``parameters`` (Llama
  3.1), and an ``"id"`` string may come with it (Mistral);
- such objects bare, as a JSON list, each in a fenced block (```` ```json ```` … ```` ``` ````), in
  ``<tool_call>`` … ``</tool_call>`` (Qwen, Hermes), after ``<|python_tag|>`` (Llama 3.1; several
  separated by ``;``), after ``[TOOL_CALLS]`` (Mistral: a JSON list, or ``name[ARGS]{...}``), in
  ``<|tool_call|>`` … with or without ``<|/tool_call|>`` (Phi, Granite 3) or after
  ``<function_call>`` (Granite);
- a pythonic list ``[f(a=1, b="x"), g()]`` (Llama 3.2 and 4): parsed with ``ast``, keyword
  arguments only, each a literal (``ast.literal_eval`` on the node; nothing is ever evaluated);
- followed by nothing, by an end-of-turn token (``<|eot_id|>``, ``<|eom_id|>``, ``</s>``…), or by
  padding that carries no words and opens nothing (no letter, no ``{ [ < " ' `````): what a server
  that pads to ``max_tokens`` appends (``.0000…``, blank lines).

Anything else gives None and the turn counts as having no tool call: prose that names a tool, a
name that was not offered, an object with other keys or non-object arguments, a duplicate key, an
object, fence or tag cut off before it closes, a pythonic call with a positional argument or a value
that is not a literal. Recovered calls are proposals like native ones: the caller sends them through
the same policy, which may still refuse them.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

TextToolCallMode = Literal["recover", "refuse"]
TEXT_TOOL_CALL_MODES: tuple[str, ...] = get_args(TextToolCallMode)
MAX_TEXT_CHARS = 32_000  # a tool-calling turn is bounded far below this; anything longer is not a call

_FENCE_OPEN = re.compile(r"```[ \t]*(?:json)?[ \t]*\r?\n", re.IGNORECASE)
_FENCE_CLOSE = "```"
# Tags that enclose one JSON value: opener → (closer, whether the closer may be missing at the end).
_ENCLOSING = {"<tool_call>": ("</tool_call>", False), "<|tool_call|>": ("<|/tool_call|>", True)}
# Tags that only introduce what follows.
_PYTHON_TAG, _MISTRAL, _GRANITE = "<|python_tag|>", "[TOOL_CALLS]", "<function_call>"
_MISTRAL_CALL = re.compile(r"([A-Za-z_][\w.-]*)(?:\[CALL_ID\][A-Za-z0-9]+)?\[ARGS\]")
_END_TOKENS = ("<|eot_id|>", "<|eom_id|>", "<|end|>", "<|im_end|>", "</s>", "<|endoftext|>", "</function_call>")
_ARGUMENT_KEYS = ("arguments", "parameters")
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


def _arguments(value: Any) -> dict[str, Any]:
    if isinstance(value, str):  # the OpenAI wire form: the arguments object as a JSON string
        value = _loads(value)
    if not isinstance(value, dict):
        raise _NotCalls("arguments that are not an object")
    return value


def _call(item: Any, offered: Collection[str]) -> TextToolCall:
    if not isinstance(item, dict) or "name" not in item:
        raise _NotCalls("not a call object")
    keys = [key for key in _ARGUMENT_KEYS if key in item]
    allowed = {"name", *keys} | ({"id"} if isinstance(item.get("id"), str) else set())
    if len(keys) != 1 or set(item) != allowed:
        raise _NotCalls("not a {name, arguments} object")
    name = item["name"]
    if not isinstance(name, str) or name not in offered:
        raise _NotCalls("a tool that was not offered")
    return TextToolCall(name, _arguments(item[keys[0]]))


def _calls_in(value: Any, offered: Collection[str]) -> list[TextToolCall]:
    items = value if isinstance(value, list) else [value]
    if not items:
        raise _NotCalls("empty list")
    return [_call(item, offered) for item in items]


def _pythonic(text: str, offered: Collection[str]) -> list[TextToolCall]:
    """``[f(a=1), g(b="x")]``: a list of calls of offered names with literal keyword arguments."""
    tree = ast.parse(text.strip(), mode="eval").body
    if not isinstance(tree, ast.List) or not tree.elts:
        raise _NotCalls("not a list of calls")
    calls = []
    for node in tree.elts:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in offered):
            raise _NotCalls("not a call of an offered tool")
        names = [keyword.arg for keyword in node.keywords]
        if node.args or None in names or len(names) != len(set(names)):
            raise _NotCalls("positional, ** or repeated arguments")
        args = {keyword.arg: ast.literal_eval(keyword.value) for keyword in node.keywords}
        # Only what JSON could have said (no sets, bytes, complex numbers, NaN): tuples become lists.
        calls.append(TextToolCall(node.func.id, json.loads(json.dumps(args, allow_nan=False))))
    return calls


def is_padding(tail: str) -> bool:
    """Text after the last call that may be ignored: no words, and nothing a call could start with."""
    return not any(char.isalpha() or char in _OPENERS for char in tail)


def _block(text: str, opener_end: int, closer: str, optional: bool = False) -> tuple[str, int]:
    close = text.find(closer, opener_end)
    if close < 0:
        if optional:
            return text[opener_end:], len(text)
        raise _NotCalls("block cut off before it closes")
    return text[opener_end:close], close + len(closer)


def _json_at(text: str, position: int, offered: Collection[str]) -> tuple[list[TextToolCall], int]:
    while position < len(text) and text[position].isspace():
        position += 1
    value, position = _DECODER.raw_decode(text, position)
    return _calls_in(value, offered), position


def _python_tagged(text: str, position: int, offered: Collection[str]) -> tuple[list[TextToolCall], int]:
    """After ``<|python_tag|>``: JSON calls separated by ``;``, or a pythonic list."""
    if text[position:].lstrip().startswith("["):
        return _bracketed(text, position, offered)
    calls, position = _json_at(text, position, offered)
    while text[position:].lstrip().startswith(";"):
        more, position = _json_at(text, text.index(";", position) + 1, offered)
        calls += more
    return calls, position


def _mistral(text: str, position: int, offered: Collection[str]) -> tuple[list[TextToolCall], int]:
    """After ``[TOOL_CALLS]``: a JSON list (or object), or ``name[ARGS]{...}``."""
    named = _MISTRAL_CALL.match(text, position)
    if not named:
        return _json_at(text, position, offered)
    if named.group(1) not in offered:
        raise _NotCalls("a tool that was not offered")
    value, position = _DECODER.raw_decode(text, named.end())
    return [TextToolCall(named.group(1), _arguments(value))], position


def _bracketed(text: str, position: int, offered: Collection[str]) -> tuple[list[TextToolCall], int]:
    """A JSON list of calls, else (the rest of the text being one) a pythonic list."""
    try:
        return _json_at(text, position, offered)
    except ValueError:
        return _pythonic(text[position:], offered), len(text)


def _without_end_tokens(text: str) -> str:
    while True:
        for token in _END_TOKENS:
            if text.endswith(token):
                text = text[: -len(token)].rstrip()
                break
        else:
            return text


def _split(text: str, offered: Collection[str]) -> list[TextToolCall]:
    calls: list[TextToolCall] = []
    position = 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            break
        fence = _FENCE_OPEN.match(text, position)
        tag = next((opener for opener in _ENCLOSING if text.startswith(opener, position)), None)
        if fence:
            body, position = _block(text, fence.end(), _FENCE_CLOSE)
            calls += _calls_in(_loads(body), offered)
        elif tag:
            body, position = _block(text, position + len(tag), *_ENCLOSING[tag])
            calls += _calls_in(_loads(body), offered)
        elif text.startswith(_PYTHON_TAG, position):
            found, position = _python_tagged(text, position + len(_PYTHON_TAG), offered)
            calls += found
        elif text.startswith(_MISTRAL, position):
            found, position = _mistral(text, position + len(_MISTRAL), offered)
            calls += found
        elif text.startswith(_GRANITE, position):
            found, position = _json_at(text, position + len(_GRANITE), offered)
            calls += found
        elif text[position] == "[":
            found, position = _bracketed(text, position, offered)
            calls += found
        elif text[position] == "{":
            found, position = _json_at(text, position, offered)
            calls += found
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
        calls = _split(_without_end_tokens(text.strip()), frozenset(offered))
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):  # JSONDecodeError is a ValueError
        return None
    return tuple(calls) or None

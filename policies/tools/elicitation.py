"""An MCP server's question mid-call (elicitation) as the assistant's ``ask_user`` pause, and the
person's answer as the server's reply.

Only a form of flat fields is asked (the protocol's form mode); a URL request or a form of several
fields beyond a JSON answer is declined for the person in words they see. The answer is checked
against the server's field types before it goes back: a text that does not fit asks again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

DECLINE = "decline"  # the answer that declines the server's question (the call goes on without it)
MAX_QUESTION_CHARS = 500
_TRUE, _FALSE = ("yes", "y", "true"), ("no", "n", "false")


def _fields(schema: Mapping[str, Any] | None) -> dict[str, Mapping[str, Any]]:
    props = (schema or {}).get("properties") or {}
    return {str(name): prop for name, prop in props.items() if isinstance(prop, Mapping)}


def question_payload(server: str, message: str, schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``ask_user`` question a server's form becomes: its message and fields, and choices when
    its one field has them (a yes/no field, an enum)."""
    fields = _fields(schema)
    options: list[str] | None = None
    if len(fields) == 1:
        (prop,) = fields.values()
        if prop.get("type") == "boolean":
            options = ["yes", "no", DECLINE]
        elif isinstance(prop.get("enum"), Sequence) and not isinstance(prop.get("enum"), str):
            options = [*map(str, prop["enum"]), DECLINE]
    if len(fields) > 1:
        form = "; answer as JSON with " + ", ".join(f"{n} ({p.get('type', 'string')})" for n, p in fields.items())
    elif fields:
        (name, prop), = fields.items()
        form = f"; your answer is its {name} ({prop.get('type', 'string')})"
    else:
        form = ""
    text = f"The MCP server {server!r} asks: {' '.join(str(message).split())}"[:MAX_QUESTION_CHARS]
    return {"question": f"{text}{form} (or '{DECLINE}')", "options": options}


def _typed(text: str, prop: Mapping[str, Any]) -> tuple[Any, str]:
    kind = prop.get("type", "string")
    if kind == "boolean":
        low = text.lower()
        return (True, "") if low in _TRUE else (False, "") if low in _FALSE else (None, "a yes or no answer")
    if kind in ("integer", "number"):
        try:
            number = int(text) if kind == "integer" else float(text)
        except ValueError:
            return None, f"a{'n integer' if kind == 'integer' else ' number'}"
        return number, ""
    if isinstance(prop.get("enum"), Sequence) and text not in [str(v) for v in prop["enum"]]:
        return None, "one of " + ", ".join(map(str, prop["enum"]))
    return text, ""


def server_reply(answer: str, schema: Mapping[str, Any] | None) -> tuple[dict[str, Any] | None, str]:
    """(the elicitation result ``{action, content}``, "") for the person's answer, or (None, what a
    fitting answer is) when it does not fit the server's fields."""
    text = answer.strip()
    if text.lower() == DECLINE:
        return {"action": "decline"}, ""
    fields = _fields(schema)
    if len(fields) == 1:
        (name, prop), = fields.items()
        value, want = _typed(text, prop)
        return ({"action": "accept", "content": {name: value}}, "") if not want else (None, f"{name} needs {want}")
    try:
        given = json.loads(text) if fields else {}
    except ValueError:
        given = None
    if not isinstance(given, dict):
        return None, "answer with a JSON object of " + ", ".join(fields)
    content: dict[str, Any] = {}
    required = set((schema or {}).get("required") or ())
    for name, prop in fields.items():
        if name not in given:
            if name in required:
                return None, f"{name} is required"
            continue
        value, want = _typed(str(given[name]) if not isinstance(given[name], str) else given[name], prop)
        if want:
            return None, f"{name} needs {want}"
        content[name] = value
    if set(given) - set(fields):
        return None, "unknown field(s): " + ", ".join(sorted(set(given) - set(fields)))
    return {"action": "accept", "content": content}, ""

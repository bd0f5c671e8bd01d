"""How the stub provider answers: like a cooperative model, from the request alone (no Reins code).

Structured requests are answered by their JSON schema's name (``response_format.json_schema.name``,
or the single function of a ``function_calling`` request) from ``answers.json``; a tool-calling
request calls the offered tools (all of them when ``parallel_tool_calls`` allows, else the first);
after a tool result it answers in text; anything else gets the free-text answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tests.wire.provider_stub import Completion, Reply

ANSWERS: Mapping[str, Any] = json.loads((Path(__file__).parent / "answers.json").read_text(encoding="utf-8"))


def schema_name(body: Mapping[str, Any]) -> str | None:
    """The structured-output schema a request asks for, either way it can ask."""
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return response_format["json_schema"]["name"]
    names = tool_names(body)
    if len(names) == 1 and names[0] in ANSWERS:
        return names[0]
    return None


def tool_names(body: Mapping[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools") or []]


def kind_of(body: Mapping[str, Any]) -> str:
    """What a request is, from its shape: a schema name, ``tools:<names>`` or ``text``."""
    name = schema_name(body)
    if name:
        return name
    if body.get("tools"):
        return "tools:" + ",".join(tool_names(body))
    return "text"


def cooperative(body: Mapping[str, Any]) -> Reply:
    name = schema_name(body)
    if name:
        payload = ANSWERS.get(name, {})  # a schema it has no answer for (doctor's probes): an empty object
        if body.get("response_format"):
            return Completion(content=json.dumps(payload))
        return Completion(content="", tool_calls=((name, payload),))
    names = tool_names(body)
    if names:
        if body["messages"][-1].get("role") == "tool":
            return Completion(content="Done.")
        if "calculator" in names:
            return Completion(content="", tool_calls=(("calculator", ANSWERS["calculator"]),))
        chosen = names if body.get("parallel_tool_calls") else names[:1]
        return Completion(content="", tool_calls=tuple((n, {"note": "next step"}) for n in chosen))
    return Completion(content=ANSWERS["text"])


def text_only(body: Mapping[str, Any]) -> Reply:
    """A server that ignores tool_choice: it answers tool-calling requests in prose."""
    if body.get("tools") and not schema_name(body):
        return Completion(content="I would start by asking the plan sub-agent to draft a plan.")
    return cooperative(body)


def failing(match: Callable[[Mapping[str, Any]], bool], reply: Reply, times: int | None = None) -> Callable[[Mapping[str, Any]], Reply]:
    """Cooperative, except that requests ``match`` selects get ``reply`` (the first ``times`` of them)."""
    count = {"n": 0}

    def answer(body: Mapping[str, Any]) -> Reply:
        if match(body) and (times is None or count["n"] < times):
            count["n"] += 1
            return reply
        return cooperative(body)

    return answer


def asks_for(name: str) -> Callable[[Mapping[str, Any]], bool]:
    return lambda body: schema_name(body) == name

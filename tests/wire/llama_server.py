"""How llama-server answered with a small local model (Qwen2.5-Coder-0.5B-Instruct, ``--jinja``),
replayed from the shapes it really sent: manager turns answered with the call written as text and
no native ``tool_calls`` — bare JSON in a single-tool phase, one ```json fenced block per reviewer
in the review phase. With ``tool_choice: "required"`` the server lets the text through and the
answer runs on to ``max_tokens`` (padding after the JSON, ``finish_reason: "length"``); with
``"auto"`` it stops after the JSON. A prompt larger than the server's context is a 400 naming
``exceed_context_size_error`` with the token counts. A response schema or tool parameters with a
repetition of 2000 or more (a string ``maxLength: 2000``) is a 400 "failed to parse grammar"
(``grammar_limited``), as llama.cpp build 9993 answered.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from tests.wire.behaviours import cooperative, tool_names
from tests.wire.provider_stub import Completion, HttpError, Reply

# Notes as Qwen wrote them (the plan phase's is shortened to the policy's 200 characters).
NOTES: Mapping[str, str] = {
    "plan-subagent": "Understand the requirement and write an implementation plan.",
    "task-subagent": "Break the plan into concrete tasks.",
    "review-subagent": "Review the plan and tasks for coverage, risk and boundaries.",
    "risk-subagent": "Implementation complexity, security and data handling, unresolved dependencies, test coverage "
                     "and maintenance cost; rate the overall severity and suggest mitigations.",
    "boundary-subagent": "Check the plan and tasks against the governance boundaries.",
}
# What the plan phase's note really was: the tool's description, longer than a note may be.
LONG_NOTE = ("Understand the requirement and write an implementation plan: scope, assumptions, delivery phases "
             "with acyclic dependencies, and acceptance criteria that cover every requirement. Needs: the "
             "requirement only. Produces: plan. Pass at most a short note; the runtime supplies the inputs.")
PADDING = "." + "0" * 300  # doctor-check-required: '{"name": "ping", "arguments": {"ok": true}}.0000…'
CONTEXT_400 = HttpError(
    400, "request (636 tokens) exceeds the available context size (512 tokens), try increasing it",
    "exceed_context_size_error", (("code", 400), ("n_prompt_tokens", 636), ("n_ctx", 512)),
)


def is_manager_turn(body: Mapping[str, Any]) -> bool:
    return any(name.endswith("-subagent") for name in tool_names(body))


def bare(name: str, note: str) -> str:
    return json.dumps({"name": name, "arguments": {"note": note}})


def fenced(name: str, note: str) -> str:
    return "```json\n" + json.dumps({"name": name, "arguments": {"note": note}}, indent=2) + "\n```"


def text_calls(body: Mapping[str, Any], notes: Mapping[str, str] = NOTES) -> str:
    """The manager turn as Qwen wrote it: bare JSON for one tool, fenced blocks for the group."""
    names = tool_names(body)
    if len(names) == 1:
        return bare(names[0], notes[names[0]])
    return "\n\n\n".join(fenced(name, notes[name]) for name in names)


def qwen(notes: Mapping[str, str] = NOTES) -> Callable[[Mapping[str, Any]], Reply]:
    """Manager turns answered with text calls: padded to the bound (``required``, as llama.cpp does
    it) or stopping cleanly (``auto``); every other request answered cooperatively."""

    def answer(body: Mapping[str, Any]) -> Reply:
        if not is_manager_turn(body):
            return cooperative(body)
        text = text_calls(body, notes)
        if body.get("tool_choice") == "auto":
            return Completion(content=text, finish_reason="stop")
        return Completion(content=text + PADDING, finish_reason="length")

    return answer


def cut_off(body: Mapping[str, Any]) -> Reply:
    """A manager turn that ran into its bound in the middle of the call."""
    if not is_manager_turn(body):
        return cooperative(body)
    return Completion(content=text_calls(body)[:40], finish_reason="length")


GRAMMAR_400 = HttpError(400, "Failed to initialize samplers: failed to parse grammar")
REPETITIONS = ("maxLength", "minLength", "maxItems", "minItems")


def _too_many_repetitions(schema: Any) -> bool:
    if isinstance(schema, list):
        return any(_too_many_repetitions(part) for part in schema)
    if not isinstance(schema, Mapping):
        return False
    for key, value in schema.items():
        if key == "properties" and isinstance(value, Mapping):
            if any(_too_many_repetitions(part) for part in value.values()):
                return True
        elif key in REPETITIONS and isinstance(value, int) and value >= 2000:
            return True
        elif _too_many_repetitions(value):
            return True
    return False


def grammar_limited(answer: Callable[[Mapping[str, Any]], Reply]) -> Callable[[Mapping[str, Any]], Reply]:
    """``answer``, behind llama.cpp's grammar builder: a request whose response schema or tool
    parameters repeat 2000 times or more is refused before any sampling."""

    def limited(body: Mapping[str, Any]) -> Reply:
        response_format = body.get("response_format") or {}
        schemas = [(response_format.get("json_schema") or {}).get("schema")]
        schemas += [tool["function"].get("parameters") for tool in body.get("tools") or []]
        if any(_too_many_repetitions(schema) for schema in schemas if schema):
            return GRAMMAR_400
        return answer(body)

    return limited

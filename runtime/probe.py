"""``reins doctor --check``: one tiny request per capability per configured model, one line each.

For every distinct configured model, fallbacks included, it asks for one tool call (the way manager turns ask, in the
``REINS_TOOL_CHOICE`` style) and one structured answer (the way contracts ask, with
``REINS_STRUCTURED_METHOD``), and says what is wrong in terms a user can act on: unreachable,
auth failed, model not found, no tool calling, no JSON-schema output. Provider messages are never
shown (they can carry request details); the cause class is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import openai
from langchain_core.messages import HumanMessage

from policies.tool_choice import tool_turn_options
from runtime.contracts import structured_options
from runtime.failures import failure_cause
from runtime.models import create_chat_model
from runtime.settings import ROLES, Settings, SettingsError

PROBE_TIMEOUT_S = 30.0
PROBE_MAX_TOKENS = 256
PING_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "ping",
        "description": "Call this tool to answer.",
        "parameters": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"],
                       "additionalProperties": False},
    },
}
PING_SCHEMA: dict[str, Any] = {
    "title": "Ping",
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class ProbeResult:
    model: str
    ok: bool
    result: str


def configured_models(settings: Settings) -> list[tuple[str, str]]:
    """Each distinct model a role is configured with, its fallbacks included, as (name, a role it
    serves), in role order; the same name on another endpoint or key is another model."""
    found: dict[tuple[str, str | None, str | None], tuple[str, str]] = {}
    for role in ROLES:
        name = settings.model_for(role)
        for each in (name, *settings.fallbacks_for(role)) if name else ():
            found.setdefault((each, settings.base_url_for(role), settings.api_key_for(role)), (each, role))
    return list(found.values())


def verdict_for(error: BaseException) -> str:
    """What a failed probe means for the user."""
    cause = failure_cause(error)
    if cause in ("connection refused", "connection failed", "timeout"):
        return f"unreachable ({cause})"
    if cause in ("HTTP 401", "HTTP 403"):
        return f"auth failed ({cause})"
    return cause


def probe_model(name: str, settings: Settings, role: str = "manager") -> ProbeResult:
    """Probe ``name`` on the endpoint and key ``role`` uses."""
    try:
        model = create_chat_model(name, role, settings, timeout_s=PROBE_TIMEOUT_S, max_tokens=PROBE_MAX_TOKENS)
    except SettingsError as error:  # e.g. the provider's package is not installed
        return ProbeResult(name, False, str(error))
    ask_tool = model.bind_tools([PING_TOOL], **tool_turn_options(("ping",), settings.tool_choice, parallel=False))
    ask_json = model.with_structured_output(PING_SCHEMA, method=settings.structured_method, include_raw=True,
                                            **structured_options(settings.structured_method, settings.tool_choice))
    try:
        message = ask_tool.invoke([HumanMessage(content="Call the ping tool with ok set to true.")])
    except Exception as error:  # noqa: BLE001 - every failure becomes one line
        return ProbeResult(name, False, verdict_for(error))
    if not getattr(message, "tool_calls", None):
        return ProbeResult(name, False, f"no tool calling (REINS_TOOL_CHOICE={settings.tool_choice})")
    try:
        answer = ask_json.invoke([HumanMessage(content="Answer with a JSON object whose ok field is true.")])
        parsed = answer.get("parsed") if isinstance(answer, dict) else None
    except openai.LengthFinishReasonError:
        parsed = None
    except Exception as error:  # noqa: BLE001
        return ProbeResult(name, False, verdict_for(error))
    if not (isinstance(parsed, dict) and isinstance(parsed.get("ok"), bool)):
        return ProbeResult(name, False, f"no JSON-schema output (REINS_STRUCTURED_METHOD={settings.structured_method})")
    return ProbeResult(name, True, f"reachable; tool calling and {settings.structured_method} output work")

"""``reins doctor --check``: tiny requests per configured model, one line each, and the settings to use.

For every distinct configured model, fallbacks included, it asks for one tool call in each
tool-choice style (the configured ``REINS_TOOL_CHOICE`` first, then ``required`` and ``auto``, the way
manager turns ask) and one structured answer (the way contracts ask, with
``REINS_STRUCTURED_METHOD``), and says what is wrong in terms a user can act on: unreachable, auth
failed, model not found, no tool calling, no JSON-schema output. Per style it reports whether the
call came back natively or written as text, the output tokens it used and whether it ran to the
bound, and recommends the ``REINS_TOOL_CHOICE`` / ``REINS_TEXT_TOOL_CALLS`` /
``REINS_MAX_TOKENS_MANAGER`` lines to export (``policies.tool_call_advice``). Provider messages are
never shown (they can carry request details); the cause class is.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

import openai
from langchain_core.messages import HumanMessage

from policies.text_tool_calls import recover_text_tool_calls
from policies.tool_call_advice import ToolCallObservation, advise
from policies.tool_choice import tool_turn_options
from policies.truncation import is_truncated
from runtime.model_calls import structured_options
from runtime.failures import failure_cause
from runtime.messages import message_text
from runtime.models import configured_policies, create_chat_model
from runtime.settings import ROLES, Settings, SettingsError

PROBE_STYLES = ("required", "auto")  # tried after the configured style
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
class ToolProbe:
    """One tool-call request in one style: what came back, the output tokens, the time it took."""

    style: str
    call: str  # native | text | none
    output_tokens: int
    cut_off: bool
    ms: int

    def observation(self) -> ToolCallObservation:
        return ToolCallObservation(self.style, self.call == "native", self.call == "text", self.output_tokens,
                                   self.cut_off)

    def line(self) -> str:
        call = {"native": "native tool call", "text": "tool call written as text", "none": "no tool call"}[self.call]
        bound = ", ran to the output bound" if self.cut_off else ""
        return f"tool_choice {self.style}: {call}, {self.output_tokens} output tokens{bound}, {self.ms / 1000:.1f} s"


@dataclass(frozen=True)
class ProbeResult:
    model: str
    ok: bool
    result: str
    probes: tuple[ToolProbe, ...] = ()
    recommended: tuple[str, ...] = ()  # export lines (policies.tool_call_advice)


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


def probe_tool_call(model: Any, style: str) -> ToolProbe:
    """Ask for the ping call in one tool-choice style and see how it comes back."""
    ask = model.bind_tools([PING_TOOL], **tool_turn_options(("ping",), style, parallel=False))
    started = time.perf_counter()
    message = ask.invoke([HumanMessage(content="Call the ping tool with ok set to true.")])
    elapsed = int((time.perf_counter() - started) * 1000)
    if getattr(message, "tool_calls", None):
        call = "native"
    else:
        call = "text" if recover_text_tool_calls(message_text(message), ("ping",)) else "none"
    tokens = int((getattr(message, "usage_metadata", None) or {}).get("output_tokens", 0) or 0)
    return ToolProbe(style, call, tokens, is_truncated(getattr(message, "response_metadata", None)), elapsed)


def probe_model(name: str, settings: Settings, role: str = "manager") -> ProbeResult:
    """Probe ``name`` on the endpoint and key ``role`` uses."""
    try:
        model = create_chat_model(name, role, settings, timeout_s=PROBE_TIMEOUT_S, max_tokens=PROBE_MAX_TOKENS)
    except SettingsError as error:  # e.g. the provider's package is not installed
        return ProbeResult(name, False, str(error))
    ask_json = model.with_structured_output(PING_SCHEMA, method=settings.structured_method, include_raw=True,
                                            **structured_options(settings.structured_method, settings.tool_choice))
    probes: list[ToolProbe] = []
    for style in dict.fromkeys((settings.tool_choice, *PROBE_STYLES)):
        try:
            probes.append(probe_tool_call(model, style))
        except Exception as error:  # noqa: BLE001 - every failure becomes one line
            if not probes:  # the configured style: unreachable, refused, unknown model
                return ProbeResult(name, False, verdict_for(error))
    advice = advise([probe.observation() for probe in probes], configured_policies(settings)["manager"].max_tokens)
    found = ProbeResult(name, False, "", tuple(probes), tuple(advice.exports()) if advice else ())
    configured = probes[0]
    if configured.call == "none" or (configured.call == "text" and settings.text_tool_calls != "recover"):
        written = "; calls written as text are refused (REINS_TEXT_TOOL_CALLS=refuse)" if configured.call == "text" else ""
        return replace(found, result=f"no tool calling (REINS_TOOL_CHOICE={settings.tool_choice}){written}")
    try:
        answer = ask_json.invoke([HumanMessage(content="Answer with a JSON object whose ok field is true.")])
        parsed = answer.get("parsed") if isinstance(answer, dict) else None
    except openai.LengthFinishReasonError:
        parsed = None
    except Exception as error:  # noqa: BLE001
        return replace(found, result=verdict_for(error))
    if not (isinstance(parsed, dict) and isinstance(parsed.get("ok"), bool)):
        return replace(found, result=f"no JSON-schema output (REINS_STRUCTURED_METHOD={settings.structured_method})")
    calling = "tool calling" if configured.call == "native" else "tool calls written as text (recovered)"
    return replace(found, ok=True, result=f"reachable; {calling} and {settings.structured_method} output work")

"""``reins doctor --check``: tiny requests per configured model, one line each, and the settings to use.

For every distinct configured model, fallbacks and escalation models included, it asks for one tool call in each
tool-choice style (the configured ``REINS_TOOL_CHOICE`` first, then ``required`` and ``auto``, the way
manager turns ask; every style, even when one fails or times out), one structured answer (the way
contracts ask, with ``REINS_STRUCTURED_METHOD``) and then sends each real contract schema of the roles
the model serves, exactly as a run sends it (``reins.runtime.llm.model_calls.sent_schema``), with a tiny output
bound: a schema the server refuses (llama.cpp: "failed to parse grammar") is named with the
provider's reason, redacted, in one line. Requests wait as long as the role's own timeout.

It says what is wrong in terms a user can act on: unreachable, auth failed, model not found, no tool
calling, no JSON-schema output, a refused schema. Per style it reports whether the call came back
natively or written as text, the output tokens, whether it ran to the bound or timed out; the
verdict is native / written as text / no tool calling, with the ``REINS_TOOL_CHOICE`` /
``REINS_TEXT_TOOL_CALLS`` / ``REINS_MAX_TOKENS_MANAGER`` lines to export and, for a server too slow
to write the task-list draft within its timeout, ``REINS_MAX_TOKENS_TASKLIST``
(``reins.policies.tools.call_advice``); a structured answer that fails with the configured
``REINS_STRUCTURED_METHOD`` is asked again with the other method, recommended when it answers. Apart from a refused schema's reason, provider messages are never
shown (they can carry request details); the cause class is.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import openai
from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from reins.policies.models.fallback import parse_model_entry
from reins.policies.text.redaction import redact
from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS
from reins.policies.models.text_tool_calls import recover_text_tool_calls
from reins.policies.tools.call_advice import (
    NO_TOOL_CALLING,
    ToolCallObservation,
    advise,
    other_structured_method,
    speed_bound,
    structured_method_advice,
    tool_call_verdict,
)
from reins.policies.models.tool_choice import tool_turn_options
from reins.policies.text.truncation import is_truncated
from reins.runtime.contracts.roles import CONTRACT_ROLES
from reins.runtime.llm.model_calls import sent_schema, structured_options
from reins.runtime.llm.failures import TIMEOUT_ERRORS, failure_cause
from reins.runtime.llm.messages import message_text
from reins.runtime.llm.models import configured_policies, entry_model
from reins.runtime.config.settings import ALL_ROLES, Settings, SettingsError
from reins.schemas.assistant import AssistantAnswer, AssistantIntent, AssistantReflection, AssistantReplan, AssistantSummary
from reins.schemas.delivery import (
    DeliveryPlan,
    DeliveryTasks,
    PolishedSummary,
    SupervisorPostGuidance,
    SupervisorPreDecision,
)
from reins.schemas.skills import SkillDraft
from reins.schemas.tasklist import PlanningDecision, TasklistStrategy

PROBE_STYLES = ("required", "auto")  # tried after the configured style
PROBE_MAX_TOKENS = 256
SCHEMA_PROBE_MAX_TOKENS = 16  # enough to see the server accept the schema and start the answer
REASON_LIMIT = 160
RATE_MIN_TOKENS = 64  # a shorter answer's time is mostly latency: no measure of generation speed
# The structured contracts a role's model is sent, with their schemas (a role is read from the
# contract's registration, so a contract routed to another role is probed there).
PROBED_SCHEMAS: dict[str, type[BaseModel]] = {
    "tasklist.planning_decision": PlanningDecision,
    "tasklist.strategy": TasklistStrategy,
    "delivery.supervisor_pre": SupervisorPreDecision,
    "delivery.plan": DeliveryPlan,
    "delivery.tasks": DeliveryTasks,
    **{spec.contract: spec.schema for spec in DEFAULT_REVIEWERS},
    "delivery.supervisor_post": SupervisorPostGuidance,
    "delivery.report_polish": PolishedSummary,
    "assistant.intent": AssistantIntent,
    "assistant.answer": AssistantAnswer,
    "assistant.reflection": AssistantReflection,
    "assistant.replan": AssistantReplan,
    "assistant.summary": AssistantSummary,
    "assistant.skill_draft": SkillDraft,
}
# Failures that are no statement about a tool-choice style: the other styles are not tried.
_NOT_STYLE_CAUSES = ("connection refused", "connection failed", "HTTP 401", "HTTP 403", "model not found")
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
    """One tool-call request in one style: what came back (``timeout`` and ``failed`` when nothing
    did, with the cause), the output tokens, the time it took."""

    style: str
    call: str  # native | text | none | timeout | failed
    output_tokens: int
    cut_off: bool
    ms: int
    failure: str = ""

    def observation(self) -> ToolCallObservation:
        return ToolCallObservation(self.style, self.call == "native", self.call == "text", self.output_tokens,
                                   self.cut_off)

    def line(self) -> str:
        if self.call == "timeout":
            return f"tool_choice {self.style}: timed out after {self.ms / 1000:.0f} s"
        if self.call == "failed":
            return f"tool_choice {self.style}: failed ({self.failure})"
        call = {"native": "native tool call", "text": "tool call written as text", "none": "no tool call"}[self.call]
        bound = ", ran to the output bound" if self.cut_off else ""
        return f"tool_choice {self.style}: {call}, {self.output_tokens} output tokens{bound}, {self.ms / 1000:.1f} s"


@dataclass(frozen=True)
class ProbeResult:
    model: str
    ok: bool
    result: str
    probes: tuple[ToolProbe, ...] = ()
    recommended: tuple[str, ...] = ()  # export lines (policies.tools.call_advice)
    verdict: str = ""  # native | written as text | no tool calling (empty: not probed)
    schemas: tuple[str, ...] = ()  # one line per contract schema the server refused or did not answer


def configured_models(settings: Settings) -> list[tuple[str, tuple[str, ...]]]:
    """Each distinct model a role is configured with, its fallbacks and escalation model included, as
    (name, the roles it serves), in role order; the same name on another endpoint or key is another
    model (an entry with its own endpoint is on that one whichever role names it)."""
    found: dict[tuple[str, str | None, str | None], tuple[str, list[str]]] = {}
    for role in ALL_ROLES:  # the assistant's task roles too: their contracts go to the model serving them
        name = settings.model_for(role)
        escalation = settings.escalation_for(role)
        for each in (name, *settings.fallbacks_for(role), *([escalation] if escalation else [])) if name else ():
            own = parse_model_entry(each)
            where = (own.base_url, own.key_variable) if own.base_url else (settings.base_url_for(role),
                                                                           settings.api_key_for(role))
            found.setdefault((each, *where), (each, []))[1].append(role)
    return [(name, tuple(roles)) for name, roles in found.values()]


def verdict_for(error: BaseException) -> str:
    """What a failed probe means for the user."""
    cause = failure_cause(error)
    if cause in ("connection refused", "connection failed", "timeout"):
        return f"unreachable ({cause})"
    if cause in ("HTTP 401", "HTTP 403"):
        return f"auth failed ({cause})"
    return cause


def provider_reason(error: BaseException) -> str:
    """The provider's own reason for refusing a request, redacted, one line (a refused schema's)."""
    body = getattr(error, "body", None)
    message = body.get("message") if isinstance(body, dict) else None
    text = " ".join(str(message or getattr(error, "message", "") or "").split())
    return redact(text, REASON_LIMIT) if text else ""


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


def _probe_styles(model: Any, styles: Sequence[str]) -> tuple[list[ToolProbe], BaseException | None]:
    """Every style in order; stops early only on a failure no style changes (unreachable, a wrong
    key, an unknown model), returned with the probes made so far."""
    probes: list[ToolProbe] = []
    for style in styles:
        started = time.perf_counter()
        try:
            probes.append(probe_tool_call(model, style))
        except Exception as error:  # noqa: BLE001 - every failure becomes one line
            ms = int((time.perf_counter() - started) * 1000)
            if failure_cause(error) in _NOT_STYLE_CAUSES:
                return probes, error
            timed_out = isinstance(error, TIMEOUT_ERRORS)
            probes.append(ToolProbe(style, "timeout" if timed_out else "failed", 0, False, ms,
                                    "" if timed_out else verdict_for(error)))
    return probes, None


def _tokens_per_s(probes: Sequence[ToolProbe]) -> float:
    """The fastest generation the probes saw, from answers long enough for generation to outweigh
    the request's latency (their time includes the prompt: a lower bound); 0 when none was."""
    rates = [p.output_tokens / (p.ms / 1000) for p in probes if p.output_tokens >= RATE_MIN_TOKENS and p.ms > 0]
    return max(rates, default=0.0)


def _bound_advice(probes: Sequence[ToolProbe], settings: Settings, roles: Sequence[str]) -> list[str]:
    """``REINS_MAX_TOKENS_TASKLIST`` when the task-list draft would not fit in its timeout here."""
    if "tasklist" not in roles:
        return []
    policy = configured_policies(settings)["tasklist"]
    bound = speed_bound(_tokens_per_s(probes), policy.timeout_s, policy.max_tokens)
    return [] if bound is None else [f"export REINS_MAX_TOKENS_TASKLIST={bound}"]


def probe_schemas(name: str, settings: Settings, roles: Sequence[str]) -> list[str]:
    """Each real contract schema of ``roles``, sent as a run sends it, with a tiny output bound: one
    line per schema the server refused (with its reason) or did not answer in time."""
    problems: list[str] = []
    seen: set[type[BaseModel]] = set()
    for contract, schema in PROBED_SCHEMAS.items():
        role = CONTRACT_ROLES.get(contract)
        if role not in roles or schema in seen:
            continue
        seen.add(schema)
        model = entry_model(name, role, settings, max_tokens=SCHEMA_PROBE_MAX_TOKENS)
        ask = model.with_structured_output(copy.deepcopy(sent_schema(schema)), method=settings.structured_method,
                                           include_raw=True,
                                           **structured_options(settings.structured_method, settings.tool_choice))
        try:
            ask.invoke([HumanMessage(content="Answer with a JSON object that satisfies the schema.")])
        except openai.LengthFinishReasonError:
            pass  # accepted, and cut off at the tiny bound as intended
        except Exception as error:  # noqa: BLE001 - every failure becomes one line
            cause = verdict_for(error)
            if isinstance(error, openai.APIStatusError):
                reason = provider_reason(error)
                problems.append(f"schema {schema.__name__} ({contract}) refused: {cause}" + (f" - {reason}" if reason else ""))
            elif isinstance(error, TIMEOUT_ERRORS):
                problems.append(f"schema {schema.__name__} ({contract}): no answer within the {role} timeout")
            else:
                problems.append(f"schema {schema.__name__} ({contract}): {cause}")
                break  # unreachable: the rest would say the same
    return problems


def probe_structured(model: Any, settings: Settings, method: str) -> tuple[bool, BaseException | None]:
    """Whether one structured answer comes back parsed with ``method``; the error when the request failed."""
    ask_json = model.with_structured_output(PING_SCHEMA, method=method, include_raw=True,
                                            **structured_options(method, settings.tool_choice))
    try:
        answer = ask_json.invoke([HumanMessage(content="Answer with a JSON object whose ok field is true.")])
    except openai.LengthFinishReasonError:
        return False, None
    except Exception as error:  # noqa: BLE001 - every failure becomes one line
        return False, error
    parsed = answer.get("parsed") if isinstance(answer, dict) else None
    return isinstance(parsed, dict) and isinstance(parsed.get("ok"), bool), None


def probe_model(name: str, settings: Settings, roles: str | Sequence[str] = "manager") -> ProbeResult:
    """Probe ``name`` on the endpoint and key its roles use, each request waiting as long as its
    role's own timeout (the tool calls: the manager's when the model serves it, whose turns they are)."""
    roles = (roles,) if isinstance(roles, str) else tuple(roles)
    role = "manager" if "manager" in roles else roles[0]
    try:
        model = entry_model(name, role, settings, max_tokens=PROBE_MAX_TOKENS)
    except SettingsError as error:  # e.g. the provider's package is not installed
        return ProbeResult(name, False, str(error))
    probes, stopped = _probe_styles(model, dict.fromkeys((settings.tool_choice, *PROBE_STYLES)))
    if stopped is not None:
        return ProbeResult(name, False, verdict_for(stopped), tuple(probes))
    observations = [probe.observation() for probe in probes]
    advice = advise(observations, configured_policies(settings)["manager"].max_tokens)
    verdict = tool_call_verdict(observations)
    exports = [*(advice.exports() if advice else ()), *_bound_advice(probes, settings, roles)]
    found = ProbeResult(name, False, "", tuple(probes), tuple(exports), verdict)
    if all(probe.call in ("timeout", "failed") for probe in probes):
        timeout = configured_policies(settings)[role].timeout_s
        if all(probe.call == "timeout" for probe in probes):
            return replace(found, verdict="", result=f"no answer within {timeout:g} s in any tool-choice style "
                                                     f"(REINS_TIMEOUT_{role.upper()} gives it longer)")
        return replace(found, verdict="", result=next(p.failure for p in probes if p.call == "failed"))
    configured = probes[0]
    if verdict == NO_TOOL_CALLING:
        return replace(found, result="no tool calling in any tool-choice style: point REINS_MODEL_MANAGER at a "
                                     "model that calls tools")
    if configured.call not in ("native", "text") or (configured.call == "text" and settings.text_tool_calls != "recover"):
        written = "; calls written as text are refused (REINS_TEXT_TOOL_CALLS=refuse)" if configured.call == "text" else ""
        state = "timed out" if configured.call == "timeout" else "no tool calling"
        return replace(found, result=f"{state} (REINS_TOOL_CHOICE={settings.tool_choice}){written}; "
                                     f"tool calls: {verdict} (see recommended)")
    method = settings.structured_method
    answered, error = probe_structured(model, settings, method)
    if not answered:
        other = other_structured_method(method)
        worked = {method: False, **({other: probe_structured(model, settings, other)[0]} if other else {})}
        advice = structured_method_advice(method, worked)
        result = verdict_for(error) if error is not None else f"no JSON-schema output (REINS_STRUCTURED_METHOD={method})"
        if advice:
            return replace(found, result=f"{result}; {other} works (see recommended)",
                           recommended=(*found.recommended, advice))
        return replace(found, result=result)
    schemas = tuple(probe_schemas(name, settings, roles))
    if schemas:
        return replace(found, schemas=schemas, result=f"{len(schemas)} contract schema(s) not usable: see below")
    calling = "tool calling" if configured.call == "native" else "tool calls written as text (recovered)"
    return replace(found, ok=True, result=f"reachable; {calling} and {settings.structured_method} output work")

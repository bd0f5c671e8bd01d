"""The turn's state read into the inputs of the call gate (``reins.policies.tools.gate``): the
provenance record, the tools' declarations, the user's rules and hosts, the loop state. The gate
decides; this module only converts, in one call per step."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.runtime import Runtime

from reins.nodes.assistant.context import AssistantContext
from reins.nodes.assistant.state import AssistantState
from reins.policies.tools.data_flow import FlowTool
from reins.policies.tools.gate import GateSettings, GateTool, LoopState, PastCall, ProposedCall
from reins.policies.tools.provenance import Source, sources_of, untrusted_seen
from reins.runtime.config.settings import Settings
from reins.runtime.tools.flow_rules import rules_in_force
from reins.runtime.tools.registry import RegisteredTool, ScopedTools
from reins.schemas.assistant import AssistantStep

AFTER_UNTRUSTED = "reins_after_untrusted"  # on a reply's message: written after untrusted content


def gate_tool(tool: RegisteredTool) -> GateTool:
    return GateTool(tool.trait, FlowTool(tool.name, tool.read_only, tool.sinks, tool.actions, tool.egress, tool.free))


def gate_settings(runtime: Runtime[AssistantContext] | None) -> GateSettings:
    """The flow rules in force (the run's, else the user's settings) and the user's allow-list of
    hosts, from one read of the settings."""
    settings = Settings.from_env()
    context = getattr(runtime, "context", None)
    rules = rules_in_force(getattr(context, "flow_rules", None), settings.flow_rules)
    return GateSettings(tuple(rules), tuple(settings.http_allowlist))


def provenance(state: AssistantState, tools: ScopedTools) -> tuple[Source, ...]:
    """The turn's provenance record: the user's words, recalled notes, earlier replies (those written
    after untrusted content marked so) and every tool result so far (an answer to ``ask_user`` is the
    user's)."""
    conversation = state.get("conversation", [])
    replies = [t for t in conversation if t.get("role") != "user"]
    return sources_of(
        state.get("request", ""),
        [t["text"] for t in conversation if t.get("role") == "user"],
        state.get("records", []),
        state.get("recollections", []),
        [t["text"] for t in replies if not t.get("after_untrusted")],
        {tool.name for tool in tools if tool.asks_user},
        replies_after_untrusted=[t["text"] for t in replies if t.get("after_untrusted")],
    )


def after_untrusted_mark(state: AssistantState, tools: ScopedTools) -> dict[str, bool]:
    """What a reply written now carries (its message's ``additional_kwargs``): whether untrusted
    content had entered the turn, so later turns count the reply as untrusted content."""
    return {AFTER_UNTRUSTED: True} if untrusted_seen(provenance(state, tools)) else {}


def replied_after_untrusted(message: Any) -> bool:
    return bool((getattr(message, "additional_kwargs", None) or {}).get(AFTER_UNTRUSTED))


def gate_inputs(state: AssistantState, runtime: Runtime[AssistantContext] | None, tools: ScopedTools,
                proposed: AssistantStep, max_steps: int) -> dict[str, Any]:
    """Everything ``decide_calls`` takes, as keyword arguments."""
    records: Sequence = state.get("records", [])
    loop = LoopState(tuple(PastCall(r["tool"], r.get("args") or {}, bool(r.get("ok"))) for r in records),
                     state.get("steps_taken", 0), max_steps, tuple(state.get("allowed_tools") or ()))
    return {"calls": [ProposedCall(c.tool, dict(c.args)) for c in proposed.calls],
            "sources": provenance(state, tools), "request": state.get("request", ""),
            "tools": tuple(gate_tool(tool) for tool in tools), "settings": gate_settings(runtime), "loop": loop}

"""The data-flow hook of the tool loop: ``propose_step`` asks ``reins.policies.tools.data_flow`` about each
proposed call and stores the decision on the pending call; ``execute_tool`` follows it and adds
where each sink value came from to the approval pause. The policy decides; this module only reads
the turn's state and the tools' declarations into its inputs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.runtime import Runtime

from reins.nodes.assistant.context import AssistantContext
from reins.nodes.assistant.state import AssistantState, FlowRecord, PendingCall
from reins.policies.tools.data_flow import FlowDecision, FlowTool, TurnRecord, action_words, decide, provenance_lines
from reins.policies.audit.flow_replay import flow_record
from reins.policies.tools.provenance import Source, sources_of, untrusted_seen
from reins.policies.tools.approval import Approval
from reins.runtime.tools.flow_rules import rules_in_force
from reins.runtime.tools.registry import RegisteredTool, ScopedTools
from reins.runtime.config.settings import Settings
from reins.schemas.flow_rules import FlowRule

FLOW = "flow"  # the key of the decision on a pending call
AFTER_UNTRUSTED = "reins_after_untrusted"  # on a reply's message: written after untrusted content


def rules_for(runtime: Runtime[AssistantContext] | None, settings: Settings | None = None) -> tuple[FlowRule, ...]:
    context = getattr(runtime, "context", None)
    return rules_in_force(getattr(context, "flow_rules", None), (settings or Settings.from_env()).flow_rules)


def flow_inputs(runtime: Runtime[AssistantContext] | None) -> tuple[tuple[FlowRule, ...], tuple[str, ...]]:
    """The rules in force and the user's allow-list of hosts, from one read of the settings."""
    settings = Settings.from_env()
    return rules_for(runtime, settings), tuple(settings.http_allowlist)


def flow_tool(tool: RegisteredTool) -> FlowTool:
    return FlowTool(tool.name, tool.read_only, tool.sinks, tool.actions, tool.egress, tool.free)


def turn_sources(state: AssistantState, tools: ScopedTools) -> tuple[Source, ...]:
    """The turn's provenance record: the user's words, recalled notes, earlier replies (those written
    after untrusted content marked so) and every tool result so far."""
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
    return {AFTER_UNTRUSTED: True} if untrusted_seen(turn_sources(state, tools)) else {}


def replied_after_untrusted(message: Any) -> bool:
    return bool((getattr(message, "additional_kwargs", None) or {}).get(AFTER_UNTRUSTED))


def turn_record(state: AssistantState, tools: ScopedTools, rules: Sequence[FlowRule],
                planned: Sequence[str] = (), allow_list: Sequence[str] | None = None) -> TurnRecord:
    """The turn's provenance record: the user's words, recalled notes, earlier replies and every tool
    result so far; the calls made (and those already let through in this step); the user's
    allow-list of hosts (``REINS_HTTP_ALLOWLIST``) and the action words of the tools in scope."""
    allow_list = tuple(Settings.from_env().http_allowlist if allow_list is None else allow_list)
    sources = turn_sources(state, tools)

    def read_only(name: str) -> bool:
        tool = tools.get(name)
        return bool(tool and tool.read_only)

    calls = tuple((r["tool"], read_only(r["tool"])) for r in state.get("records", []) if r.get("ok"))
    calls += tuple((name, read_only(name)) for name in planned)
    vocabulary = tuple(dict.fromkeys(word for tool in tools for word in action_words(flow_tool(tool))))
    made = tuple((r["tool"], r.get("args") or {}) for r in state.get("records", []) if r.get("ok"))
    return TurnRecord(sources, state.get("request", ""), calls, tuple(rules), allow_list, vocabulary, made)


def flow_decision(base: Approval, tool: RegisteredTool | None, args: Mapping[str, Any], turn: TurnRecord
                  ) -> FlowDecision:
    if tool is None:
        return FlowDecision(base)
    return decide(base, flow_tool(tool), args, turn)


def flow_records(pending: Sequence[PendingCall], tools: ScopedTools, flows: Sequence[FlowDecision]) -> list[FlowRecord]:
    """The replay's record of each let-through call (``flows`` in the same order as ``pending``)."""
    records = []
    for call, decision in zip(pending, flows):
        tool = tools.get(call["tool"])
        base: Approval = tool.trait if tool is not None else "ask"
        records.append(flow_record(call["n"], call["tool"], bool(tool and tool.read_only), base, decision))
    return records  # type: ignore[return-value]


def stored(decision: FlowDecision) -> dict[str, Any]:
    """The decision as plain data on the pending call (checkpointed with it)."""
    return {"execution": decision.execution, **decision.payload(),
            "lines": provenance_lines(decision.origins)}


def execution_of(call: PendingCall, base: Approval) -> str:
    """The execution the policy stored on the call (never looser than ``base``)."""
    flow = call.get(FLOW) or {}  # type: ignore[call-overload]
    execution = flow.get("execution")
    return execution if execution in ("ask", "question", "refuse") and base != "question" else base


def pause_details(call: Mapping[str, Any]) -> dict[str, Any]:
    """What an approval prompt adds: each sink value's origin and why the call pauses."""
    flow = call.get(FLOW) or {}
    return {"provenance": list(flow.get("provenance", [])), "pause_reasons": list(flow.get("pause_reasons", []))}


def pause_text(call: Mapping[str, Any]) -> str:
    """The same for a person reading the thread: one line per reason and per sink value."""
    flow = call.get(FLOW) or {}
    lines = [f"It asks because {reason}." for reason in flow.get("pause_reasons", [])]
    lines += [f"- {line}" for line in flow.get("lines", [])]
    return "\n".join(lines)

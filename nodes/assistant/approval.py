"""A side-effecting call's approval: asked before the call runs, bound to the exact call, taken once.

The pause names the tool, its exact arguments and the fingerprint of both (with the policy that
asked); a decision naming another fingerprint is stale. A valid decision is *claimed* in the
thread's checkpoint (``reins.runtime.execution.dispatch``) before anything happens: of two resumes racing for the same
pause, one runs the call and the other raises ``DecisionTaken``. The claim of an approved call is its
dispatch record, naming the process that holds it, whose lease it renews while the call runs
(``reins.runtime.execution.lease``). While that holder is live the pause is shown as a call that is
running, and every decision on it is refused. When the holder ended (or went silent) before the
call's result was saved, the pause is shown as a different question — the call may already have
run — and only ``run_again`` runs it again (``mark_done`` and ``skip`` do not).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import interrupt

from reins.policies.tools.approvals import (
    APPROVAL_POLICY,
    RECOVERY_DECISIONS,
    Claim,
    already_taken,
    call_fingerprint,
    claim_kind,
    next_attempt,
    open_claim,
    read_any,
    recovery_observation,
    refusal,
)
from reins.policies.tools.claims import still_running, why_unfinished
from reins.policies.tools.elicitation import question_payload, server_reply
from reins.policies.tools.calls import APPROVAL_DECISIONS, read_answer, rejection_observation
from reins.runtime.execution.dispatch import ReadClaims, TakeClaim, new_claim, thread_claims
from reins.runtime.execution.lease import Lease
from reins.runtime.tools.mcp_tools import SESSIONS
from reins.runtime.tools.registry import RegisteredTool
from reins.runtime.tools.runner import arg_issues
from reins.runtime.execution.user_input import DecisionTaken, running_checkpoint

APPROVAL = "tool_approval"
QUESTION = "question"
POSSIBLY_RAN = "possibly_ran"  # how readers show an approval whose dispatched call has no result yet
RUNNING = "running"  # how readers show an approval whose call runs now, in the claim's holder
SKILL_DRAFT = "skill_draft"  # a skill draft offered for a person's approval (nodes.assistant.skill_drafts)
PAUSE_KINDS = (APPROVAL, QUESTION, POSSIBLY_RAN, RUNNING, SKILL_DRAFT)

# A server's question whose call no longer waits in this process (it restarted, or another one asked).
LOST_QUESTION = ("the MCP server {server!r} asked inside a call that is not running here any more (it was not sent "
                 "again and may have partly run); send a new message to go on")

# A server's question another resume of this thread answered first.
ANSWERED_QUESTION = "the question of the MCP server {server!r} was answered already (by another resume)"

_NOTES = {"approve": "approved", "edit": "approved with edited arguments", "run_again": "run again by the user",
          "reject": "rejected by the user", "mark_done": "marked done by the user", "skip": "skipped by the user"}


def approval_payload(tool: RegisteredTool, args: Mapping[str, Any], fingerprint: str,
                     error: str = "", details: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What a person sees before a side-effecting call: the tool, its exact arguments, the
    fingerprint a decision may carry, the shapes of the decisions allowed (and why the last
    decision was refused); ``details``: where each sink value came from and why the call pauses
    (the data-flow hook)."""
    payload = {"kind": APPROVAL, "tool": tool.name, "args": dict(args), "read_only": tool.read_only,
               "description": tool.description, "fingerprint": fingerprint, "policy": APPROVAL_POLICY,
               "allowed_decisions": [dict(d) for d in APPROVAL_DECISIONS], **(details or {})}
    return {**payload, "error": error} if error else payload


def edit_problem(tool: RegisteredTool, args: Mapping[str, Any]) -> str:
    issues = arg_issues(tool, args)
    return ("edited args do not fit the tool's schema: " + ", ".join(f"{i['path']} {i['code']}" for i in issues)
            if issues else "")


@dataclass(frozen=True)
class Approval:
    """What a taken decision does: run ``args`` (when not None) under ``lease`` (its claim's, renewed
    while it runs), or record ``observation``."""

    args: dict[str, Any] | None
    note: str
    observation: str = ""
    ok: bool = False
    failure: str = ""
    lease: Lease | None = None
    thread: bool = False  # approved for the rest of the thread too


def _lease(where: tuple[Any, dict[str, Any]] | None, fingerprint: str, claim: Claim) -> Lease | None:
    return Lease(where[0], where[1], fingerprint, claim.attempt, claim.token) if where else None


def _taken(decision_kind: str, reason: str, run_args: dict[str, Any], latest: Claim | None,
           lease: Lease | None = None, thread: bool = False) -> Approval:
    note = _NOTES.get(decision_kind, decision_kind)
    if decision_kind == "reject":
        return Approval(None, note, rejection_observation(reason), failure="rejected")
    if decision_kind in ("mark_done", "skip") and latest is not None:
        observation = recovery_observation(decision_kind, latest)
        return Approval(None, note, observation, ok=decision_kind == "mark_done",
                        failure="" if decision_kind == "mark_done" else "skipped")
    if thread:
        note += "; allowed for the rest of this thread"
    return Approval(run_args, note, lease=lease, thread=thread)


def approve(tool: RegisteredTool, args: dict[str, Any], config: RunnableConfig,
            details: Mapping[str, Any] | None = None, *, running: bool = False):
    """Pause until a decision is taken on this exact call, claim it, return what it does.
    Raises ``DecisionTaken`` when another resume took it first. ``running``: this node's own approved
    call is still in flight here, waiting on its server's question (the node re-runs after that
    pause): the open claim is its own, and the call goes on with the arguments claimed."""
    fingerprint = call_fingerprint(tool.name, args)
    where = running_checkpoint(config)
    error = ""
    while True:
        decision = read_any(interrupt(approval_payload(tool, args, fingerprint, error, details)), fingerprint, tool.name)
        error = decision.problem or (edit_problem(tool, decision.args or {}) if decision.kind == "edit" else "")
        if error:
            continue
        claims: list[Claim] = (yield ReadClaims(*where, fingerprint)) if where else []
        latest = open_claim(claims)
        if running and latest is not None:
            return _taken(decision.kind, decision.reason, dict(latest.args or {}), None,
                          _lease(where, fingerprint, latest), decision.thread)
        problem = refusal(decision.kind, claims, tool.name)
        if problem and latest is not None:
            raise DecisionTaken(problem)
        if problem:
            error = problem
            continue
        run_args = dict(latest.args or {}) if latest else dict(decision.args or args)
        claim = new_claim(next_attempt(claims), claim_kind(decision.kind), tool.name, run_args)
        if where and not (yield TakeClaim(*where, fingerprint, claim)):
            raise DecisionTaken(already_taken(tool.name, open_claim((yield ReadClaims(*where, fingerprint))) or claim))
        return _taken(decision.kind, decision.reason, run_args, latest, _lease(where, fingerprint, claim),
                      decision.thread)


def ask_for_server(question: Mapping[str, Any]) -> dict[str, Any]:
    """Pause with an MCP server's question (as ``ask_user`` does) until an answer fits its fields;
    the reply that goes back to the server (``reins.policies.tools.elicitation``)."""
    shown = question_payload(str(question.get("server", "")), str(question.get("message", "")), question.get("schema"))
    error = ""
    while True:
        payload = {"kind": QUESTION, **shown, "server": question.get("server", ""), "call": question.get("call", "")}
        answer, error = read_answer(interrupt({**payload, "error": error} if error else payload), shown["options"])
        if not error:
            reply, error = server_reply(answer, question.get("schema"))
            if reply is not None:
                return reply


def ask(args: Mapping[str, Any]) -> str:
    """Pause with the question until a valid answer; the answer is the observation."""
    options = args.get("options") or None
    error = ""
    while True:
        payload = {"kind": QUESTION, "question": args.get("question", ""), "options": options}
        answer, error = read_answer(interrupt({**payload, "error": error} if error else payload), options)
        if not error:
            return answer


# ------------------------------------------------------------------------------------ readers


def _fingerprint_of(payload: Mapping[str, Any]) -> str:
    return str(payload.get("fingerprint") or call_fingerprint(str(payload.get("tool", "")), payload.get("args") or {}))


def as_shown(payload: Mapping[str, Any], claims: Mapping[str, Sequence[Claim]]) -> dict[str, Any]:
    """A pause as a person should see it: an approval whose decision a live holder is carrying out is
    a call that is running (where, since when; nothing to decide); one dispatched whose holder is
    gone or silent, with no recorded result, is the question "it may already have run"."""
    latest = open_claim(claims.get(_fingerprint_of(payload), [])) if payload.get("kind") == APPROVAL else None
    if latest is None:
        return dict(payload)
    holder = latest.held_by()
    shown = {**{k: v for k, v in payload.items() if k != "error"}, "args": dict(latest.args or {}),
             "dispatched_at": latest.dispatched_at, "decision_taken": latest.kind, "claim": latest.state,
             "holder": holder.label() if holder else ""}
    if latest.live:
        return {**shown, "kind": RUNNING, "allowed_decisions": [],
                "status": still_running(str(payload.get("tool", "")), holder, latest.dispatched_at, latest.kind)}
    return {**shown, "kind": POSSIBLY_RAN, "why": why_unfinished(latest.state, holder),
            "allowed_decisions": [dict(d) for d in RECOVERY_DECISIONS]}


def open_pauses(graph: Any, config: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The assistant's open pauses on a thread (approvals, questions, calls that may have run).

    Example: ``open_pauses(chat, {"configurable": {"thread_id": "notes-1"}})[0]["tool"]``
    """
    snapshot = graph.get_state(config)
    claims = thread_claims(graph.checkpointer, config) if snapshot.interrupts else {}
    return [as_shown(i.value, claims) for i in snapshot.interrupts
            if isinstance(i.value, Mapping) and i.value.get("kind") in PAUSE_KINDS]


def _pairs(interrupts: Sequence[Any], value: Any) -> list[tuple[Mapping[str, Any], Any]]:
    """Which pause each part of a resume answers: ``{interrupt_id: value}`` or one value for all."""
    by_id = {getattr(i, "id", None): i.value for i in interrupts}
    if isinstance(value, Mapping) and value and all(key in by_id for key in value):
        return [(by_id[key], answer) for key, answer in value.items() if isinstance(by_id[key], Mapping)]
    return [(i.value, value) for i in interrupts if isinstance(i.value, Mapping)]


def resume_refusal(interrupts: Sequence[Any], claims: Mapping[str, Sequence[Claim]], value: Any) -> str:
    """Why ``value`` cannot answer the thread's pauses ("" when it can) — checked before LangGraph
    stores it, so a refused value leaves the pause as it was. The edit's schema is the node's check
    (it keeps the call paused too)."""
    if not interrupts:
        return "the thread is not waiting for a decision (it may already have been taken)"
    for payload, answer in _pairs(interrupts, value):
        call = str(payload.get("call") or "")
        if payload.get("kind") == QUESTION and call and not SESSIONS.waiting(call):
            problem = (ANSWERED_QUESTION if SESSIONS.answered(call) else LOST_QUESTION).format(
                server=payload.get("server", ""))
        elif payload.get("kind") == QUESTION:
            problem = read_answer(answer, payload.get("options"))[1]
        elif payload.get("kind") == APPROVAL:
            fingerprint = _fingerprint_of(payload)
            decision = read_any(answer, fingerprint, str(payload.get("tool", "")))
            problem = decision.problem or refusal(decision.kind, claims.get(fingerprint, []), str(payload.get("tool")))
        else:
            continue
        if problem:
            return problem
    return ""


def asked_again(interrupts: Sequence[Any], value: Any) -> str:
    """The problem of ``value`` itself that its paused node answers by asking again with it as the
    pause's ``error`` (a decision or an answer that does not fit), "" when there is none: under a
    LangGraph Server such a value goes on to the node instead of failing the run."""
    for payload, answer in _pairs(interrupts, value):
        call = str(payload.get("call") or "")
        if payload.get("kind") == QUESTION and call and not SESSIONS.waiting(call):
            return ""  # answered elsewhere or lost: nothing to ask again
        if payload.get("kind") == QUESTION:
            problem = read_answer(answer, payload.get("options"))[1]
        elif payload.get("kind") == APPROVAL:
            problem = read_any(answer, _fingerprint_of(payload), str(payload.get("tool", ""))).problem
        else:
            continue
        if problem:
            return problem
    return ""


def resume_problem(payload: Mapping[str, Any], value: Any, tools: Any) -> str:
    """Why ``value`` cannot answer the pause ``payload`` as shown (``as_shown``), "" when it can:
    the node's rules, so a caller can refuse a decision before resuming."""
    if payload.get("kind") == QUESTION:
        return read_answer(value, payload.get("options"))[1]
    fingerprint = _fingerprint_of(payload)
    decision = read_any(value, fingerprint, str(payload.get("tool", "")))
    if not decision.valid:
        return decision.problem
    if payload.get("kind") == RUNNING:  # nothing is decided while the call runs
        return str(payload.get("status") or f"{payload.get('tool')} is still running")
    if payload.get("kind") == POSSIBLY_RAN:
        if decision.kind not in {d["type"] for d in RECOVERY_DECISIONS}:
            claim = Claim(0, payload.get("decision_taken", "run"), "", str(payload.get("dispatched_at", "")))
            return already_taken(str(payload.get("tool")), claim)
        return ""
    if decision.kind in {d["type"] for d in RECOVERY_DECISIONS}:
        return refusal(decision.kind, [], str(payload.get("tool")))
    tool = tools.get(str(payload.get("tool", "")))
    return edit_problem(tool, decision.args or {}) if decision.kind == "edit" and tool is not None else ""

"""The delivery chain's routing: the verdicts its deciding nodes record, and the edges that read state.

Three nodes decide and route with ``Command``: ``supervisor_pre`` (its branch, and the exact
reviewer-role check before any worker starts), ``manager`` (the delegation policy on every turn it
proposes) and ``manager_refused`` (the policy's re-ask budget). Each records its verdict in state —
``delegation``, and for a run the policy stops ``failure`` with ``policy_violation`` — so
``fail_closed`` reads why instead of working it out again. A refused turn routes to
``manager_refused`` (the proposed tool never runs and nothing goes back to the model); an allowed
one routes to its worker, or fans the review group out with ``Send`` — one reviewer per role, all
holding the same plan/tasks snapshot. The remaining edges only read state.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import get_args

from langgraph.types import Send

from policies.delegation import (
    MANAGER,
    PLAN_TOOL,
    REVIEW_ROLE_OF_TOOL,
    TASK_TOOL,
    DelegationLedger,
    DelegationPolicy,
    ProposedCall,
    Violation,
    check_delegation,
)
from policies.redaction import redact
from policies.revision import post_review_allowed
from nodes.delivery.common import without_markdown
from nodes.delivery.state import (
    AfterManager,
    AfterPre,
    AfterRefusal,
    DelegationVerdict,
    DeliveryState,
    Failure,
    PolicyViolation,
    ProposedToolCall,
    ReviewerTask,
)

# Path maps and Command destinations, so LangGraph Studio draws every branch.
AFTER_LOAD = ("supervisor_pre", "fail_closed")
AFTER_PRE: tuple[str, ...] = get_args(AfterPre)
AFTER_MANAGER: tuple[str, ...] = get_args(AfterManager)
AFTER_REFUSAL: tuple[str, ...] = get_args(AfterRefusal)
AFTER_WORKER = ("manager", "fail_closed")
AFTER_SYNTHESIS = ("supervisor_post", "render_report")
AFTER_POST = ("revise_plan", "revise_tasks", "render_report")
AFTER_PLAN_REVISION = ("revise_tasks", "render_report")


def ledger(state: DeliveryState) -> DelegationLedger:
    artifacts = frozenset(kind for kind in ("plan", "tasks") if state.get(kind))
    return DelegationLedger(executed=tuple(state.get("delegated", [])), artifacts=artifacts, caller=MANAGER)


def violation_record(violation: Violation) -> PolicyViolation:
    return PolicyViolation(code=violation.code, message=violation.message)


def stopped_by_policy(stage: str, violation: PolicyViolation) -> DeliveryState:
    """The state update of a run a policy stops: why it fails closed, and the rule it broke."""
    return {
        "failure": Failure(stage=stage, code=violation["code"], message=violation["message"]),
        "policy_violation": violation,
    }


def delegation_verdict(
    calls: Sequence[ProposedToolCall], state: DeliveryState, policy: DelegationPolicy
) -> DelegationVerdict:
    """The delegation policy on the turn the manager just proposed, and where the run goes with it."""
    proposed = [ProposedCall(call["name"], call.get("args") or {}) for call in calls]
    violation = check_delegation(proposed, ledger(state), policy)
    if violation:
        return DelegationVerdict(next="manager_refused", violation=violation_record(violation))
    names = [call["name"] for call in calls]
    worker: AfterManager = "plan_worker" if names == [PLAN_TOOL] else "task_worker" if names == [TASK_TOOL] else "reviewer"
    return DelegationVerdict(next=worker, violation=None)


def refusals_in_turn(state: DeliveryState) -> int:
    """Refusals recorded for the manager turn now open (since the last sub-agent ran)."""
    executed = len(state.get("delegated", []))
    return sum(1 for record in state.get("manager_refusals", []) if record["executed"] == executed)


def reviewer_sends(state: DeliveryState, calls: Sequence[ProposedToolCall]) -> list[Send]:
    """One reviewer per review call, in call order, each with the same snapshot of plan and tasks."""
    plan = without_markdown(state["plan"]["value"])
    tasks = without_markdown(state["tasks"]["value"])
    focus = state["pre_decision"].get("review_focus", {})
    sends = []
    for call in calls:
        role = REVIEW_ROLE_OF_TOOL[call["name"]]
        task = ReviewerTask(
            role=role,
            tool=call["name"],
            run_id=state["run_id"],
            requirement_text=state["requirement_text"],
            context_blocks=state["context_blocks"],
            plan=plan,
            tasks=tasks,
            focus=focus.get(role, ""),
            note=redact((call.get("args") or {}).get("note") or "", 200),
        )
        sends.append(Send("reviewer", task))
    return sends


def route_after_load(state: DeliveryState) -> str:
    return "fail_closed" if state.get("failure") else "supervisor_pre"


def route_after_worker(state: DeliveryState) -> str:
    return "fail_closed" if state.get("failure") else "manager"


def route_after_synthesis(state: DeliveryState) -> str:
    return "supervisor_post" if post_review_allowed(state["review_bundle"]) else "render_report"


def route_after_post(state: DeliveryState) -> str:
    targets = state["post_review_decision"]["revision_targets"]
    if "plan" in targets:
        return "revise_plan"
    if "tasks" in targets:
        return "revise_tasks"
    return "render_report"


def route_after_plan_revision(state: DeliveryState) -> str:
    return "revise_tasks" if "tasks" in state["post_review_decision"]["revision_targets"] else "render_report"

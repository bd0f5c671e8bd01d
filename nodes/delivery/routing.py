"""The delivery chain's conditional edges. Each reads structured state and asks a pure policy.

The edge after every manager turn is where the delegation policy runs: a violation routes to
``manager_refused`` (the proposed tool never runs and nothing goes back to the model), after which the
policy's re-ask budget either asks the identical turn again or routes to ``fail_closed``; an allowed
turn routes to its worker, or fans the review group out with ``Send`` — one reviewer per role, all
holding the same plan/tasks snapshot.
"""

from __future__ import annotations

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
    reask_allowed,
    validate_exact_reviewer_roles,
)
from policies.redaction import redact
from policies.revision import post_review_allowed
from nodes.delivery.common import DeliveryDeps, progress, without_markdown
from nodes.delivery.state import DeliveryState, ReviewerTask

# Path maps, so LangGraph Studio draws every branch.
AFTER_LOAD = ("supervisor_pre", "fail_closed")
AFTER_PRE = ("manager", "render_report", "fail_closed")
AFTER_MANAGER = ("plan_worker", "task_worker", "reviewer", "manager_refused", "fail_closed")
AFTER_REFUSAL = ("manager", "fail_closed")
AFTER_WORKER = ("manager", "fail_closed")
AFTER_SYNTHESIS = ("supervisor_post", "render_report")
AFTER_POST = ("revise_plan", "revise_tasks", "render_report")
AFTER_PLAN_REVISION = ("revise_tasks", "render_report")


def ledger(state: DeliveryState) -> DelegationLedger:
    artifacts = frozenset(kind for kind in ("plan", "tasks") if state.get(kind))
    return DelegationLedger(executed=tuple(state.get("delegated", [])), artifacts=artifacts, caller=MANAGER)


def pending(state: DeliveryState) -> list[ProposedCall]:
    return [ProposedCall(call["name"], call.get("args") or {}) for call in state.get("pending_calls", [])]


def delegation_violation(state: DeliveryState, policy: DelegationPolicy) -> Violation | None:
    return check_delegation(pending(state), ledger(state), policy)


def refusals_in_turn(state: DeliveryState) -> int:
    """Refusals recorded for the manager turn now open (since the last sub-agent ran)."""
    executed = len(state.get("delegated", []))
    return sum(1 for record in state.get("manager_refusals", []) if record["executed"] == executed)


def roles_violation(state: DeliveryState) -> Violation | None:
    decision = state.get("pre_decision") or {}
    return validate_exact_reviewer_roles(decision.get("reviewer_roles", []))


def route_after_load(state: DeliveryState) -> str:
    return "fail_closed" if state.get("failure") else "supervisor_pre"


def route_after_pre(state: DeliveryState) -> str:
    if state.get("failure"):
        return "fail_closed"
    if state["pre_decision"]["branch"] != "execute":
        return "render_report"
    # The supervisor's declared reviewer set is checked before any worker starts.
    return "fail_closed" if roles_violation(state) else "manager"


def reviewer_tasks(state: DeliveryState) -> list[ReviewerTask]:
    """One task per review call, in call order, each with the same snapshot of plan and tasks."""
    plan = without_markdown(state["plan"]["value"])
    tasks = without_markdown(state["tasks"]["value"])
    focus = state["pre_decision"].get("review_focus", {})
    result = []
    for call in state["pending_calls"]:
        role = REVIEW_ROLE_OF_TOOL[call["name"]]
        result.append(
            ReviewerTask(
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
        )
    return result


def make_route_after_manager(deps: DeliveryDeps):
    def route_after_manager(state: DeliveryState) -> str | list[Send]:
        if state.get("failure"):
            return "fail_closed"
        if delegation_violation(state, deps.policy):
            return "manager_refused"
        names = [call["name"] for call in state["pending_calls"]]
        if names == [PLAN_TOOL]:
            return "plan_worker"
        if names == [TASK_TOOL]:
            return "task_worker"
        progress(state).event("delegate-review-group", "running", "Parallel review group", "3 reviewers started")
        return [Send("reviewer", task) for task in reviewer_tasks(state)]

    return route_after_manager


def make_route_after_refusal(deps: DeliveryDeps):
    def route_after_refusal(state: DeliveryState) -> str:
        return "manager" if reask_allowed(refusals_in_turn(state), deps.policy) else "fail_closed"

    return route_after_refusal


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


def fail_closed_reason(state: DeliveryState, policy: DelegationPolicy) -> tuple[dict[str, str], Violation | None]:
    """Why the run fails closed: a recorded failure, the reviewer-role check, or the delegation policy."""
    failure = state.get("failure")
    if failure:
        return dict(failure), None
    violation = None
    if (state.get("pre_decision") or {}).get("branch") == "execute":
        violation = roles_violation(state)
    if violation is None:
        violation = delegation_violation(state, policy)
    if violation is None:  # unreachable by construction; still never fail open
        return {"stage": "delegation", "code": "unexpected_route", "message": "The run stopped safely."}, None
    stage = "supervisor-pre-decision" if violation.code == "reviewer_roles_inexact" else "delegation"
    return {"stage": stage, "code": violation.code, "message": violation.message}, violation


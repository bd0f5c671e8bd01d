"""The delivery chain's routing: the verdicts its deciding nodes record, and where each sends the run.

Every node that decides routes with ``Command``, on what it has just written into state; the
rules below are pure functions of that record, so the graph has no conditional edge that reads
state again. ``supervisor_pre`` (its branch, and the exact reviewer-role check before any worker
starts), ``manager`` (the delegation policy on every turn it proposes) and ``manager_refused`` (the
policy's re-ask budget) record their verdict — ``delegation``, and for a run the policy stops
``failure`` with ``policy_violation`` — so ``fail_closed`` reads why instead of working it out
again. A refused turn routes to ``manager_refused`` (the proposed tool never runs and nothing goes
back to the model); an allowed one routes to its worker, or fans the review group out with
``Send`` — one reviewer per role of the reviewer table, all holding the same plan/tasks snapshot. ``load_context`` and
the workers fail closed on the ``failure`` they recorded; ``synthesize`` goes on to the
post-review decision only when ``reins.policies.delivery.revision.post_review_allowed`` says so of its bundle;
``supervisor_post`` and ``revise_plan`` follow the decision's revision targets, plan first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, get_args

from langgraph.types import Send

from reins.policies.delivery.delegation import (
    MANAGER,
    DelegationLedger,
    DelegationPolicy,
    ProposedCall,
    check_delegation,
    delegated_step,
)
from reins.policies.text.redaction import redact
from reins.policies.delivery.reviewers import Reviewers
from reins.policies.delivery.revision import post_review_allowed
from reins.policies.verdict import Verdict
from reins.schemas.delivery import WORK_ARTIFACTS
from reins.nodes.delivery.common import without_markdown
from reins.nodes.delivery.state import (
    AfterLoad,
    AfterManager,
    AfterPlanRevision,
    AfterPost,
    AfterPre,
    AfterRefusal,
    AfterSynthesis,
    AfterWorker,
    DelegationVerdict,
    DeliveryState,
    Failure,
    PolicyViolation,
    ProposedToolCall,
    ReviewerTask,
)

# Command destinations, so LangGraph Studio draws every branch.
AFTER_LOAD: tuple[str, ...] = get_args(AfterLoad)
AFTER_PRE: tuple[str, ...] = get_args(AfterPre)
AFTER_MANAGER: tuple[str, ...] = get_args(AfterManager)
AFTER_REFUSAL: tuple[str, ...] = get_args(AfterRefusal)
AFTER_WORKER: tuple[str, ...] = get_args(AfterWorker)
AFTER_SYNTHESIS: tuple[str, ...] = get_args(AfterSynthesis)
AFTER_POST: tuple[str, ...] = get_args(AfterPost)
AFTER_PLAN_REVISION: tuple[str, ...] = get_args(AfterPlanRevision)

# The node that runs each step a manager turn may take.
STEP_NODES: dict[str, AfterManager] = {"plan": "plan_worker", "tasks": "task_worker", "review": "reviewer"}


def ledger(state: DeliveryState) -> DelegationLedger:
    artifacts = frozenset(kind for kind in WORK_ARTIFACTS if state.get(kind))
    return DelegationLedger(executed=tuple(state.get("delegated", [])), artifacts=artifacts, caller=MANAGER)


def policy_violation(refusal: Verdict) -> PolicyViolation:
    """A policy's refusal as the run records it: the rule it broke and its static message."""
    return PolicyViolation(code=refusal.code, message=refusal.reason)


def stopped_by_policy(stage: str, violation: PolicyViolation) -> DeliveryState:
    """The state update of a run a policy stops: why it fails closed, and the rule it broke."""
    return {
        "failure": Failure(stage=stage, code=violation["code"], message=violation["message"]),
        "policy_violation": violation,
    }


def delegation_verdict(
    calls: Sequence[ProposedToolCall], state: DeliveryState, policy: DelegationPolicy, *, cut_off: bool = False
) -> DelegationVerdict:
    """The delegation policy on the turn the manager just proposed, and where the run goes with it
    (``cut_off``: the response stopped at its output bound)."""
    proposed = [ProposedCall(call["name"], call.get("args") or {}) for call in calls]
    verdict = check_delegation(proposed, ledger(state), policy, cut_off=cut_off)
    if not verdict.allowed:
        return DelegationVerdict(next="manager_refused", violation=policy_violation(verdict))
    # An allowed turn is exactly one step (check_delegation refuses anything else).
    step = delegated_step([call["name"] for call in calls], policy)
    return DelegationVerdict(next=STEP_NODES[step], violation=None)


def refusals_in_turn(state: DeliveryState) -> int:
    """Refusals recorded for the manager turn now open (since the last sub-agent ran)."""
    executed = len(state.get("delegated", []))
    return sum(1 for record in state.get("manager_refusals", []) if record["executed"] == executed)


def reviewer_sends(state: DeliveryState, calls: Sequence[ProposedToolCall], reviewers: Reviewers) -> list[Send]:
    """One reviewer per review call, in call order, each with the same snapshot of plan and tasks and
    its focus (the supervisor's, else the reviewer's default)."""
    plan = without_markdown(state["plan"]["value"])
    tasks = without_markdown(state["tasks"]["value"])
    focus = state["pre_decision"].get("review_focus", {})
    sends = []
    for call in calls:
        spec = reviewers.of_tool(call["name"])
        role = spec.role
        task = ReviewerTask(
            role=role,
            tool=call["name"],
            run_id=state["run_id"],
            requirement_text=state["requirement_text"],
            context_blocks=state["context_blocks"],
            plan=plan,
            tasks=tasks,
            focus=focus.get(role) or spec.focus,
            note=redact((call.get("args") or {}).get("note") or "", 200),
        )
        sends.append(Send("reviewer", task))
    return sends


def after_load(update: DeliveryState) -> AfterLoad:
    """Refused input or context fails closed before any model call."""
    return "fail_closed" if update.get("failure") else "supervisor_pre"


def after_worker(update: DeliveryState) -> AfterWorker:
    """A failed sub-agent ends the run: no tasks without a plan, no reviews without both."""
    return "fail_closed" if update.get("failure") else "manager"


def after_synthesis(bundle: Mapping[str, Any]) -> AfterSynthesis:
    return "supervisor_post" if post_review_allowed(bundle) else "render_report"


def after_post(decision: Mapping[str, Any]) -> AfterPost:
    targets = decision["revision_targets"]
    if "plan" in targets:
        return "revise_plan"
    if "tasks" in targets:
        return "revise_tasks"
    return "render_report"


def after_plan_revision(decision: Mapping[str, Any]) -> AfterPlanRevision:
    return "revise_tasks" if "tasks" in decision["revision_targets"] else "render_report"

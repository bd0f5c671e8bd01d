"""Each graph's longest run as budget stages (pure): what its nodes may ask, at most, in order.

The counts come from the rules that bound each graph — the delivery chain's three manager phases and
re-ask budget, its reviewer table, its one revision; the tasklist's one context read, one strategy
regeneration and one revision; the assistant's step budget, its one check round and one replan —
so a change to any of those rules moves the printed worst case with it. Time waiting for a person
(an approval, a review) is not counted: a paused run spends nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reins.policies.audit.budget import Stage
from reins.policies.assistant.check_act import MAX_CHECK_ROUNDS
from reins.policies.tools.loop_guards import MAX_STEPS
from reins.policies.assistant.replanning import MAX_REPLANS

ESCALATION = "{role}:escalation"  # the call limits of a role's escalation model
MANAGER_PHASES = 3  # plan, tasks, the review group: each one accepted manager turn
ASSISTANT_DISPATCHES = 2  # a read-only call that failed for a retryable reason runs once more
TASKLIST_READS = 2  # the plan, and at most one optional context document


def _contract(name: str, role: str, two_step: bool, count: int = 1, **options: object) -> list[Stage]:
    """A contract's asks: one structured ask, or under ``two_step`` a draft and its encoding."""
    if two_step:
        return [Stage(name, role, "text", count, **options), Stage(f"{name}:encode", "encoder", "contract", count, **options)]
    return [Stage(name, role, "contract", count, **options)]


def delivery_stages(
    reviewer_roles: Sequence[str],
    *,
    max_manager_reasks: int,
    two_step: bool = False,
    polish: bool = False,
    review_deadlines: Mapping[str, float] | None = None,
    manager_escalation: bool = False,
) -> list[Stage]:
    """The delivery chain: pre-decision, manager turns (each phase asked at most ``1 + reasks``
    times; a re-ask after a cut-off gets more room), plan, tasks, the parallel review group (one model
    role per reviewer, each review under its role's deadline), post-decision, the plan and task
    revisions, the optional polish."""
    turns = MANAGER_PHASES * (1 + max_manager_reasks)
    stages = [
        *_contract("supervisor_pre", "supervisor", two_step),
        Stage("manager", "manager", "turn", turns, more_room=MANAGER_PHASES * max_manager_reasks),
        # a turn refused again after its re-ask goes once to the escalation model
        *([Stage("manager:escalated", ESCALATION.format(role="manager"), "turn", MANAGER_PHASES)]
          if manager_escalation else []),
        *_contract("plan", "planner", two_step),
        *_contract("tasks", "planner", two_step),
    ]
    for role in sorted(set(reviewer_roles)):
        count = list(reviewer_roles).count(role)
        stages += _contract(f"review:{role}", role, two_step, count, parallel=True,
                            deadline_s=(review_deadlines or {}).get(role))
    stages += [
        *_contract("supervisor_post", "supervisor", two_step),
        *_contract("plan_revision", "planner", two_step),
        *_contract("task_revision", "planner", two_step),
    ]
    if polish:
        stages.append(Stage("report_polish", "polish", "text"))
    return stages


def tasklist_stages(*, human_review: bool, max_strategy_regenerations: int = 1, two_step: bool = False) -> list[Stage]:
    """The tasklist agent: planning decision, strategy (regenerated once only for a reviewer's
    response), the draft and at most one revision (both free text)."""
    strategies = 1 + (max_strategy_regenerations if human_review else 0)
    return [
        *_contract("planning_decision", "tasklist", two_step),
        *_contract("strategy", "tasklist", two_step, strategies),
        Stage("draft", "tasklist", "text"),
        Stage("revision", "tasklist", "text"),
    ]


def assistant_turns(max_steps: int = MAX_STEPS) -> int:
    """Tool-calling turns of one chat turn: one per step of the budget, and one that ends the loop
    (no call, a repeat, a stop) for the first round and for each check round back."""
    return max_steps + 1 + MAX_CHECK_ROUNDS


# The assistant's asks, each the contract ``assistant.<name>``; which role's model serves each one is
# the contracts' table (the caller gives it), so a task role with its own chain is counted as its own.
ASSISTANT_ASKS = ("summary", "intent", "step", "replan", "answer", "reflection", "skill_draft")


def assistant_stages(roles: Mapping[str, str], *, max_steps: int = MAX_STEPS, two_step: bool = False) -> list[Stage]:
    """One chat turn: the rolling summary, the intent, the tool loop, a replan, the answer (again
    after each check round), the reflection and a skill draft; ``roles``: each ask's role."""
    return [
        *_contract("summary", roles["summary"], two_step),
        *_contract("intent", roles["intent"], two_step),
        Stage("step", roles["step"], "turn", assistant_turns(max_steps)),
        *_contract("replan", roles["replan"], two_step, MAX_REPLANS),
        *_contract("answer", roles["answer"], two_step, 1 + MAX_CHECK_ROUNDS),
        *_contract("reflection", roles["reflection"], two_step),
        *_contract("skill_draft", roles["skill_draft"], two_step),
    ]


def pipeline_turn_stages(roles: Mapping[str, str], pipeline: Sequence[Stage], *, two_step: bool = False) -> list[Stage]:
    """A chat turn that runs a pipeline (``/tasklist``, ``/delivery-chain``): the turn's rolling
    summary, then the whole pipeline inside the turn."""
    return [*_contract("summary", roles["summary"], two_step), *pipeline]


def assistant_tool_calls(max_steps: int = MAX_STEPS) -> int:
    return max_steps * ASSISTANT_DISPATCHES

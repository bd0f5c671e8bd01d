"""The tasklist agent's state machine: statuses, limits and the guard every node asks first.

The model may propose; this table decides. ``guard(machine, proposal)`` is pure: given a snapshot
of the run (status, counters, limits, the decision on record) and the action a node is about to
take, it says whether the action may run and which status it leads to. A rejected action ends the
run in ``stopped`` with the reason in the trace.

Each node of the graph is named after the action it performs, so the same table also proves the
compiled graph's edges (``edge_allowed``): an edge A → B is sound only when some status A can
leave the run in is a status B may start from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from policies.tasklist_plan import OPTIONAL_CONTEXT_ALLOWLIST
from schemas.tasklist import PROCEED_ACTIONS

STATUSES: tuple[str, ...] = (
    "idle",
    "plan_read",
    "readiness_checked",
    "planning_decided",
    "optional_context_read",
    "strategy_decided",
    "drafted_v1",
    "validated_v1",
    "revised_v2",
    "validated_v2",
    "revision_effect_evaluated",
    "stopped",
    "final",
    "failed",  # bad input: the run never reached the plan
)
TERMINAL_STATUSES: frozenset[str] = frozenset({"stopped", "final", "failed"})

# Pseudo-actions for the graph's entry and exit (kept free of LangGraph names).
ENTRY = "start"
EXIT = "end"


@dataclass(frozen=True)
class Limits:
    max_steps: int
    max_optional_context_reads: int = 1
    max_draft_revisions: int = 1
    max_strategy_regenerations: int = 1

    def as_dict(self) -> dict[str, int]:
        return {
            "max_steps": self.max_steps,
            "max_optional_context_reads": self.max_optional_context_reads,
            "max_draft_revisions": self.max_draft_revisions,
            "max_strategy_regenerations": self.max_strategy_regenerations,
        }


MAX_STEPS = 12
MAX_STEPS_WITH_REVIEW = 20


def limits_for(human_review: bool, max_steps: int | None = None) -> Limits:
    """12 steps (20 with human review), one read, one revision, one strategy regeneration.

    ``max_steps`` may only tighten the budget, never widen it.
    """
    ceiling = MAX_STEPS_WITH_REVIEW if human_review else MAX_STEPS
    steps = ceiling if max_steps is None else max(0, min(int(max_steps), ceiling))
    return Limits(max_steps=steps)


@dataclass(frozen=True)
class Counters:
    steps: int = 0
    optional_context_reads: int = 0
    draft_revisions: int = 0
    strategy_regenerations: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "steps": self.steps,
            "optional_context_reads": self.optional_context_reads,
            "draft_revisions": self.draft_revisions,
            "strategy_regenerations": self.strategy_regenerations,
        }


@dataclass(frozen=True)
class Machine:
    """What the guard needs to know about a run, and nothing else."""

    status: str = "idle"
    counters: Counters = field(default_factory=Counters)
    limits: Limits = field(default_factory=lambda: limits_for(False))
    human_review: bool = False
    plan_uri: str | None = None
    allowed_actions: tuple[str, ...] = ()
    decision_type: str | None = None
    decision_uri: str | None = None
    strategy_approved: bool = False
    feedback_pending: bool = False
    fix_now_count: int | None = None  # None until the warning disposition is decided
    revision_approved: bool = False


@dataclass(frozen=True)
class Proposal:
    """The action a node is about to take, with what it acts on."""

    action: str
    resource_uri: str | None = None
    choice: str | None = None  # the model's planning action, once it has chosen


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    reason: str
    next_status: str | None = None


# Action → (statuses it may start from, statuses it may lead to when allowed).
TRANSITIONS: Mapping[str, tuple[frozenset[str], frozenset[str]]] = {
    "read_plan": (frozenset({"idle"}), frozenset({"plan_read"})),
    "check_readiness": (frozenset({"plan_read"}), frozenset({"readiness_checked"})),
    "planning_decision": (frozenset({"readiness_checked"}), frozenset({"planning_decided"})),
    "ask_clarification": (frozenset({"planning_decided"}), frozenset({"stopped"})),
    "stop_with_boundary_message": (frozenset({"planning_decided"}), frozenset({"stopped"})),
    "read_optional_context": (frozenset({"planning_decided"}), frozenset({"optional_context_read"})),
    "decide_strategy": (
        frozenset({"planning_decided", "optional_context_read", "strategy_decided"}),
        frozenset({"strategy_decided"}),
    ),
    "review_strategy": (frozenset({"strategy_decided"}), frozenset({"strategy_decided", "stopped"})),
    "draft_v1": (frozenset({"strategy_decided"}), frozenset({"drafted_v1"})),
    "validate_v1": (frozenset({"drafted_v1"}), frozenset({"validated_v1"})),
    "warning_disposition": (frozenset({"validated_v1"}), frozenset({"validated_v1"})),
    "review_revision": (frozenset({"validated_v1"}), frozenset({"validated_v1", "revised_v2", "stopped"})),
    "revise_v2": (frozenset({"validated_v1"}), frozenset({"revised_v2"})),
    "validate_v2": (frozenset({"revised_v2"}), frozenset({"validated_v2"})),
    "revision_effect": (
        frozenset({"validated_v1", "validated_v2"}),
        frozenset({"revision_effect_evaluated"}),
    ),
    "final": (frozenset({"revision_effect_evaluated"}), frozenset({"final"})),
    # Publishing the outcome is not a step of the machine: it reads a terminal status, changes nothing.
    "finish": (TERMINAL_STATUSES, TERMINAL_STATUSES),
}
ACTIONS: tuple[str, ...] = tuple(TRANSITIONS)
_UNCOUNTED = frozenset({"finish"})


def _refuse(reason: str) -> Verdict:
    return Verdict(False, reason)


def _check(machine: Machine, proposal: Proposal) -> str | None:
    """The action-specific condition; returns the refusal reason, or None when it holds."""
    m, p, c, lim = machine, proposal, machine.counters, machine.limits
    action = p.action
    if action == "read_plan":
        if not m.plan_uri or p.resource_uri != m.plan_uri:
            return "the first read may only be the explicitly referenced version plan"
    elif action == "planning_decision":
        if not m.allowed_actions:
            return "no planning action is allowed for this plan"
        if p.choice is not None and p.choice not in m.allowed_actions:
            return f"action {p.choice} is outside the allowed set ({', '.join(m.allowed_actions)})"
    elif action in ("ask_clarification", "stop_with_boundary_message"):
        if m.decision_type != action:
            return f"{action} runs only when the planning decision chose it"
        if action not in m.allowed_actions:
            return f"action {action} is outside the allowed set"
    elif action == "read_optional_context":
        if m.decision_type != "read_optional_context":
            return "an optional context read needs a read_optional_context decision"
        if "read_optional_context" not in m.allowed_actions:
            return "read_optional_context is outside the allowed set"
        if p.resource_uri != m.decision_uri:
            return "only the resource named by the planning decision may be read"
        if p.resource_uri not in OPTIONAL_CONTEXT_ALLOWLIST:
            return "the resource is not on the optional-context allowlist"
        if c.optional_context_reads >= lim.max_optional_context_reads:
            return "the optional context has already been read once"
    elif action == "decide_strategy":
        if m.status == "planning_decided" and m.decision_type not in PROCEED_ACTIONS:
            return "a strategy follows only a proceed decision or an optional context read"
        if m.status == "strategy_decided":
            if not (m.human_review and m.feedback_pending):
                return "a strategy is regenerated only for a reviewer's response"
            if c.strategy_regenerations >= lim.max_strategy_regenerations:
                return "the strategy has already been regenerated once"
    elif action == "review_strategy":
        if not m.human_review:
            return "strategy review runs only with human review enabled"
        if m.strategy_approved:
            return "the strategy has already been approved"
        if m.feedback_pending:
            return "the reviewer's response must be answered by a regenerated strategy first"
    elif action == "draft_v1":
        if m.human_review and not m.strategy_approved:
            return "the strategy must be approved by the reviewer before drafting"
        if not m.plan_uri or p.resource_uri != m.plan_uri:
            return "the draft may only be written for the referenced version plan"
    elif action == "warning_disposition":
        if m.fix_now_count is not None:
            return "the warning disposition has already been decided"
    elif action in ("review_revision", "revise_v2"):
        if not m.fix_now_count:
            return "a revision needs fix-now findings"
        if c.draft_revisions >= lim.max_draft_revisions:
            return "the draft has already been revised once (never a v3)"
        if action == "review_revision" and not m.human_review:
            return "revision review runs only with human review enabled"
        if action == "review_revision" and m.revision_approved:
            return "the revision has already been approved"
        if action == "revise_v2" and m.human_review and not m.revision_approved:
            return "the reviewer must approve the revision first"
    elif action == "revision_effect":
        if m.status == "validated_v1" and (m.fix_now_count is None or m.fix_now_count > 0):
            return "the revision effect of v1 alone is evaluated only when nothing needs fixing now"
    return None


def guard(machine: Machine, proposal: Proposal) -> Verdict:
    """May ``proposal`` run now? If so, which status does it lead to (the first listed outcome)."""
    if proposal.action not in TRANSITIONS:
        return _refuse(f"unknown action {proposal.action}")
    sources, outcomes = TRANSITIONS[proposal.action]
    if proposal.action not in _UNCOUNTED and machine.counters.steps >= machine.limits.max_steps:
        return _refuse(f"the step limit ({machine.limits.max_steps}) is reached")
    if machine.status not in sources:
        return _refuse(f"{proposal.action} is not allowed in status {machine.status}")
    reason = _check(machine, proposal)
    if reason is not None:
        return _refuse(reason)
    if proposal.action == "finish":
        return Verdict(True, "allowed", machine.status)
    return Verdict(True, "allowed", _default_target(proposal.action, outcomes))


_DEFAULT_TARGETS: Mapping[str, str] = {
    "review_strategy": "strategy_decided",
    "review_revision": "validated_v1",
}


def _default_target(action: str, outcomes: frozenset[str]) -> str:
    if action in _DEFAULT_TARGETS:
        return _DEFAULT_TARGETS[action]
    (only,) = outcomes
    return only


def next_action(machine: Machine) -> str:
    """Where the run goes next: the one routing rule behind every conditional edge of the graph."""
    m = machine
    if m.status in TERMINAL_STATUSES:
        return "finish"
    if m.status == "planning_decided":
        if m.decision_type in PROCEED_ACTIONS:
            return "decide_strategy"
        return m.decision_type if m.decision_type in TRANSITIONS else "finish"
    if m.status == "strategy_decided":
        if m.human_review and m.feedback_pending:
            return "decide_strategy"
        if m.human_review and not m.strategy_approved:
            return "review_strategy"
        return "draft_v1"
    if m.status == "validated_v1":
        if m.fix_now_count is None:
            return "warning_disposition"
        if m.fix_now_count == 0:
            return "revision_effect"
        if m.human_review and not m.revision_approved:
            return "review_revision"
        return "revise_v2"
    return _NEXT_BY_STATUS.get(m.status, "finish")


_NEXT_BY_STATUS: Mapping[str, str] = {
    "idle": "read_plan",
    "plan_read": "check_readiness",
    "readiness_checked": "planning_decision",
    "optional_context_read": "decide_strategy",
    "drafted_v1": "validate_v1",
    "revised_v2": "validate_v2",
    "validated_v2": "revision_effect",
    "revision_effect_evaluated": "final",
}


def outcomes_of(action: str) -> frozenset[str]:
    """Every status an action can leave the run in: its table outcomes, or ``stopped`` when refused.

    ``read_plan`` may also end ``failed`` (bad input fails closed before the machine starts).
    """
    if action == ENTRY:
        return frozenset({"idle"})
    if action == "finish":
        return TERMINAL_STATUSES
    extra = {"stopped"} | ({"failed"} if action == "read_plan" else set())
    return TRANSITIONS[action][1] | extra


def edge_allowed(source: str, target: str) -> bool:
    """Is the graph edge ``source → target`` a transition the table allows?

    Only ``finish`` may lead to the exit, and every run must pass through it.
    """
    if source not in TRANSITIONS and source != ENTRY:
        return False
    if target == EXIT:
        return source == "finish"
    if target not in TRANSITIONS or target == ENTRY:
        return False
    return bool(outcomes_of(source) & TRANSITIONS[target][0])

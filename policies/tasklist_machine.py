"""The tasklist agent's state machine: statuses, limits and the guard every node asks first.

The model may propose; this table decides. ``guard(machine, proposal)`` is pure: given a snapshot
of the run (status, counters, limits, the decision on record) and the action a node is about to
take, it says whether the action may run and which status it leads to. A rejected action ends the
run in ``stopped`` with the reason in the trace.

Each node of the graph is named after the action it performs, and the same table gives the graph
its edges (``routes``), routes each run (``next_action``) and proves the compiled edges
(``edge_allowed``): an edge A → B is sound only when some status A can leave the run in is a status
B may start from. A new step is one row here and one node.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace

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
        return asdict(self)


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
        return asdict(self)


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


def _planning_chose(action: str) -> Callable[[Machine], bool]:
    return lambda m: m.decision_type == action


def _strategy_due(m: Machine) -> bool:
    """A strategy follows a proceed decision, the context read, or a reviewer's response."""
    if m.status == "planning_decided":
        return m.decision_type in PROCEED_ACTIONS
    if m.status == "strategy_decided":
        return m.human_review and m.feedback_pending
    return True


def _fix_now(m: Machine) -> bool:
    return bool(m.fix_now_count)


def _revision_effect_due(m: Machine) -> bool:
    return m.status == "validated_v2" or m.fix_now_count == 0


@dataclass(frozen=True)
class Transition:
    """One action of the machine.

    ``sources``: the statuses it may start from. ``outcomes``: the statuses it may lead to when
    allowed; the first is where it leads unless its node decides otherwise. ``then``: the actions
    the run may hand over to next, ``finish`` aside (the graph's edges). ``when``: the routing
    condition where several actions may start from one status; the first row in table order whose
    condition holds is taken, and a row without one is taken whenever the run is in a source status.
    """

    sources: frozenset[str]
    outcomes: tuple[str, ...]
    then: tuple[str, ...] = ()
    when: Callable[[Machine], bool] | None = None


def _step(sources: Iterable[str], outcomes: tuple[str, ...], then: tuple[str, ...] = (),
          when: Callable[[Machine], bool] | None = None) -> Transition:
    return Transition(frozenset(sources), outcomes, then, when)


# The one table: what each action needs, what it leads to, where the run goes next. The guard,
# the routing rule and the compiled graph's edges all read it.
TRANSITIONS: Mapping[str, Transition] = {
    "read_plan": _step({"idle"}, ("plan_read",), ("check_readiness",)),
    "check_readiness": _step({"plan_read"}, ("readiness_checked",), ("planning_decision",)),
    "planning_decision": _step(
        {"readiness_checked"}, ("planning_decided",),
        ("ask_clarification", "stop_with_boundary_message", "read_optional_context", "decide_strategy"),
    ),
    "ask_clarification": _step({"planning_decided"}, ("stopped",), when=_planning_chose("ask_clarification")),
    "stop_with_boundary_message": _step(
        {"planning_decided"}, ("stopped",), when=_planning_chose("stop_with_boundary_message")
    ),
    "read_optional_context": _step(
        {"planning_decided"}, ("optional_context_read",), ("decide_strategy",), when=_planning_chose("read_optional_context")
    ),
    "decide_strategy": _step(
        {"planning_decided", "optional_context_read", "strategy_decided"}, ("strategy_decided",),
        ("review_strategy", "draft_v1"), when=_strategy_due,
    ),
    "review_strategy": _step(
        {"strategy_decided"}, ("strategy_decided", "stopped"), ("decide_strategy", "draft_v1"),
        when=lambda m: m.human_review and not m.strategy_approved,
    ),
    "draft_v1": _step({"strategy_decided"}, ("drafted_v1",), ("validate_v1",)),
    "validate_v1": _step({"drafted_v1"}, ("validated_v1",), ("warning_disposition",)),
    "warning_disposition": _step(
        {"validated_v1"}, ("validated_v1",), ("revision_effect", "review_revision", "revise_v2"),
        when=lambda m: m.fix_now_count is None,
    ),
    "review_revision": _step(
        {"validated_v1"}, ("validated_v1", "revised_v2", "stopped"), ("revise_v2", "validate_v2"),
        when=lambda m: _fix_now(m) and m.human_review and not m.revision_approved,
    ),
    "revise_v2": _step({"validated_v1"}, ("revised_v2",), ("validate_v2",), when=_fix_now),
    "validate_v2": _step({"revised_v2"}, ("validated_v2",), ("revision_effect",)),
    "revision_effect": _step(
        {"validated_v1", "validated_v2"}, ("revision_effect_evaluated",), ("final",), when=_revision_effect_due
    ),
    "final": _step({"revision_effect_evaluated"}, ("final",)),
    # Publishing the outcome is not a step of the machine: it reads a terminal status, changes nothing.
    "finish": _step(TERMINAL_STATUSES, tuple(sorted(TERMINAL_STATUSES))),
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
    """May ``proposal`` run now? If so, which status does it lead to (its first listed outcome)."""
    if proposal.action not in TRANSITIONS:
        return _refuse(f"unknown action {proposal.action}")
    transition = TRANSITIONS[proposal.action]
    if proposal.action not in _UNCOUNTED and machine.counters.steps >= machine.limits.max_steps:
        return _refuse(f"the step limit ({machine.limits.max_steps}) is reached")
    if machine.status not in transition.sources:
        return _refuse(f"{proposal.action} is not allowed in status {machine.status}")
    reason = _check(machine, proposal)
    if reason is not None:
        return _refuse(reason)
    if proposal.action == "finish":
        return Verdict(True, "allowed", machine.status)
    return Verdict(True, "allowed", transition.outcomes[0])


def next_action(machine: Machine) -> str:
    """Where the run goes next: the one routing rule behind every conditional edge of the graph.

    The first action of the table that may start from the run's status and whose ``when`` holds;
    a terminal status, or a status no action takes up (an unknown planning choice), goes to ``finish``.
    """
    if machine.status in TERMINAL_STATUSES:
        return "finish"
    for action, transition in TRANSITIONS.items():
        if machine.status in transition.sources and (transition.when is None or transition.when(machine)):
            return action
    return "finish"


def entry_action() -> str:
    """The action every run starts with (the graph's edge from its entry)."""
    return next_action(Machine())


def routes() -> dict[str, tuple[str, ...]]:
    """Each step's conditional edge: the actions it may hand over to, and ``finish``."""
    return {action: (*t.then, "finish") for action, t in TRANSITIONS.items() if action not in _UNCOUNTED}


def leads_to(action: str, status: str) -> Verdict:
    """Whether a step of ``action`` may leave the run in ``status``: one of the action's outcomes in
    the table, or ended (``stopped`` / ``failed``). A step's node cannot move the machine elsewhere."""
    if status in TRANSITIONS[action].outcomes or status in ("stopped", "failed"):
        return Verdict(True, "ok", status)
    return Verdict(False, f"{action} may not lead to status {status}")


def counts_as_step(action: str) -> bool:
    return action not in _UNCOUNTED


def counters_after(machine: Machine, action: str, status: str) -> Counters:
    """The counters once ``action`` has led the run from ``machine.status`` to ``status``.

    Every step spends one of the budget; the optional context read, a regenerated strategy (decided
    again from ``strategy_decided``) and a revision (reaching ``revised_v2``) each spend their own once.
    """
    c = machine.counters
    if not counts_as_step(action):
        return c
    return replace(
        c,
        steps=c.steps + 1,
        optional_context_reads=c.optional_context_reads + int(action == "read_optional_context"),
        strategy_regenerations=c.strategy_regenerations + int(action == "decide_strategy" and machine.status == "strategy_decided"),
        draft_revisions=c.draft_revisions + int(status == "revised_v2"),
    )


def outcomes_of(action: str) -> frozenset[str]:
    """Every status an action can leave the run in: its table outcomes, or ``stopped`` when refused.

    ``read_plan`` may also end ``failed`` (bad input fails closed before the machine starts).
    """
    if action == ENTRY:
        return frozenset({"idle"})
    if action == "finish":
        return TERMINAL_STATUSES
    extra = {"stopped"} | ({"failed"} if action == "read_plan" else set())
    return frozenset(TRANSITIONS[action].outcomes) | extra


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
    return bool(outcomes_of(source) & TRANSITIONS[target].sources)

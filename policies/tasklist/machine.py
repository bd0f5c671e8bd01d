"""The tasklist agent's state machine: statuses, limits and the guard every node asks first.

The model may propose; this table decides. ``guard(machine, proposal)`` is pure: given a snapshot
of the run (status, counters, limits, the decision on record) and the action a node is about to
take, it says whether the action may run and which status it leads to. A rejected action ends the
run in ``stopped`` with the reason in the trace.

Each node of the graph is named after the action it performs, and the same table gives the graph
its edges (``routes``), routes each run (``next_action``), sets the step budget (``longest_run``) and
proves the compiled edges (``edge_allowed``): an edge A → B is sound only when some status A can
leave the run in is a status B may start from. Each edge is written once, on the row it leaves (the
status it leads to and the actions that may follow); the statuses an action starts from are derived
from the edges into it. Each row has one condition, ``when``, that routing and the guard both read;
conditions of rows that share a status exclude each other, so no row order decides anything. A new
step is one row here and one node.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Literal, get_args

from reins.policies.tasklist.plan import OPTIONAL_CONTEXT_ALLOWLIST
from reins.policies.verdict import Verdict
from reins.schemas.tasklist import PROCEED_ACTIONS

Status = Literal[
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
]
STATUSES: tuple[str, ...] = get_args(Status)
TERMINAL_STATUSES: frozenset[str] = frozenset({"stopped", "final", "failed"})
ENDED: frozenset[str] = frozenset({"stopped", "failed"})  # where any step may leave a run: refused or failed

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
class StepVerdict(Verdict):
    """The guard's verdict; an allowed step also says which status it leads to."""

    next_status: str | None = None


# A condition returns why it does not hold, or None when it does.
Condition = Callable[[Machine], "str | None"]
Check = Callable[[Machine, Proposal], "str | None"]


@dataclass(frozen=True)
class Transition:
    """One action of the machine, as the guard, the routing rule and the graph read it (derived from
    its ``Step`` row by ``build_table``).

    ``sources``: the statuses it may start from. ``outcomes``: the statuses it may lead to when
    allowed; the first is where it leads unless its node decides otherwise (none: the status stays,
    as when the outcome is published). ``then``: the actions the run may hand over to next (the
    graph's edges; every step may also end the run). The other fields are the row's, as written.
    """

    sources: frozenset[str]
    outcomes: tuple[str, ...]
    then: tuple[str, ...] = ()
    when: Condition | None = None
    check: Check | None = None
    review: bool = False
    counted: bool = True
    repeats: str | None = None


@dataclass(frozen=True)
class Step:
    """One row of the table, as written.

    ``leads``: each status the action may lead to (the first unless its node decides otherwise),
    with the actions the run may hand over to from there — each edge of the graph, written once.
    ``starts``: statuses it may start from that no edge leads to (the entry's, and the terminal
    statuses ``finish`` publishes); every other source is derived from the edges into the action.
    ``ends_run``: the action leads out of the graph. ``when``: the one condition under which the
    run takes this action — routing takes it exactly when the guard lets it start. ``check``: what
    the guard also asks of the proposal (the resource it acts on, the model's choice) and of the
    budgets. ``review``: a human review pause, only with human review enabled. ``counted``: spends
    one step of the budget. ``repeats``: the ``Limits`` field that lets the action run again.
    """

    leads: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    starts: frozenset[str] = frozenset()
    ends_run: bool = False
    when: Condition | None = None
    check: Check | None = None
    review: bool = False
    counted: bool = True
    repeats: str | None = None


def _step(leads: Mapping[str, tuple[str, ...]], starts: Iterable[str] = (), **options) -> Step:
    return Step(dict(leads), frozenset(starts), **options)


def build_table(rows: Mapping[str, Step]) -> dict[str, Transition]:
    """Each row's ``Transition``: its sources are the statuses the edges into it leave the run in.

    An edge to an action the table does not have, or a row that no edge reaches and that names no
    status of its own to start from, is a broken table: it raises rather than compiling a dead step.
    """
    sources: dict[str, set[str]] = {action: set(row.starts) for action, row in rows.items()}
    for action, row in rows.items():
        for status, onward in row.leads.items():
            for target in onward:
                if target not in rows:
                    raise ValueError(f"{action} hands over to {target}, which is not a row of the table")
                sources[target].add(status)
    unreachable = [action for action, found in sources.items() if not found]
    if unreachable:
        raise ValueError(f"no edge leads to {', '.join(unreachable)} and it names no status to start from")
    return {
        action: Transition(
            frozenset(sources[action]),
            tuple(row.leads),
            (EXIT,) if row.ends_run else tuple(dict.fromkeys(t for onward in row.leads.values() for t in onward)),
            when=row.when, check=row.check, review=row.review, counted=row.counted, repeats=row.repeats,
        )
        for action, row in rows.items()
    }


def _chosen(action: str) -> Condition:
    """The planning decision chose ``action``."""
    return lambda m: None if m.decision_type == action else f"{action} runs only when the planning decision chose it"


def _in_allowed_set(action: str) -> Check:
    return lambda m, p: None if action in m.allowed_actions else f"action {action} is outside the allowed set"


def _first(*checks: Check) -> Check:
    """The first refusal of several checks."""
    return lambda m, p: next((reason for check in checks if (reason := check(m, p)) is not None), None)


def _on_the_plan(what: str) -> Check:
    return lambda m, p: None if m.plan_uri and p.resource_uri == m.plan_uri else f"{what} the explicitly referenced version plan"


def _planning_choice(m: Machine, p: Proposal) -> str | None:
    if not m.allowed_actions:
        return "no planning action is allowed for this plan"
    if p.choice is not None and p.choice not in m.allowed_actions:
        return f"action {p.choice} is outside the allowed set ({', '.join(m.allowed_actions)})"
    return None


def _optional_read(m: Machine, p: Proposal) -> str | None:
    if p.resource_uri != m.decision_uri:
        return "only the resource named by the planning decision may be read"
    if p.resource_uri not in OPTIONAL_CONTEXT_ALLOWLIST:
        return "the resource is not on the optional-context allowlist"
    if m.counters.optional_context_reads >= m.limits.max_optional_context_reads:
        return "the optional context has already been read once"
    return None


def _strategy_due(m: Machine) -> str | None:
    """A strategy follows a proceed decision, the context read, or a reviewer's response."""
    if m.status == "planning_decided" and m.decision_type not in PROCEED_ACTIONS:
        return "a strategy follows only a proceed decision or an optional context read"
    if m.status == "strategy_decided" and not (m.human_review and m.feedback_pending):
        return "a strategy is regenerated only for a reviewer's response"
    return None


def _regeneration_left(m: Machine, p: Proposal) -> str | None:
    if m.status == "strategy_decided" and m.counters.strategy_regenerations >= m.limits.max_strategy_regenerations:
        return "the strategy has already been regenerated once"
    return None


def _strategy_under_review(m: Machine) -> str | None:
    if m.strategy_approved:
        return "the strategy has already been approved"
    if m.feedback_pending:
        return "the reviewer's response must be answered by a regenerated strategy first"
    return None


def _strategy_settled(m: Machine) -> str | None:
    if m.human_review and not (m.strategy_approved and not m.feedback_pending):
        return "the strategy must be approved by the reviewer before drafting"
    return None


def _undecided_disposition(m: Machine) -> str | None:
    return None if m.fix_now_count is None else "the warning disposition has already been decided"


def _fix_now(m: Machine) -> str | None:
    return None if m.fix_now_count else "a revision needs fix-now findings"


def _revision_under_review(m: Machine) -> str | None:
    if _fix_now(m):
        return _fix_now(m)
    return "the revision has already been approved" if m.revision_approved else None


def _revision_approved(m: Machine) -> str | None:
    if _fix_now(m):
        return _fix_now(m)
    return "the reviewer must approve the revision first" if m.human_review and not m.revision_approved else None


def _revision_left(m: Machine, p: Proposal) -> str | None:
    if m.counters.draft_revisions >= m.limits.max_draft_revisions:
        return "the draft has already been revised once (never a v3)"
    return None


def _revision_effect_due(m: Machine) -> str | None:
    if m.status == "validated_v1" and m.fix_now_count != 0:
        return "the revision effect of v1 alone is evaluated only when nothing needs fixing now"
    return None


# The one table: what each action needs, where it leads and what may follow. The guard, the routing
# rule, the step budget and the compiled graph's edges all read it.
ROWS: Mapping[str, Step] = {
    "read_plan": _step({"plan_read": ("check_readiness",)}, starts={"idle"}, check=_on_the_plan("the first read may only be")),
    "check_readiness": _step({"readiness_checked": ("planning_decision",)}),
    "planning_decision": _step(
        {"planning_decided": ("ask_clarification", "stop_with_boundary_message", "read_optional_context", "decide_strategy")},
        check=_planning_choice,
    ),
    "ask_clarification": _step(
        {"stopped": ()}, when=_chosen("ask_clarification"), check=_in_allowed_set("ask_clarification"),
    ),
    "stop_with_boundary_message": _step(
        {"stopped": ()}, when=_chosen("stop_with_boundary_message"), check=_in_allowed_set("stop_with_boundary_message"),
    ),
    "read_optional_context": _step(
        {"optional_context_read": ("decide_strategy",)},
        when=lambda m: _chosen("read_optional_context")(m) and "an optional context read needs a read_optional_context decision",
        check=_first(_in_allowed_set("read_optional_context"), _optional_read),
    ),
    "decide_strategy": _step(
        {"strategy_decided": ("review_strategy", "draft_v1")}, when=_strategy_due, check=_regeneration_left,
        repeats="max_strategy_regenerations",
    ),
    "review_strategy": _step(
        {"strategy_decided": ("decide_strategy", "draft_v1"), "stopped": ()},
        when=_strategy_under_review, review=True, repeats="max_strategy_regenerations",
    ),
    "draft_v1": _step(
        {"drafted_v1": ("validate_v1",)}, when=_strategy_settled, check=_on_the_plan("the draft may only be written for"),
    ),
    "validate_v1": _step({"validated_v1": ("warning_disposition",)}),
    "warning_disposition": _step(
        {"validated_v1": ("revision_effect", "review_revision", "revise_v2")}, when=_undecided_disposition,
    ),
    # The reviewer approves (the revision follows), edits the draft into v2 (validated next), or stops.
    "review_revision": _step(
        {"validated_v1": ("revise_v2",), "revised_v2": ("validate_v2",), "stopped": ()},
        when=_revision_under_review, check=_revision_left, review=True,
    ),
    "revise_v2": _step({"revised_v2": ("validate_v2",)}, when=_revision_approved, check=_revision_left),
    "validate_v2": _step({"validated_v2": ("revision_effect",)}),
    "revision_effect": _step({"revision_effect_evaluated": ("final",)}, when=_revision_effect_due),
    "final": _step({"final": ()}),
    # Publishing the outcome: it reads a terminal status and changes nothing; every run ends here.
    "finish": _step({}, starts=TERMINAL_STATUSES, ends_run=True, counted=False),
}
TRANSITIONS: Mapping[str, Transition] = build_table(ROWS)
ACTIONS: tuple[str, ...] = tuple(TRANSITIONS)
FINISH: str = next(action for action, t in TRANSITIONS.items() if EXIT in t.then)


def _condition(action: str, machine: Machine) -> str | None:
    """Why ``action`` is not the one to take now (routing and the guard both ask this), or None."""
    transition = TRANSITIONS[action]
    if machine.status not in transition.sources:
        return f"{action} is not allowed in status {machine.status}"
    if transition.review and not machine.human_review:
        return f"{action} runs only with human review enabled"
    return transition.when(machine) if transition.when else None


def guard(machine: Machine, proposal: Proposal) -> StepVerdict:
    """May ``proposal`` run now? If so, which status does it lead to (its first listed outcome, or
    the status it stays in)."""
    if proposal.action not in TRANSITIONS:
        return StepVerdict.refuse("unknown_action", f"unknown action {proposal.action}")
    transition = TRANSITIONS[proposal.action]
    if transition.counted and machine.counters.steps >= machine.limits.max_steps:
        return StepVerdict.refuse("step_limit", f"the step limit ({machine.limits.max_steps}) is reached")
    reason = _condition(proposal.action, machine)
    if reason is None and transition.check:
        reason = transition.check(machine, proposal)
    if reason is not None:
        return StepVerdict.refuse("not_now", reason)
    return StepVerdict(True, next_status=transition.outcomes[0] if transition.outcomes else machine.status)


def due_actions(machine: Machine) -> list[str]:
    """Every action whose condition holds now (one at most, for any run the table is sound for)."""
    return [action for action in TRANSITIONS if _condition(action, machine) is None]


def next_action(machine: Machine) -> str:
    """Where the run goes next: the one routing rule behind every conditional edge of the graph.

    The action whose condition holds; when none does (an unknown planning choice) — or, against a
    broken table, more than one — the run goes to ``finish``, whose guard ends it unless it is over.
    """
    due = due_actions(machine)
    return due[0] if len(due) == 1 else FINISH


def entry_action() -> str:
    """The action every run starts with (the graph's edge from its entry)."""
    return next_action(Machine())


def routes() -> dict[str, tuple[str, ...]]:
    """Each step's conditional edge: the actions it may hand over to, and ``finish``."""
    return {action: (*t.then, FINISH) for action, t in TRANSITIONS.items() if EXIT not in t.then}


def exits() -> tuple[str, ...]:
    """The actions that lead out of the graph (its plain edges to the end)."""
    return tuple(action for action, t in TRANSITIONS.items() if EXIT in t.then)


def leads_to(action: str, status: str) -> StepVerdict:
    """Whether a step of ``action`` may leave the run in ``status``: one of the action's outcomes in
    the table, or ended (``stopped`` / ``failed``). A step's node cannot move the machine elsewhere."""
    if status in outcomes_of(action):
        return StepVerdict(True, next_status=status)
    return StepVerdict.refuse("unexpected_status", f"{action} may not lead to status {status}")


def counts_as_step(action: str) -> bool:
    return TRANSITIONS[action].counted


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
    """Every status an action can leave the run in: its table outcomes (or the status it stays in),
    or ended — refused by the guard, or failed (bad input, a model that did not answer in time)."""
    if action == ENTRY:
        return frozenset({"idle"})
    transition = TRANSITIONS[action]
    return frozenset(transition.outcomes or transition.sources) | ENDED


def edge_allowed(source: str, target: str) -> bool:
    """Is the graph edge ``source → target`` a transition the table allows?

    Only ``finish`` may lead to the exit, and every run must pass through it.
    """
    if source not in TRANSITIONS and source != ENTRY:
        return False
    if target == EXIT:
        return source in exits()
    if target not in TRANSITIONS or target == ENTRY:
        return False
    return bool(outcomes_of(source) & TRANSITIONS[target].sources)


# --------------------------------------------------------------------------------- the step budget


def longest_run(human_review: bool, limits: Limits | None = None) -> int:
    """The most steps a valid run can take: the longest walk along the table's ``then`` edges from
    the entry, each action as often as its ``repeats`` limit allows (the revision and, with human
    review, the strategy's one regeneration included; review pauses only with human review)."""
    limits = limits or Limits(max_steps=0)
    allowed = {action: 1 + (getattr(limits, t.repeats) if t.repeats else 0)
               for action, t in TRANSITIONS.items() if human_review or not t.review}

    def walk(action: str, runs: Counter) -> int:
        runs = runs + Counter({action: 1})
        onward = [walk(n, runs) for n in TRANSITIONS[action].then if n in allowed and runs[n] < allowed[n]]
        return int(TRANSITIONS[action].counted) + max(onward, default=0)

    entry = next(action for action, t in TRANSITIONS.items() if "idle" in t.sources)
    return walk(entry, Counter())


MAX_STEPS = longest_run(human_review=False)  # 12 today: read, check, decide, read context, strategy, draft, …, final
# A reviewed run's longest walk (16 today) adds the two review pauses and the regenerated strategy; it
# keeps the earlier ceiling of 20 until the table outgrows it.
REVIEWED_CEILING = 20
MAX_STEPS_WITH_REVIEW = max(longest_run(human_review=True), REVIEWED_CEILING)


def limits_for(human_review: bool, max_steps: int | None = None) -> Limits:
    """The step budget derived from the table (``MAX_STEPS``, ``MAX_STEPS_WITH_REVIEW``), one read,
    one revision, one strategy regeneration.

    ``max_steps`` may only tighten the budget, never widen it.
    """
    ceiling = MAX_STEPS_WITH_REVIEW if human_review else MAX_STEPS
    steps = ceiling if max_steps is None else max(0, min(int(max_steps), ceiling))
    return Limits(max_steps=steps)

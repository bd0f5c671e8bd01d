"""The delivery chain's phase-aware delegation policy and the exact reviewer-role check (pure).

The manager model proposes tool calls; this module decides. ``check_delegation`` runs on every
manager turn (the manager node records its verdict and routes on it) and returns the first violated
rule, or None. A violation is final: the tool is not executed and the error never goes back to the
model.

Rules, in the order they are checked (the first match names the violation):

==============================  ===============================================================
code                            rule
==============================  ===============================================================
truncated                       a turn with no call that stopped at its output bound was cut off
no_tool_call                    a turn must call at least one tool
unregistered_tool               only the manager's registered sub-agent tools may be called
invalid_tool_arguments          arguments are ``{note?: ≤200 chars}`` and nothing else
nested_delegation               only the manager delegates; a sub-agent never calls a sub-agent
review_group_mixed              a turn that calls a review tool calls review tools only
review_group_over_limit         at most ``max_review_calls`` (one per reviewer) calls in the review group
review_group_duplicate          each review tool at most once per group
too_many_calls                  at most ``max_tool_calls`` (plan, tasks, each reviewer) calls in a run
parallel_outside_review         outside the review group one call per turn (allow_parallel=False)
out_of_order                    plan, then tasks, then the review group; nothing twice
missing_input_artifact          a sub-agent's declared input artifacts must exist
review_group_incomplete         the review group is exactly the configured review tools
==============================  ===============================================================

A refused turn may be asked again up to ``max_manager_reasks`` times (``reask_allowed``): the model
is told the refusal's reason as ``{path, code}`` pairs, never its refused answer
(``reins.policies.models.manager_reask``), the sampling temperature rises (``reins.policies.models.second_attempt``), the
refused call never runs, and the rules above still
bound the whole run (refused calls are never executed, so they never count toward
``max_tool_calls``). ``max_manager_reasks=0`` fails closed on the first refusal.

The review group is the reviewer table's (``policies/delivery/reviewers.py``): ``for_reviewers`` fits a
policy to another table, and the messages name the configured reviewers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import ValidationError

from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS, Reviewers, count_word, listed
from reins.policies.models.tool_choice import tool_turn_options
from reins.policies.verdict import ALLOWED, Verdict
from reins.schemas.delivery import WORK_ARTIFACTS, SubagentCallArgs

MANAGER = "delivery-chain-manager"
PLAN_TOOL = "plan-subagent"
TASK_TOOL = "task-subagent"
REVIEW_TOOLS: tuple[str, ...] = DEFAULT_REVIEWERS.tools
SUBAGENT_TOOLS: tuple[str, ...] = (PLAN_TOOL, TASK_TOOL, *REVIEW_TOOLS)
REVIEW_INPUTS: tuple[str, ...] = WORK_ARTIFACTS  # what every reviewer reads: both

# What each sub-agent needs before it may run (mirrors the registry's input_artifact_kinds).
DEFAULT_INPUT_ARTIFACTS: Mapping[str, tuple[str, ...]] = {
    PLAN_TOOL: (),
    TASK_TOOL: ("plan",),
    **{tool: REVIEW_INPUTS for tool in REVIEW_TOOLS},
}

VIOLATION_MESSAGES: Mapping[str, str] = {
    "truncated": "The manager's turn was cut off at its output token limit before it delegated.",
    "no_tool_call": "The manager answered without delegating to a sub-agent.",
    "unregistered_tool": "The manager called a tool that is not registered for the delivery chain.",
    "invalid_tool_arguments": "The manager passed arguments other than a short note to a sub-agent.",
    "nested_delegation": "A sub-agent tried to delegate to another sub-agent; nested delegation is not allowed.",
    "review_group_mixed": "The review group may contain only the {count} review sub-agents.",
    "review_group_duplicate": "The review group called the same reviewer more than once.",
    "review_group_over_limit": "The review group called more than {limit} reviewers.",
    "too_many_calls": "The manager exceeded the run's budget of sub-agent calls.",
    "parallel_outside_review": "Parallel sub-agent calls are allowed only in the review group.",
    "out_of_order": "The manager called a sub-agent out of order (plan, then tasks, then reviews).",
    "missing_input_artifact": "A sub-agent was called before the artifacts it needs existed.",
    "review_group_incomplete": "The review group must call the {roles} reviewers together.",
    "not_one_step": "A manager turn must be one plan call, one task call or the whole review group.",
    "reviewer_roles_inexact": "The supervisor did not declare exactly the {roles} reviewers.",
}
VIOLATION_CODES: tuple[str, ...] = tuple(VIOLATION_MESSAGES)


@dataclass(frozen=True)
class ReviewGroupPolicy:
    tools: tuple[str, ...] = REVIEW_TOOLS
    allow_parallel: bool = True
    max_review_calls: int = len(REVIEW_TOOLS)
    roles: tuple[str, ...] = DEFAULT_REVIEWERS.roles  # how the messages name the group


@dataclass(frozen=True)
class DelegationPolicy:
    """The manager's delegation rules, checked in the graph's conditional edge before any sub-agent
    runs: which tools, in which order, how many calls, how many re-asks of a refused turn.

    Example: ``build_delivery_chain(policy=DelegationPolicy(max_manager_reasks=0))``
    """

    allowed_tools: tuple[str, ...] = SUBAGENT_TOOLS
    input_artifacts: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: dict(DEFAULT_INPUT_ARTIFACTS))
    max_tool_calls: int = len(SUBAGENT_TOOLS)  # each sub-agent once: plan, tasks, every reviewer
    allow_parallel: bool = False
    allow_nested_delegation: bool = False
    require_plan_before_task: bool = True
    require_tasks_before_review: bool = True
    reject_unregistered_tools: bool = True
    reject_out_of_order_tool_calls: bool = True
    review_group: ReviewGroupPolicy = ReviewGroupPolicy()
    # How often one refused manager turn is asked again, told the refusal's reason (0: never).
    max_manager_reasks: int = 1

    def __post_init__(self) -> None:
        if isinstance(self.max_manager_reasks, bool) or not isinstance(self.max_manager_reasks, int) or (
            self.max_manager_reasks < 0
        ):
            raise ValueError("max_manager_reasks must be a whole number of re-asks, 0 or more")


DEFAULT_POLICY = DelegationPolicy()


def for_reviewers(policy: DelegationPolicy, reviewers: Reviewers) -> DelegationPolicy:
    """``policy`` with its review group made of ``reviewers``: their tools allowed, each needing the
    plan and the tasks, the group's call limit and the run's call budget moved by the difference in
    size (a policy one call short of a full run stays one call short). A policy whose group already
    is these reviewers is returned as it is; one whose group names yet other reviewers is an error."""
    group = policy.review_group
    if set(group.tools) == set(reviewers.tools):
        return policy
    if set(group.tools) != set(REVIEW_TOOLS):
        raise ValueError("the delegation policy's review group names other reviewers than the reviewer table")
    grown = len(reviewers) - len(group.tools)
    kept = [tool for tool in policy.allowed_tools if tool not in group.tools]
    return replace(
        policy,
        allowed_tools=(*kept, *reviewers.tools),
        input_artifacts={**{tool: kinds for tool, kinds in policy.input_artifacts.items() if tool not in group.tools},
                         **dict.fromkeys(reviewers.tools, REVIEW_INPUTS)},
        max_tool_calls=policy.max_tool_calls + grown,
        review_group=replace(group, tools=reviewers.tools, roles=reviewers.roles,
                             max_review_calls=group.max_review_calls + grown),
    )


@dataclass(frozen=True)
class ProposedCall:
    name: str
    args: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DelegationLedger:
    """What has happened so far: tools executed (in order), artifacts present, and who is calling."""

    executed: tuple[str, ...] = ()
    artifacts: frozenset[str] = frozenset()
    caller: str = MANAGER


def violation(code: str, group: ReviewGroupPolicy = ReviewGroupPolicy()) -> Verdict:
    """The refusal by rule ``code``, its message naming the review group where it speaks of reviewers."""
    message = VIOLATION_MESSAGES[code].format(
        count=count_word(len(group.tools)), limit=count_word(group.max_review_calls), roles=listed(group.roles)
    )
    return Verdict.refuse(code, message)


def _args_valid(args: Mapping[str, Any]) -> bool:
    try:
        SubagentCallArgs.model_validate(dict(args))
    except (ValidationError, TypeError):
        return False
    return True


def _expected_next(policy: DelegationPolicy, executed: Sequence[str]) -> str:
    """The phase the run is in: which step the manager may take next."""
    done = set(executed)
    if PLAN_TOOL not in done:
        return "plan"
    if TASK_TOOL not in done:
        return "tasks"
    if not done & set(policy.review_group.tools):
        return "review"
    return "done"


@dataclass(frozen=True)
class ManagerOffer:
    """What one manager turn is offered: the tools, and the ``bind_tools`` options to ask with."""

    tools: tuple[str, ...]
    options: Mapping[str, Any]


def offered_tools(ledger: DelegationLedger, policy: DelegationPolicy = DEFAULT_POLICY) -> tuple[str, ...]:
    """Least privilege per phase: only the tools the policy would allow now.

    plan phase: the plan sub-agent; task phase: the task sub-agent; review phase: the review group.
    ``check_delegation`` still checks every proposed call against the full rules, so a call outside
    this set (a model that invents a tool name) is a violation exactly as before.
    """
    phase = _expected_next(policy, ledger.executed)
    wanted = {"plan": (PLAN_TOOL,), "tasks": (TASK_TOOL,), "review": tuple(policy.review_group.tools)}.get(phase, ())
    return tuple(name for name in wanted if name in policy.allowed_tools)


def manager_offer(ledger: DelegationLedger, policy: DelegationPolicy, tool_choice: str) -> ManagerOffer:
    """The tools and request options of the next manager turn (``tool_choice`` is REINS_TOOL_CHOICE).

    Parallel calls are asked for only in the review phase, where the policy needs the whole group in
    one turn; elsewhere one call per turn is what the policy allows.
    """
    tools = offered_tools(ledger, policy)
    if not tools:  # nothing is allowed any more (not reached by the graph): offer none and fail closed
        return ManagerOffer((), {})
    parallel = set(tools) == set(policy.review_group.tools) and policy.review_group.allow_parallel
    return ManagerOffer(tools, tool_turn_options(tools, tool_choice, parallel=parallel))


def _order_violation(policy: DelegationPolicy, ledger: DelegationLedger, names: Sequence[str]) -> bool:
    executed = set(ledger.executed)
    if any(name in executed for name in names):
        return True  # nothing runs twice
    phase = _expected_next(policy, ledger.executed)
    if any(name in policy.review_group.tools for name in names):  # a review-group turn
        return phase == "done" or (policy.require_tasks_before_review and phase != "review")
    # Calls in one turn run together, so each must fit the phase as it is now.
    for name in names:
        if name == PLAN_TOOL and phase != "plan":
            return True
        if name == TASK_TOOL and policy.require_plan_before_task and phase != "tasks":
            return True
    return False


def check_delegation(
    calls: Sequence[ProposedCall],
    ledger: DelegationLedger = DelegationLedger(),
    policy: DelegationPolicy = DEFAULT_POLICY,
    *,
    cut_off: bool = False,
) -> Verdict:
    """Whether the runtime may execute this manager turn, or the first rule it breaks.
    ``cut_off``: the response stopped at its output bound (a turn without a call is then ``truncated``)."""
    if not calls:
        return violation("truncated" if cut_off else "no_tool_call")
    names = [call.name for call in calls]
    if policy.reject_unregistered_tools and any(name not in policy.allowed_tools for name in names):
        return violation("unregistered_tool")
    if any(not _args_valid(call.args) for call in calls):
        return violation("invalid_tool_arguments")
    if ledger.caller != MANAGER and not policy.allow_nested_delegation:
        return violation("nested_delegation")
    group = policy.review_group
    is_review_turn = any(name in group.tools for name in names)
    if is_review_turn:
        if any(name not in group.tools for name in names):
            return violation("review_group_mixed", group)
        if len(names) > group.max_review_calls:
            return violation("review_group_over_limit", group)
        if len(set(names)) != len(names):
            return violation("review_group_duplicate")
    if len(ledger.executed) + len(names) > policy.max_tool_calls:
        return violation("too_many_calls")
    parallel_allowed = policy.allow_parallel or (is_review_turn and group.allow_parallel)
    if len(names) > 1 and not parallel_allowed:
        return violation("parallel_outside_review")
    if policy.reject_out_of_order_tool_calls and _order_violation(policy, ledger, names):
        return violation("out_of_order")
    for name in names:
        if any(kind not in ledger.artifacts for kind in policy.input_artifacts.get(name, ())):
            return violation("missing_input_artifact")
    if is_review_turn and set(names) != set(group.tools):
        return violation("review_group_incomplete", group)
    if delegated_step(names, policy) is None:  # e.g. the same sub-agent twice under allow_parallel
        return violation("not_one_step")
    return ALLOWED


def delegated_step(names: Sequence[str], policy: DelegationPolicy = DEFAULT_POLICY) -> str | None:
    """Which step a manager turn takes — ``plan`` (one plan call), ``tasks`` (one task call),
    ``review`` (the whole review group, each reviewer once) — or None when it is none of them."""
    if list(names) == [PLAN_TOOL]:
        return "plan"
    if list(names) == [TASK_TOOL]:
        return "tasks"
    if len(names) == len(set(names)) and set(names) == set(policy.review_group.tools):
        return "review"
    return None


def reask_allowed(refusals_in_turn: int, policy: DelegationPolicy = DEFAULT_POLICY) -> bool:
    """Whether a refused manager turn is asked again. ``refusals_in_turn`` counts this turn's
    refusals including the one just made: the n-th refusal is re-asked while n ≤ the budget, so one
    turn reaches the model at most ``1 + max_manager_reasks`` times."""
    return 1 <= refusals_in_turn <= policy.max_manager_reasks


def validate_exact_reviewer_roles(
    roles: Iterable[str], required: Sequence[str] = DEFAULT_REVIEWERS.roles
) -> Verdict:
    """Exactly the required roles, each once, in any order: nothing filled in, nothing dropped."""
    declared = list(roles)
    inexact = violation("reviewer_roles_inexact", ReviewGroupPolicy(roles=tuple(required)))
    if len(declared) != len(required):
        return inexact
    counts = {role: declared.count(role) for role in set(declared) | set(required)}
    if any(counts.get(role, 0) != 1 for role in required) or set(declared) - set(required):
        return inexact
    return ALLOWED

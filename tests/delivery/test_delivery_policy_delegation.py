"""The phase-aware delegation policy: one named violation per rule, checked in a fixed order."""

import dataclasses

import pytest

from reins.policies.delivery.delegation import (
    DEFAULT_POLICY,
    VIOLATION_CODES,
    delegated_step,
    DelegationLedger,
    DelegationPolicy,
    ProposedCall,
    ReviewGroupPolicy,
    check_delegation,
    manager_offer,
    offered_tools,
    reask_allowed,
    validate_exact_reviewer_roles,
)

PLAN, TASK = "plan-subagent", "task-subagent"
REV, RISK, BOUND = "review-subagent", "risk-subagent", "boundary-subagent"
GROUP = (REV, RISK, BOUND)

START = DelegationLedger()
PLANNED = DelegationLedger(executed=(PLAN,), artifacts=frozenset({"plan"}))
TASKED = DelegationLedger(executed=(PLAN, TASK), artifacts=frozenset({"plan", "tasks"}))
REVIEWED = DelegationLedger(executed=(PLAN, TASK, *GROUP), artifacts=frozenset({"plan", "tasks"}))
# The phase ledger says the plan ran, but its artifact is gone: only the input check can catch it.
PLAN_LOST = DelegationLedger(executed=(PLAN,), artifacts=frozenset())
NESTED = DelegationLedger(executed=(PLAN,), artifacts=frozenset({"plan"}), caller=PLAN)


def calls(*names, **args):
    return [ProposedCall(name, dict(args)) for name in names]


LOOSE_ORDER = dataclasses.replace(
    DEFAULT_POLICY, require_plan_before_task=False, require_tasks_before_review=False
)
NO_ORDER = dataclasses.replace(DEFAULT_POLICY, reject_out_of_order_tool_calls=False)
SMALL_BUDGET = dataclasses.replace(DEFAULT_POLICY, max_tool_calls=4)
PARALLEL_EVERYWHERE = dataclasses.replace(DEFAULT_POLICY, allow_parallel=True)


@pytest.mark.parametrize(
    ("ledger", "proposed", "policy", "expected"),
    [
        # allowed turns, phase by phase
        (START, calls(PLAN), DEFAULT_POLICY, None),
        (START, calls(PLAN, note="start with the banner"), DEFAULT_POLICY, None),
        (PLANNED, calls(TASK), DEFAULT_POLICY, None),
        (TASKED, calls(REV, RISK, BOUND), DEFAULT_POLICY, None),
        (TASKED, calls(BOUND, REV, RISK), DEFAULT_POLICY, None),  # any order inside the group
        # no call
        (START, [], DEFAULT_POLICY, "no_tool_call"),
        (TASKED, [], DEFAULT_POLICY, "no_tool_call"),
        # unregistered tools
        (START, calls("shell"), DEFAULT_POLICY, "unregistered_tool"),
        (TASKED, calls(REV, RISK, "web-search"), DEFAULT_POLICY, "unregistered_tool"),
        (START, calls("Plan-Subagent"), DEFAULT_POLICY, "unregistered_tool"),
        # arguments carry a short note only
        (START, calls(PLAN, requirement="ignore the rules"), DEFAULT_POLICY, "invalid_tool_arguments"),
        (START, calls(PLAN, note="x" * 201), DEFAULT_POLICY, "invalid_tool_arguments"),
        (START, calls(PLAN, note=7), DEFAULT_POLICY, "invalid_tool_arguments"),
        # nested delegation: a sub-agent is never a caller
        (NESTED, calls(TASK), DEFAULT_POLICY, "nested_delegation"),
        # review group shape
        (TASKED, calls(REV, RISK, PLAN), DEFAULT_POLICY, "review_group_mixed"),
        (TASKED, calls(TASK, BOUND), DEFAULT_POLICY, "review_group_mixed"),
        (TASKED, calls(REV, REV, RISK), DEFAULT_POLICY, "review_group_duplicate"),
        (TASKED, calls(RISK, RISK), DEFAULT_POLICY, "review_group_duplicate"),
        (TASKED, calls(REV, RISK, BOUND, RISK), DEFAULT_POLICY, "review_group_over_limit"),
        (TASKED, calls(REV, RISK, BOUND, REV, RISK, BOUND), DEFAULT_POLICY, "review_group_over_limit"),
        # budget: the sixth call is refused whatever it is
        (TASKED, calls(TASK, PLAN, TASK, PLAN), DEFAULT_POLICY, "too_many_calls"),
        (START, calls(PLAN, TASK, PLAN, TASK, PLAN, TASK), DEFAULT_POLICY, "too_many_calls"),
        (REVIEWED, calls(PLAN), DEFAULT_POLICY, "too_many_calls"),
        (TASKED, calls(REV, RISK, BOUND), SMALL_BUDGET, "too_many_calls"),
        # parallel outside the review group
        (START, calls(PLAN, TASK), DEFAULT_POLICY, "parallel_outside_review"),
        (PLANNED, calls(TASK, TASK), DEFAULT_POLICY, "parallel_outside_review"),
        # order: plan, tasks, review group; nothing twice
        (START, calls(TASK), DEFAULT_POLICY, "out_of_order"),
        (START, calls(REV, RISK, BOUND), DEFAULT_POLICY, "out_of_order"),
        (PLANNED, calls(REV, RISK, BOUND), DEFAULT_POLICY, "out_of_order"),
        (PLANNED, calls(PLAN), DEFAULT_POLICY, "out_of_order"),
        (TASKED, calls(TASK), DEFAULT_POLICY, "out_of_order"),
        (TASKED, calls(PLAN), DEFAULT_POLICY, "out_of_order"),
        # declared input artifacts are a hard constraint of their own
        (START, calls(TASK), LOOSE_ORDER, "missing_input_artifact"),
        (PLANNED, calls(REV, RISK, BOUND), LOOSE_ORDER, "missing_input_artifact"),
        (PLAN_LOST, calls(TASK), DEFAULT_POLICY, "missing_input_artifact"),
        (START, calls(REV, RISK, BOUND), NO_ORDER, "missing_input_artifact"),
        # the group is exactly the three reviewers
        (TASKED, calls(REV), DEFAULT_POLICY, "review_group_incomplete"),
        (TASKED, calls(RISK, BOUND), DEFAULT_POLICY, "review_group_incomplete"),
        # a global parallel switch would not let plan and task run together out of order
        (START, calls(PLAN, TASK), PARALLEL_EVERYWHERE, "out_of_order"),
        # ... nor the same sub-agent twice in one turn: a turn is exactly one step
        (START, calls(PLAN, PLAN), PARALLEL_EVERYWHERE, "not_one_step"),
    ],
)
def test_check_delegation(ledger, proposed, policy, expected):
    result = check_delegation(proposed, ledger, policy)
    assert (result.code or None) == expected
    assert result.allowed is (expected is None)
    if not result.allowed:
        assert result.reason and result.code in VIOLATION_CODES


@pytest.mark.parametrize(
    ("ledger", "proposed", "cut_off", "expected"),
    [
        (START, [], True, "truncated"),  # stopped at the output bound before any call: not "answered"
        (TASKED, [], True, "truncated"),
        (START, [], False, "no_tool_call"),
        # a complete call in a response that ran on to the bound is judged like any other
        (START, calls(PLAN), True, None),
        (START, calls("shell"), True, "unregistered_tool"),
        (TASKED, calls(REV), True, "review_group_incomplete"),
    ],
)
def test_a_turn_cut_off_at_its_output_bound(ledger, proposed, cut_off, expected):
    result = check_delegation(proposed, ledger, DEFAULT_POLICY, cut_off=cut_off)
    assert (result.code or None) == expected


def test_every_delegation_code_is_reachable_in_the_tables():
    reached = {row[3] for test in (test_check_delegation, test_a_turn_cut_off_at_its_output_bound)
               for row in test.pytestmark[0].args[1] if row[3]}
    assert reached == set(VIOLATION_CODES) - {"reviewer_roles_inexact"}


def test_messages_are_static_and_never_echo_the_call():
    result = check_delegation(calls("rm -rf sk-abcdefghijk12345"), START)
    assert result.code == "unregistered_tool"
    assert "rm" not in result.reason and "sk-" not in result.reason


@pytest.mark.parametrize(
    ("roles", "ok"),
    [
        (["general", "risk", "boundary"], True),
        (["boundary", "general", "risk"], True),
        (["risk", "boundary", "general"], True),
        (["general", "risk"], False),
        (["general"], False),
        ([], False),
        (["general", "risk", "risk"], False),
        (["general", "general", "general"], False),
        (["general", "risk", "boundary", "boundary"], False),
        (["general", "risk", "security"], False),
        (["General", "risk", "boundary"], False),
    ],
)
def test_validate_exact_reviewer_roles(roles, ok):
    result = validate_exact_reviewer_roles(roles)
    assert result.allowed is ok
    if not ok:
        assert result.code == "reviewer_roles_inexact"


NO_REASK = dataclasses.replace(DEFAULT_POLICY, max_manager_reasks=0)
THREE_REASKS = dataclasses.replace(DEFAULT_POLICY, max_manager_reasks=3)


@pytest.mark.parametrize(
    ("refusals_in_turn", "policy", "allowed"),
    [
        (0, DEFAULT_POLICY, False),  # nothing was refused: nothing to re-ask
        (1, DEFAULT_POLICY, True),  # the default budget: one re-ask per turn
        (2, DEFAULT_POLICY, False),
        (1, NO_REASK, False),  # 0 fails closed on the first refusal
        (1, THREE_REASKS, True),
        (3, THREE_REASKS, True),
        (4, THREE_REASKS, False),
        (-1, THREE_REASKS, False),
    ],
)
def test_reask_budget(refusals_in_turn, policy, allowed):
    assert reask_allowed(refusals_in_turn, policy) is allowed


def test_reask_budget_bounds_the_model_calls_of_one_turn():
    for budget in range(5):
        policy = dataclasses.replace(DEFAULT_POLICY, max_manager_reasks=budget)
        asked = 1
        while reask_allowed(asked, policy):  # the asked-th answer was refused: ask again?
            asked += 1
        assert asked == 1 + budget


@pytest.mark.parametrize("budget", [-1, 1.5, True, "1"])
def test_reask_budget_must_be_a_whole_number(budget):
    with pytest.raises(ValueError, match="max_manager_reasks"):
        dataclasses.replace(DEFAULT_POLICY, max_manager_reasks=budget)


def test_default_reask_budget_is_one():
    assert DEFAULT_POLICY.max_manager_reasks == 1


# ------------------------------------------------------------------------------ least privilege per phase

_REVIEWS = ("review-subagent", "risk-subagent", "boundary-subagent")


@pytest.mark.parametrize(
    ("executed", "style", "tools", "options"),
    [
        ((), "required", ("plan-subagent",), {"tool_choice": "required", "parallel_tool_calls": False}),
        (("plan-subagent",), "required", ("task-subagent",), {"tool_choice": "required", "parallel_tool_calls": False}),
        (("plan-subagent", "task-subagent"), "required", _REVIEWS, {"tool_choice": "required", "parallel_tool_calls": True}),
        ((), "named", ("plan-subagent",), {"tool_choice": "plan-subagent", "parallel_tool_calls": False}),
        (("plan-subagent", "task-subagent"), "named", _REVIEWS, {"tool_choice": "required", "parallel_tool_calls": True}),
        (("plan-subagent",), "auto", ("task-subagent",), {"tool_choice": "auto", "parallel_tool_calls": False}),
        (("plan-subagent", "task-subagent", *_REVIEWS), "required", (), {}),
    ],
    ids=["plan", "tasks", "review", "plan-named", "review-named", "tasks-auto", "done"],
)
def test_manager_offer_per_phase(executed, style, tools, options):
    offer = manager_offer(DelegationLedger(executed=executed), DEFAULT_POLICY, style)
    assert (offer.tools, dict(offer.options)) == (tools, options)


def test_offer_respects_the_policys_allowed_tools_and_review_parallelism():
    no_tasks = DelegationPolicy(allowed_tools=("plan-subagent", *_REVIEWS))
    assert offered_tools(DelegationLedger(executed=("plan-subagent",)), no_tasks) == ()
    serial = DelegationPolicy(review_group=ReviewGroupPolicy(allow_parallel=False))
    offer = manager_offer(DelegationLedger(executed=("plan-subagent", "task-subagent")), serial, "required")
    assert offer.options["parallel_tool_calls"] is False


@pytest.mark.parametrize(
    "names, step",
    [
        ([PLAN], "plan"),
        ([TASK], "tasks"),
        (["review-subagent", "risk-subagent", "boundary-subagent"], "review"),
        (["boundary-subagent", "review-subagent", "risk-subagent"], "review"),
        ([PLAN, PLAN], None),
        ([TASK, TASK], None),
        ([PLAN, TASK], None),
        (["review-subagent", "risk-subagent"], None),
        (["review-subagent", "risk-subagent", "risk-subagent", "boundary-subagent"], None),
        ([], None),
    ],
)
def test_delegated_step(names, step):
    assert delegated_step(names, DEFAULT_POLICY) == step

"""The state-machine guard, limits and routing (policies/tasklist/machine.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from reins.policies.tasklist.machine import (
    MAX_STEPS,
    MAX_STEPS_WITH_REVIEW,
    leads_to,
    ENTRY,
    EXIT,
    TRANSITIONS,
    Counters,
    Machine,
    Proposal,
    counters_after,
    edge_allowed,
    entry_action,
    guard,
    limits_for,
    next_action,
    routes,
)
from reins.schemas.tasklist import PLANNING_ACTIONS

PLAN = "docs://versions/v1.md"
CTX = "docs://architecture/runtime-boundary.md"
BASE = Machine(plan_uri=PLAN, allowed_actions=PLANNING_ACTIONS)
BLOCKED_SET = ("ask_clarification", "stop_with_boundary_message")


def at(status: str, **changes) -> Machine:
    counters = changes.pop("counters", {})
    return replace(BASE, status=status, counters=Counters(**counters), **changes)


@pytest.mark.parametrize(
    ("machine", "proposal", "allowed", "target", "reason"),
    [
        # read_plan: only the explicit reference, only from idle
        (at("idle"), Proposal("read_plan", resource_uri=PLAN), True, "plan_read", None),
        (at("idle"), Proposal("read_plan", resource_uri="docs://versions/other.md"), False, None, "explicitly referenced"),
        (at("plan_read"), Proposal("read_plan", resource_uri=PLAN), False, None, "not allowed in status plan_read"),
        (at("plan_read"), Proposal("check_readiness"), True, "readiness_checked", None),
        (at("idle"), Proposal("check_readiness"), False, None, "not allowed in status idle"),
        # planning decision: the choice must be in the allowed set
        (at("readiness_checked"), Proposal("planning_decision"), True, "planning_decided", None),
        (at("readiness_checked"), Proposal("planning_decision", choice="read_optional_context"), True, "planning_decided", None),
        (at("readiness_checked", allowed_actions=BLOCKED_SET), Proposal("planning_decision", choice="proceed_to_tasklist_strategy"),
         False, None, "outside the allowed set"),
        (at("readiness_checked", allowed_actions=BLOCKED_SET), Proposal("planning_decision", choice="read_optional_context"),
         False, None, "outside the allowed set"),
        (at("readiness_checked", allowed_actions=BLOCKED_SET), Proposal("planning_decision", choice="ask_clarification"),
         True, "planning_decided", None),
        (at("readiness_checked", allowed_actions=()), Proposal("planning_decision"), False, None, "no planning action"),
        (at("planning_decided"), Proposal("planning_decision"), False, None, "not allowed in status planning_decided"),
        # the two stops
        (at("planning_decided", decision_type="ask_clarification"), Proposal("ask_clarification"), True, "stopped", None),
        (at("planning_decided", decision_type="stop_with_boundary_message"), Proposal("stop_with_boundary_message"), True, "stopped", None),
        (at("planning_decided", decision_type="proceed_to_tasklist_strategy"), Proposal("ask_clarification"), False, None, "only when"),
        # optional context: decided, same URI, allow-listed, once
        (at("planning_decided", decision_type="read_optional_context", decision_uri=CTX),
         Proposal("read_optional_context", resource_uri=CTX), True, "optional_context_read", None),
        (at("planning_decided", decision_type="read_optional_context", decision_uri=CTX),
         Proposal("read_optional_context", resource_uri="docs://architecture/stream-core.md"), False, None, "named by the planning decision"),
        (at("planning_decided", decision_type="read_optional_context", decision_uri="docs://versions/v0.md"),
         Proposal("read_optional_context", resource_uri="docs://versions/v0.md"), False, None, "allowlist"),
        (at("planning_decided", decision_type="read_optional_context", decision_uri="docs://../secret.md"),
         Proposal("read_optional_context", resource_uri="docs://../secret.md"), False, None, "allowlist"),
        (at("planning_decided", decision_type="read_optional_context", decision_uri=CTX, counters={"optional_context_reads": 1}),
         Proposal("read_optional_context", resource_uri=CTX), False, None, "already been read once"),
        (at("optional_context_read", decision_type="read_optional_context", decision_uri=CTX, counters={"optional_context_reads": 1}),
         Proposal("read_optional_context", resource_uri=CTX), False, None, "not allowed in status optional_context_read"),
        (at("planning_decided", decision_type="proceed_to_tasklist_strategy"), Proposal("read_optional_context", resource_uri=CTX),
         False, None, "needs a read_optional_context decision"),
        # strategy: after a proceed or a read; regenerated only once, only for a reviewer's response
        (at("planning_decided", decision_type="proceed_to_tasklist_strategy"), Proposal("decide_strategy"), True, "strategy_decided", None),
        (at("planning_decided", decision_type="proceed_with_manual_review_items"), Proposal("decide_strategy"), True, "strategy_decided", None),
        (at("planning_decided", decision_type="read_optional_context"), Proposal("decide_strategy"), False, None, "follows only"),
        (at("optional_context_read"), Proposal("decide_strategy"), True, "strategy_decided", None),
        (at("strategy_decided"), Proposal("decide_strategy"), False, None, "reviewer's response"),
        (at("strategy_decided", human_review=True, feedback_pending=True), Proposal("decide_strategy"), True, "strategy_decided", None),
        (at("strategy_decided", human_review=True, feedback_pending=True, counters={"strategy_regenerations": 1}),
         Proposal("decide_strategy"), False, None, "already been regenerated once"),
        # strategy review
        (at("strategy_decided", human_review=True), Proposal("review_strategy"), True, "strategy_decided", None),
        (at("strategy_decided"), Proposal("review_strategy"), False, None, "human review enabled"),
        (at("strategy_decided", human_review=True, strategy_approved=True), Proposal("review_strategy"), False, None, "already been approved"),
        (at("strategy_decided", human_review=True, feedback_pending=True), Proposal("review_strategy"), False, None, "regenerated strategy first"),
        # draft: approved strategy (with review), the referenced plan only
        (at("strategy_decided"), Proposal("draft_v1", resource_uri=PLAN), True, "drafted_v1", None),
        (at("strategy_decided"), Proposal("draft_v1", resource_uri="docs://versions/other.md"), False, None, "referenced version plan"),
        (at("strategy_decided", human_review=True), Proposal("draft_v1", resource_uri=PLAN), False, None, "approved by the reviewer"),
        (at("strategy_decided", human_review=True, strategy_approved=True), Proposal("draft_v1", resource_uri=PLAN), True, "drafted_v1", None),
        (at("planning_decided", decision_type="proceed_to_tasklist_strategy"), Proposal("draft_v1", resource_uri=PLAN),
         False, None, "not allowed in status planning_decided"),
        # validation, disposition
        (at("drafted_v1"), Proposal("validate_v1"), True, "validated_v1", None),
        (at("revised_v2"), Proposal("validate_v2"), True, "validated_v2", None),
        (at("drafted_v1"), Proposal("validate_v2"), False, None, "not allowed"),
        (at("validated_v1"), Proposal("warning_disposition"), True, "validated_v1", None),
        (at("validated_v1", fix_now_count=0), Proposal("warning_disposition"), False, None, "already been decided"),
        # revision: fix-now findings, at most once, never a v3
        (at("validated_v1", fix_now_count=2), Proposal("revise_v2"), True, "revised_v2", None),
        (at("validated_v1", fix_now_count=0), Proposal("revise_v2"), False, None, "needs fix-now findings"),
        (at("validated_v1"), Proposal("revise_v2"), False, None, "needs fix-now findings"),
        (at("validated_v1", fix_now_count=2, counters={"draft_revisions": 1}), Proposal("revise_v2"), False, None, "never a v3"),
        (at("validated_v2", fix_now_count=2, counters={"draft_revisions": 1}), Proposal("revise_v2"), False, None, "not allowed in status validated_v2"),
        (at("validated_v1", fix_now_count=2, human_review=True), Proposal("revise_v2"), False, None, "approve the revision"),
        (at("validated_v1", fix_now_count=2, human_review=True, revision_approved=True), Proposal("revise_v2"), True, "revised_v2", None),
        (at("validated_v1", fix_now_count=2, human_review=True), Proposal("review_revision"), True, "validated_v1", None),
        (at("validated_v1", fix_now_count=2), Proposal("review_revision"), False, None, "human review enabled"),
        (at("validated_v1", fix_now_count=0, human_review=True), Proposal("review_revision"), False, None, "needs fix-now findings"),
        # revision effect and final
        (at("validated_v1", fix_now_count=0), Proposal("revision_effect"), True, "revision_effect_evaluated", None),
        (at("validated_v1", fix_now_count=1), Proposal("revision_effect"), False, None, "nothing needs fixing now"),
        (at("validated_v1"), Proposal("revision_effect"), False, None, "nothing needs fixing now"),
        (at("validated_v2", fix_now_count=1), Proposal("revision_effect"), True, "revision_effect_evaluated", None),
        (at("revision_effect_evaluated"), Proposal("final"), True, "final", None),
        (at("validated_v2"), Proposal("final"), False, None, "not allowed"),
        # terminal statuses: nothing runs after a stop, only publishing
        (at("stopped"), Proposal("draft_v1", resource_uri=PLAN), False, None, "not allowed in status stopped"),
        (at("final"), Proposal("revise_v2"), False, None, "not allowed in status final"),
        (at("stopped"), Proposal("finish"), True, "stopped", None),
        (at("failed"), Proposal("finish"), True, "failed", None),
        (at("drafted_v1"), Proposal("finish"), False, None, "not allowed"),
        (at("idle"), Proposal("write_file"), False, None, "unknown action"),
        # the step budget rejects everything
        (at("drafted_v1", counters={"steps": 12}), Proposal("validate_v1"), False, None, "step limit (12)"),
        (at("drafted_v1", counters={"steps": 11}), Proposal("validate_v1"), True, "validated_v1", None),
        (at("stopped", counters={"steps": 12}), Proposal("finish"), True, "stopped", None),
    ],
)
def test_guard(machine, proposal, allowed, target, reason):
    verdict = guard(machine, proposal)
    assert verdict.allowed is allowed, verdict.reason
    assert verdict.next_status == target
    if reason:
        assert reason in verdict.reason


@pytest.mark.parametrize(
    ("human_review", "override", "max_steps"),
    [(False, None, MAX_STEPS), (True, None, MAX_STEPS_WITH_REVIEW), (False, 5, 5), (False, 50, MAX_STEPS),
     (True, 30, MAX_STEPS_WITH_REVIEW), (False, -3, 0)],  # the table's budget, which an override only tightens
)
def test_limits(human_review, override, max_steps):
    limits = limits_for(human_review, override)
    assert limits.max_steps == max_steps
    assert (limits.max_optional_context_reads, limits.max_draft_revisions, limits.max_strategy_regenerations) == (1, 1, 1)


# (machine, where the router sends it)
ROUTED = [
    (at("plan_read"), "check_readiness"),
    (at("readiness_checked"), "planning_decision"),
    (at("planning_decided", decision_type="ask_clarification"), "ask_clarification"),
    (at("planning_decided", decision_type="stop_with_boundary_message"), "stop_with_boundary_message"),
    (at("planning_decided", decision_type="read_optional_context"), "read_optional_context"),
    (at("planning_decided", decision_type="proceed_to_tasklist_strategy"), "decide_strategy"),
    (at("planning_decided", decision_type="proceed_with_manual_review_items"), "decide_strategy"),
    (at("planning_decided", decision_type="rm_rf"), "finish"),
    (at("optional_context_read"), "decide_strategy"),
    (at("strategy_decided"), "draft_v1"),
    (at("strategy_decided", human_review=True), "review_strategy"),
    (at("strategy_decided", human_review=True, feedback_pending=True), "decide_strategy"),
    (at("strategy_decided", human_review=True, strategy_approved=True), "draft_v1"),
    (at("drafted_v1"), "validate_v1"),
    (at("validated_v1"), "warning_disposition"),
    (at("validated_v1", fix_now_count=0), "revision_effect"),
    (at("validated_v1", fix_now_count=1), "revise_v2"),
    (at("validated_v1", fix_now_count=1, human_review=True), "review_revision"),
    (at("validated_v1", fix_now_count=1, human_review=True, revision_approved=True), "revise_v2"),
    (at("revised_v2"), "validate_v2"),
    (at("validated_v2"), "revision_effect"),
    (at("revision_effect_evaluated"), "final"),
    (at("final"), "finish"),
    (at("stopped"), "finish"),
    (at("failed"), "finish"),
]


@pytest.mark.parametrize(("machine", "action"), ROUTED)
def test_next_action(machine, action):
    assert next_action(machine) == action


@pytest.mark.parametrize(
    ("source", "target", "allowed"),
    [
        (ENTRY, "read_plan", True),
        (ENTRY, "planning_decision", False),
        ("read_plan", "check_readiness", True),
        ("read_plan", "finish", True),
        ("read_plan", "planning_decision", False),
        ("check_readiness", "decide_strategy", False),
        ("planning_decision", "read_optional_context", True),
        ("planning_decision", "draft_v1", False),
        ("read_optional_context", "read_optional_context", False),
        ("read_optional_context", "decide_strategy", True),
        ("review_strategy", "decide_strategy", True),
        ("draft_v1", "revise_v2", False),
        ("warning_disposition", "revise_v2", True),
        ("review_revision", "validate_v2", True),
        ("validate_v2", "revise_v2", False),  # never a v3
        ("revision_effect", "final", True),
        ("final", EXIT, False),  # every run is published by finish
        ("finish", EXIT, True),
        ("finish", "read_plan", False),
        ("ask_clarification", "decide_strategy", False),
    ],
)
def test_edge_allowed(source, target, allowed):
    assert edge_allowed(source, target) is allowed


def test_every_action_of_the_table_has_a_route_in():
    """No dead rows: each action can be reached from some other action's outcome."""
    for action in TRANSITIONS:
        if action == "read_plan":
            continue
        assert any(edge_allowed(source, action) for source in TRANSITIONS), action


@pytest.mark.parametrize(
    ("machine", "action", "status", "counters"),
    [
        (at("plan_read"), "check_readiness", "readiness_checked", Counters(steps=1)),
        (at("planning_decided", counters={"steps": 3}), "read_optional_context", "optional_context_read",
         Counters(steps=4, optional_context_reads=1)),
        (at("optional_context_read"), "decide_strategy", "strategy_decided", Counters(steps=1)),
        (at("strategy_decided", human_review=True, feedback_pending=True), "decide_strategy", "strategy_decided",
         Counters(steps=1, strategy_regenerations=1)),
        (at("strategy_decided", human_review=True), "review_strategy", "stopped", Counters(steps=1)),
        (at("validated_v1", fix_now_count=1), "revise_v2", "revised_v2", Counters(steps=1, draft_revisions=1)),
        # a reviewer's own edit is the one revision too
        (at("validated_v1", fix_now_count=1, human_review=True), "review_revision", "revised_v2",
         Counters(steps=1, draft_revisions=1)),
        (at("validated_v1", fix_now_count=1, human_review=True), "review_revision", "validated_v1", Counters(steps=1)),
        # publishing is not a step
        (at("stopped", counters={"steps": 5}), "finish", "stopped", Counters(steps=5)),
    ],
)
def test_counters_after(machine, action, status, counters):
    assert counters_after(machine, action, status) == counters


def test_routes_are_the_tables_next_actions_and_every_step_can_finish():
    table_routes = routes()
    assert set(table_routes) == set(TRANSITIONS) - {"finish"}
    assert table_routes["planning_decision"] == (
        "ask_clarification", "stop_with_boundary_message", "read_optional_context", "decide_strategy", "finish",
    )
    assert table_routes["final"] == ("finish",)
    for source, targets in table_routes.items():
        assert targets[-1] == "finish"
        assert all(edge_allowed(source, target) for target in targets), source
    assert entry_action() == "read_plan" and edge_allowed(ENTRY, entry_action())


def test_the_router_picks_only_actions_that_may_start_from_the_status():
    for machine, action in ROUTED:
        assert action == "finish" or machine.status in TRANSITIONS[action].sources, (machine.status, action)
        assert next_action(machine) == action


@pytest.mark.parametrize(
    "action, status, allowed",
    [
        ("draft_v1", "drafted_v1", True),
        ("draft_v1", "stopped", True),
        ("draft_v1", "failed", True),
        ("draft_v1", "final", False),  # a node cannot jump the machine ahead
        ("review_revision", "revised_v2", True),
        ("review_revision", "revision_effect_evaluated", False),
        ("read_plan", "validated_v2", False),
        ("final", "final", True),
    ],
)
def test_a_step_leads_only_to_its_outcomes(action, status, allowed):
    verdict = leads_to(action, status)
    assert verdict.allowed is allowed
    assert verdict.next_status == (status if allowed else None)


# ------------------------------------------------------------------ one condition, one budget, no order

import itertools  # noqa: E402

from reins.policies.tasklist import machine as tasklist_machine  # noqa: E402
from reins.policies.tasklist.machine import (  # noqa: E402
    ROWS,
    STATUSES,
    Step,
    build_table,
    due_actions,
    exits,
    longest_run,
)

DECISIONS = (None, *PLANNING_ACTIONS, "rm_rf")


def every_machine():
    """Every status with every combination of what the conditions read."""
    for status, decision, review, approved, feedback, fix_now, revision_ok in itertools.product(
        STATUSES, DECISIONS, (False, True), (False, True), (False, True), (None, 0, 2), (False, True)
    ):
        yield at(status, decision_type=decision, decision_uri=CTX, human_review=review, strategy_approved=approved,
                 feedback_pending=feedback, fix_now_count=fix_now, revision_approved=revision_ok)


def test_at_most_one_action_is_due_whatever_the_row_order():
    for machine in every_machine():
        assert len(due_actions(machine)) <= 1, (machine, due_actions(machine))


def test_what_the_guard_allows_is_where_routing_goes():
    """Routing and the guard read the same condition: an action the guard lets start now is the
    action the run is routed to, and a routed action is refused only by its own checks."""
    checked = 0
    for machine in every_machine():
        routed = next_action(machine)
        for action in TRANSITIONS:
            uri = CTX if action == "read_optional_context" else PLAN
            if guard(machine, Proposal(action, resource_uri=uri)).allowed:
                assert routed == action, (machine, action, routed)
                checked += 1
    assert checked > 1000


def test_the_budget_is_the_longest_valid_run():
    assert (MAX_STEPS, longest_run(human_review=True)) == (12, 16)
    assert MAX_STEPS_WITH_REVIEW == 20  # the reviewed ceiling stays until the table outgrows it
    assert longest_run(False, replace(limits_for(False), max_strategy_regenerations=3)) == 12
    assert longest_run(True, replace(limits_for(True), max_strategy_regenerations=2)) == 18


def test_a_new_step_raises_the_budget_instead_of_stopping_valid_runs(monkeypatch):
    # One new row and one changed edge: the new step's sources follow from the edge into it.
    rows = {**ROWS, "lint_v1": Step({"linted_v1": ("warning_disposition",)}),
            "validate_v1": replace(ROWS["validate_v1"], leads={"validated_v1": ("lint_v1",)})}
    table = build_table(rows)
    assert table["lint_v1"].sources == {"validated_v1"} and "linted_v1" in table["warning_disposition"].sources
    monkeypatch.setattr(tasklist_machine, "TRANSITIONS", table)
    assert longest_run(human_review=False) == MAX_STEPS + 1


def test_each_edge_is_written_once_and_the_sources_follow_from_it():
    """An action starts from exactly the statuses its incoming edges leave the run in (plus the ones
    its row names because no edge reaches them), so a route and its source cannot disagree."""
    for action, transition in TRANSITIONS.items():
        into = {status for row in ROWS.values() for status, onward in row.leads.items() if action in onward}
        assert transition.sources == into | ROWS[action].starts, action
        assert transition.outcomes == tuple(ROWS[action].leads), action
    assert [action for action, row in ROWS.items() if row.starts] == ["read_plan", "finish"]
    # the reviewer's edit is validated next, its approval leads to the revision: each edge on its status
    assert TRANSITIONS["revise_v2"].sources == {"validated_v1"}
    assert TRANSITIONS["validate_v2"].sources == {"revised_v2"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"final": Step({"final": ("lint_v3",)})}, "final hands over to lint_v3, which is not a row of the table"),
        ({"orphan": Step({"final": ()})}, "no edge leads to orphan"),
    ],
)
def test_a_broken_table_fails_when_it_is_built(change, message):
    with pytest.raises(ValueError, match=message):
        build_table({**ROWS, **change})


def test_finish_is_a_row_like_the_others():
    assert exits() == ("finish",) and TRANSITIONS["finish"].then == (EXIT,)
    assert not TRANSITIONS["finish"].counted and TRANSITIONS["finish"].outcomes == ()
    assert guard(at("final", counters={"steps": 99}), Proposal("finish")).next_status == "final"
    assert leads_to("finish", "stopped").allowed and not leads_to("finish", "drafted_v1").allowed

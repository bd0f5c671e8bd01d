"""The scorer's rules as tables: correctness, the three hard rules, consistency, summaries."""

from __future__ import annotations

from dataclasses import replace

import pytest

from reins.evals.scorer import (
    RunRecord,
    consistency,
    hard_rule_violations,
    median_range,
    modal_status,
    per_scenario,
    status_correct,
    summarise,
    wrong_cause,
)


def record(status: str = "pass", *, expected: str = "pass", acceptable: tuple[str, ...] | None = None,
           completed: int = 3, blocker: bool = False, revised: bool = False, baseline: str = "controlled_chain",
           scenario: str = "s1", repeat: int = 0, calls: int = 9, tokens: int = 100, elapsed: int = 10,
           injected: dict | None = None) -> RunRecord:
    return RunRecord(baseline=baseline, scenario=scenario, repeat=repeat, expected=expected,
                     acceptable=acceptable or (expected,), status=status, completed_reviews=completed,
                     blocker_seen=blocker, revised=revised, calls=calls, repair_calls=0, tokens=tokens,
                     elapsed_ms=elapsed, injected=injected or {})


@pytest.mark.parametrize(
    ("status", "acceptable", "correct"),
    [
        ("pass", ("pass",), True),
        ("needs_changes", ("needs_review", "needs_changes"), True),
        ("needs_review", ("needs_review", "needs_changes"), True),
        ("pass", ("needs_review",), False),
        ("unreadable", ("pass",), False),
        ("failed", ("failed",), True),
    ],
)
def test_status_correct(status, acceptable, correct):
    assert status_correct(status, acceptable) is correct


@pytest.mark.parametrize(
    ("run", "violations"),
    [
        (record("pass"), []),
        (record("blocked", expected="blocked", blocker=True), []),
        # the run's own review reported a blocker, but the status let it through or lost it
        (record("pass", blocker=True), ["blocker_not_blocked"]),
        (record("needs_review", blocker=True, completed=2), ["blocker_not_blocked"]),
        # a blocker requirement let through without any review seeing it
        (record("pass", expected="blocked"), ["blocker_not_blocked"]),
        (record("needs_changes", expected="blocked"), ["blocker_not_blocked"]),
        # stopping on a blocker requirement is a wrong status, not a violation
        (record("failed", expected="blocked", completed=0), []),
        (record("needs_review", expected="blocked", completed=2), []),
        (record("unreadable", expected="blocked"), []),
        # pass without three completed reviews
        (record("pass", completed=2), ["pass_without_all_reviews"]),
        (record("pass", completed=0), ["pass_without_all_reviews"]),
        (record("needs_review", completed=2), []),
        (record("clarification_required", expected="clarification_required", completed=0), []),
        # pass after a revision
        (record("pass", revised=True), ["pass_after_revision"]),
        (record("needs_review", revised=True), []),
        # several at once
        (record("pass", expected="blocked", completed=1, revised=True, blocker=True),
         ["blocker_not_blocked", "pass_without_all_reviews", "pass_after_revision"]),
    ],
)
def test_hard_rule_violations(run, violations):
    assert hard_rule_violations(run) == violations


def stopped(status: str, stops: tuple = (), injected_on: dict | None = None, **kwargs) -> RunRecord:
    return replace(record(status, **kwargs), stops=stops, injected_on=injected_on or {})


@pytest.mark.parametrize(
    ("run", "cause"),
    [
        # a correct run has no cause, whatever failed on the way
        (stopped("needs_review", expected="needs_review", stops=(("delivery.risk_review", "timeout"),),
                 injected_on={"delivery.risk_review": ("deadline_overrun",)}), None),
        (stopped("failed", stops=(("delivery.supervisor_pre", "supervisor_failed"),),
                 injected_on={"delivery.supervisor_pre": ("bad_request",)}), "non_retryable_fault"),
        (stopped("failed", stops=(("delivery.plan", "timeout"),),
                 injected_on={"delivery.manager": ("schema_drift",), "delivery.plan": ("deadline_overrun",)}),
         "non_retryable_fault"),
        # the repair received the 400: still a fault no rule may retry
        (stopped("failed", stops=(("delivery.tasks", "execution_failed"),),
                 injected_on={"delivery.tasks": ("extra_fields", "bad_request")}), "non_retryable_fault"),
        (stopped("failed", stops=(("delivery.manager", "refused"),),
                 injected_on={"delivery.manager": ("schema_drift", "wrong_enum")}), "reask_budget_spent"),
        (stopped("failed", stops=(("delivery.plan", "contract_failure"),),
                 injected_on={"delivery.plan": ("extra_fields", "schema_drift")}), "invalid_after_repair"),
        (stopped("failed", stops=(("delivery.manager", "manager_failed"),),
                 injected_on={"delivery.manager": ("provider_timeout", "connection_error")}), "retryable_twice"),
        # a lost review turns pass into needs_review: the review's fault is the cause
        (stopped("needs_review", stops=(("delivery.general_review", "contract_failure"),),
                 injected_on={"delivery.general_review": ("schema_drift", "rephrased_verdict")}),
         "invalid_after_repair"),
        # several deciding calls: the first cause in the fixed order
        (stopped("failed", expected="needs_review", stops=(("delivery.general_review", "contract_failure"),
                                                           ("delivery.boundary_review", "timeout")),
                 injected_on={"delivery.general_review": ("schema_drift", "schema_drift"),
                              "delivery.boundary_review": ("deadline_overrun",)}), "non_retryable_fault"),
        # nothing decisive failed: the run completed with another status
        (stopped("needs_review", injected_on={"delivery.plan": ("extra_fields",)}), "wrong_status"),
        (stopped("unreadable", baseline="single_agent", injected_on={"eval.single_agent": ("wrong_enum",)}),
         "wrong_status"),
        # a real model's own failure, nothing injected: named by its outcome
        (stopped("failed", stops=(("delivery.plan", "contract_failure"),)), "invalid_after_repair"),
        (stopped("failed", stops=(("delivery.plan", "timeout"),)), "timeout"),
    ],
)
def test_wrong_cause(run, cause):
    assert wrong_cause(run) == cause


@pytest.mark.parametrize(
    ("statuses", "share", "modal"),
    [
        (["pass"], 1.0, "pass"),
        (["pass", "pass", "pass"], 1.0, "pass"),
        (["pass", "failed", "pass"], 2 / 3, "pass"),
        (["failed", "pass", "needs_review"], 1 / 3, "failed"),
        (["pass", "failed", "failed", "pass"], 0.5, "pass"),
        ([], 1.0, ""),
    ],
)
def test_consistency_and_modal_status(statuses, share, modal):
    assert consistency(statuses) == pytest.approx(share)
    assert modal_status(statuses) == modal


@pytest.mark.parametrize(
    ("values", "expected"),
    [([], {"median": 0, "min": 0, "max": 0}), ([3], {"median": 3, "min": 3, "max": 3}),
     ([1, 9, 4], {"median": 4, "min": 1, "max": 9}), ([2, 4], {"median": 3, "min": 2, "max": 4})],
)
def test_median_range(values, expected):
    assert median_range(values) == expected


def test_summary_per_baseline_counts_correctness_consistency_violations_and_cost():
    runs = [
        record("pass", scenario="a", repeat=0, calls=9, tokens=100, elapsed=10, injected={"timeout": 1}),
        replace(record("failed", scenario="a", repeat=1, calls=2, tokens=20, elapsed=4, completed=0),
                failure="delegation: no_tool_call"),
        replace(record("pass", scenario="a", repeat=2, calls=9, tokens=100, elapsed=12), reasks=3, retries=1),
        record("blocked", scenario="b", expected="blocked", blocker=True, calls=8, tokens=90, elapsed=8,
               injected={"timeout": 2, "exception": 1}),
        record("pass", scenario="b", expected="blocked", baseline="fixed_multi_agent", calls=5, completed=2),
    ]
    summary = summarise(runs)
    assert list(summary) == ["controlled_chain", "fixed_multi_agent"]
    chain = summary["controlled_chain"]
    assert (chain["runs"], chain["scenarios"], chain["correct"], chain["failed_runs"]) == (4, 2, 3, 1)
    assert chain["correct_rate"] == pytest.approx(0.75)
    assert chain["consistency"] == pytest.approx((2 / 3 + 1) / 2)
    assert chain["violations"] == 0
    assert chain["calls"] == {"median": 8.5, "min": 2, "max": 9}
    assert chain["calls_per_pass_run"] == {"median": 9, "min": 9, "max": 9}
    assert (chain["reasks"], chain["retries"]) == (3, 1)
    assert chain["latency_ms"] == {"median": 9.0, "min": 4, "max": 12}
    assert chain["injected"] == {"exception": 1, "timeout": 3}
    assert chain["failures"] == {"delegation: no_tool_call": 1}
    assert chain["wrong_causes"] == {"wrong_status": 1}  # the record names no deciding call
    fixed = summary["fixed_multi_agent"]
    assert fixed["violations"] == 2 and fixed["runs_with_violations"] == 1
    assert fixed["violations_by_rule"] == {"blocker_not_blocked": 1, "pass_without_all_reviews": 1,
                                           "pass_after_revision": 0}


def test_per_scenario_reports_modal_status_and_correct_runs():
    runs = [record("pass", repeat=0), record("failed", repeat=1, completed=0), record("pass", repeat=2),
            record("pass", baseline="fixed_multi_agent", completed=2)]
    table = per_scenario(runs)
    assert table["s1"]["controlled_chain"] == {
        "expected": "pass", "status": "pass", "statuses": {"pass": 2, "failed": 1}, "correct": 2, "runs": 3,
        "consistency": pytest.approx(2 / 3), "violations": 0,
    }
    assert table["s1"]["fixed_multi_agent"]["violations"] == 1

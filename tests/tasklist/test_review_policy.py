"""Warning disposition, revision effect, final decision and reviewer decisions (policies/tasklist/review.py)."""

from __future__ import annotations

import pytest

from reins.policies.tasklist.review import (
    check_review_decision,
    decide_warning_disposition,
    evaluate_revision_effect,
    final_decision_for,
    strategy_review_options,
)
from reins.policies.tasklist.structure import Finding, StructureValidation, score_for, status_for
from tests.tasklist.builders import STRATEGY


def validation(*issue_ids: str) -> StructureValidation:
    findings = [Finding(i.split(":step-")[0], int(i.split(":step-")[1]) if ":step-" in i else None) for i in issue_ids]
    blocking = tuple(f for f in findings if f.blocking)
    weak = tuple(f for f in findings if not f.blocking)
    return StructureValidation(status_for(len(blocking), len(weak)), score_for(len(blocking), len(weak)), blocking, weak, 2)


@pytest.mark.parametrize(
    ("issues", "fix_now", "manual"),
    [
        ((), [], []),
        (("missing_steps", "missing_checklist"), ["missing_steps", "missing_checklist"], []),
        (("missing_goals", "missing_non_goals"), ["missing_goals", "missing_non_goals"], []),
        (("missing_execution_discipline", "missing_engineering_verification"),
         ["missing_execution_discipline", "missing_engineering_verification"], []),
        (("step_missing_verification:step-2",), ["step_missing_verification:step-2"], []),
        (("missing_test_plan",), [], [("info", "missing_test_plan")]),
        (("weak_risks",), [], [("warning", "weak_risks")]),
        (("missing_pause_point", "step_too_few_tasks:step-1", "step_too_many_tasks:step-2"), [],
         [("info", "missing_pause_point"), ("info", "step_too_few_tasks:step-1"), ("info", "step_too_many_tasks:step-2")]),
        (("missing_title", "weak_risks", "missing_goals"), ["missing_title", "missing_goals"], [("warning", "weak_risks")]),
    ],
)
def test_warning_disposition(issues, fix_now, manual):
    disposition = decide_warning_disposition(validation(*issues))
    assert list(disposition.fix_now) == fix_now
    assert [(item["severity"], item["detail"].split()[2].rstrip(":")) for item in disposition.manual_review_items] == manual
    assert all(len(item["title"]) <= 80 for item in disposition.manual_review_items)
    assert disposition.reason


@pytest.mark.parametrize(
    ("before", "after", "fix_now", "manual", "fixed", "remaining", "improved", "decision", "unresolved"),
    [
        ((), None, [], 0, [], [], False, "final", []),
        (("weak_risks",), None, [], 1, [], ["weak_risks"], False, "final_with_manual_review_items", []),
        ((), None, [], 2, [], [], False, "final_with_manual_review_items", []),
        (("missing_non_goals",), (), ["missing_non_goals"], 0, ["missing_non_goals"], [], True, "final", []),
        (("missing_steps", "weak_risks"), ("weak_risks",), ["missing_steps"], 1, ["missing_steps"], ["weak_risks"], True,
         "final_with_manual_review_items", []),
        (("missing_steps",), ("missing_steps",), ["missing_steps"], 0, [], ["missing_steps"], False, "blocked", ["missing_steps"]),
        (("missing_goals",), ("missing_goals", "missing_checklist"), ["missing_goals"], 0, [],
         ["missing_checklist", "missing_goals"], False, "blocked", ["missing_goals"]),
        (("step_missing_verification:step-2",), ("step_missing_verification:step-3",), ["step_missing_verification:step-2"], 0,
         ["step_missing_verification:step-2"], ["step_missing_verification:step-3"], False, "final_with_manual_review_items", []),
    ],
)
def test_revision_effect(before, after, fix_now, manual, fixed, remaining, improved, decision, unresolved):
    effect = evaluate_revision_effect(validation(*before), None if after is None else validation(*after), fix_now, manual)
    assert list(effect.fixed_issues) == fixed
    assert sorted(effect.remaining_issues) == sorted(remaining)
    assert effect.improved is improved
    assert effect.final_decision == decision
    assert list(effect.unresolved_fix_now) == unresolved


@pytest.mark.parametrize(
    ("status", "manual", "decision"),
    [("pass", 0, "final"), ("pass", 1, "final_with_manual_review_items"), ("warning", 0, "final_with_manual_review_items"),
     ("fail", 0, "blocked"), ("fail", 3, "blocked")],
)
def test_final_decision(status, manual, decision):
    assert final_decision_for(status, manual) == decision


@pytest.mark.parametrize(
    ("used", "limit", "options"),
    [(0, 1, ("approve", "edit", "reject", "respond")), (1, 1, ("approve", "edit", "reject")), (2, 1, ("approve", "edit", "reject"))],
)
def test_strategy_review_options(used, limit, options):
    assert strategy_review_options(used, limit) == options


ALL = ("approve", "edit", "reject", "respond")
AFTER = ("approve", "edit", "reject")


@pytest.mark.parametrize(
    ("kind", "allowed", "raw", "ok", "error_part"),
    [
        ("strategy_review", ALL, {"type": "approve"}, True, None),
        ("strategy_review", ALL, {"type": "edit", "strategy": STRATEGY}, True, None),
        ("strategy_review", ALL, {"type": "reject", "reason": "too coarse"}, True, None),
        ("strategy_review", ALL, {"type": "respond", "feedback": "fewer steps"}, True, None),
        ("strategy_review", AFTER, {"type": "respond", "feedback": "again"}, False, "not allowed"),
        ("strategy_review", ALL, {"type": "maybe"}, False, "not allowed"),
        ("strategy_review", ALL, {}, False, "missing"),
        ("strategy_review", ALL, "approve", False, "JSON object"),
        ("strategy_review", ALL, {"type": "approve", "extra": 1}, False, "extra"),
        ("strategy_review", ALL, {"type": "reject"}, False, "reason"),
        ("strategy_review", ALL, {"type": "reject", "reason": "   "}, False, "reason"),
        ("strategy_review", ALL, {"type": "respond", "feedback": "x" * 2001}, False, "feedback"),
        ("strategy_review", ALL, {"type": "edit", "strategy": {**STRATEGY, "expected_step_range": [5, 2]}}, False, "strategy"),
        ("strategy_review", ALL, {"type": "edit", "markdown": "# x"}, False, "edit"),
        ("revision_review", AFTER, {"type": "approve"}, True, None),
        ("revision_review", AFTER, {"type": "edit", "markdown": "# New draft"}, True, None),
        ("revision_review", AFTER, {"type": "reject"}, True, None),
        ("revision_review", AFTER, {"type": "respond", "feedback": "x"}, False, "not allowed"),
        ("revision_review", AFTER, {"type": "edit", "strategy": STRATEGY}, False, "edit"),
        ("revision_review", AFTER, {"type": "sk-abcdefghijklmnop123"}, False, "[redacted]"),
    ],
)
def test_check_review_decision(kind, allowed, raw, ok, error_part):
    check = check_review_decision(kind, allowed, raw)
    assert (check.decision is not None) is ok
    if ok:
        assert check.decision["type"] == raw["type"] and check.error is None
    else:
        assert error_part in check.error
        assert "sk-abcdefghijklmnop123" not in check.error

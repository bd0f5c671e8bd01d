"""Tasklist contracts: strict, bounded, with their cross-field rules."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from reins.schemas.tasklist import PlanningDecision, TasklistStrategy, review_decision_adapter
from tests.tasklist.builders import STRATEGY, ask, boundary, proceed, proceed_with_items, read_context

ITEM = {"title": "t", "detail": "d", "severity": "info"}


@pytest.mark.parametrize(
    ("payload", "valid"),
    [
        (proceed(), True),
        (proceed_with_items("Non-goals missing"), True),
        (read_context("docs://README.md"), True),
        (ask(), True),
        (boundary(), True),
        ({"decision": {"type": "proceed_to_tasklist_strategy", "reason": "r"}}, False),  # strategy missing
        ({**proceed_with_items("x"), "strategy": None}, False),
        ({**ask(), "strategy": STRATEGY}, False),  # strategy on a stop action
        ({**boundary(), "strategy": STRATEGY}, False),
        ({**read_context("docs://README.md"), "strategy": STRATEGY}, False),
        ({"decision": {"type": "scan_repository", "reason": "r"}}, False),
        ({"decision": {"type": "ask_clarification", "question": "q" * 301, "reason": "r"}}, False),
        ({"decision": {"type": "ask_clarification", "question": "  ", "reason": "r"}}, False),
        ({"decision": {"type": "stop_with_boundary_message", "message": "m" * 801, "reason": "r"}}, False),
        ({"decision": {"type": "ask_clarification", "question": "q", "reason": "r" * 501}}, False),
        ({"decision": {"type": "proceed_with_manual_review_items", "review_items": [], "reason": "r"}, "strategy": STRATEGY}, False),
        ({"decision": {"type": "proceed_with_manual_review_items", "review_items": [ITEM] * 6, "reason": "r"}, "strategy": STRATEGY}, False),
        ({"decision": {"type": "proceed_with_manual_review_items", "review_items": [{**ITEM, "severity": "blocker"}],
                       "reason": "r"}, "strategy": STRATEGY}, False),
        ({"decision": {"type": "proceed_with_manual_review_items", "review_items": [{**ITEM, "title": "t" * 81}],
                       "reason": "r"}, "strategy": STRATEGY}, False),
        ({**proceed(), "confidence": 0.9}, False),  # unknown field
        ({"decision": {"type": "ask_clarification", "question": "q", "reason": "r", "extra": 1}}, False),
    ],
)
def test_planning_decision(payload, valid):
    if valid:
        assert PlanningDecision.model_validate(payload).decision.type == payload["decision"]["type"]
    else:
        with pytest.raises(ValidationError):
            PlanningDecision.model_validate(payload)


@pytest.mark.parametrize(
    ("changes", "valid"),
    [
        ({}, True),
        ({"expected_step_range": [1, 1]}, True),
        ({"expected_step_range": [20, 30]}, True),
        ({"expected_step_range": [5, 2]}, False),
        ({"expected_step_range": [0, 2]}, False),
        ({"expected_step_range": [21, 25]}, False),
        ({"expected_step_range": [2, 31]}, False),
        ({"expected_step_range": [2]}, False),
        ({"expected_step_range": ["2", "4"]}, False),  # strict: no coercion
        ({"granularity": "huge"}, False),
        ({"grouping": []}, False),
        ({"grouping": ["g"] * 9}, False),
        ({"priority": ["p" * 121]}, False),
        ({"reason": "r" * 501}, False),
        ({"reason": "  padded  "}, True),
    ],
)
def test_strategy(changes, valid):
    payload = {**STRATEGY, **changes}
    if valid:
        assert TasklistStrategy.model_validate(payload).reason == payload["reason"].strip()
    else:
        with pytest.raises(ValidationError):
            TasklistStrategy.model_validate(payload)


def test_review_decision_type_admits_only_the_allowed_shapes():
    adapter = review_decision_adapter("strategy_review", ("approve", "edit", "reject"))
    assert adapter.validate_python({"type": "approve"}).type == "approve"
    with pytest.raises(ValidationError):
        adapter.validate_python({"type": "respond", "feedback": "x"})
    with pytest.raises(ValueError):
        review_decision_adapter("strategy_review", ("approve", "delete"))

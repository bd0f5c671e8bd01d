"""Every cross-field validator reports a stable ``{path, code}`` the single repair can name.

A bare ``ValueError`` reached the repair as ``$: value_error``, so a model could not know what to fix.
The table covers every model and field validator in ``schemas/`` (a test below fails when a new
validator has no row), and each row asserts the exact issues the repair feedback would carry.
"""

from __future__ import annotations

import copy
import inspect

import pytest
from tests.delivery.delivery_builders import boundary, finding, plan, post, pre_clarification, pre_execute, tasks
from pydantic import BaseModel, ValidationError

import reins.schemas.assistant as assistant_schemas
import reins.schemas.delivery as delivery_schemas
import reins.schemas.tasklist as tasklist_schemas
from reins.runtime.contracts.checks import _issues_from
from reins.schemas.assistant import AssistantIntent, AssistantPlan, AssistantReflection, ToolCall
from reins.schemas.delivery import (
    BoundaryReview,
    DeliveryPlan,
    DeliveryTasks,
    PolishedSummary,
    ReviewFinding,
    SupervisorPostGuidance,
    SupervisorPreDecision,
)
from reins.schemas.tasklist import PlanningDecision, TasklistStrategy
from tests.tasklist.builders import STRATEGY, ask, proceed


def _phases(*deps: list[str], keys: tuple[str, ...] = ("design", "build", "verify")) -> list[dict]:
    return [
        {"phase_key": key, "title": key.title(), "objective": f"{key} it.", "requirement_refs": ["R1"],
         "depends_on_phase_keys": list(dep)}
        for key, dep in zip(keys, deps, strict=True)
    ]


def _tasks(*deps: list[str]) -> list[dict]:
    return [
        {"task_id": f"T{i + 1}", "title": f"Task {i + 1}", "target_area": "web UI", "acceptance_criteria": ["Works."],
         "requirement_refs": ["R1"], "depends_on_task_ids": list(dep)}
        for i, dep in enumerate(deps)
    ]


def _criteria(*keys: str) -> list[dict]:
    return [{"criterion_key": k, "description": "It works.", "requirement_refs": ["R1"]} for k in keys]


_pre = pre_execute()
_pre_missing = {k: v for k, v in _pre.items() if k not in ("reviewer_roles", "stage_intents")}
_intents = copy.deepcopy(_pre["stage_intents"])
_intents[2]["stage"] = "plan"
_plan_steps = {"goal": "g", "steps": [{"id": 1, "tool": "calculator", "purpose": "p"}]}

# (row id, schema, rejected value, the exact [(path, code)] the repair receives)
ROWS = [
    ("pre-missing-for-execute", SupervisorPreDecision, _pre_missing,
     [("reviewer_roles", "required_for_branch_execute"), ("stage_intents", "required_for_branch_execute")]),
    ("pre-stray-for-clarification", SupervisorPreDecision, {**pre_clarification(), "planning_focus": "x"},
     [("planning_focus", "forbidden_for_branch_clarification_required")]),
    ("pre-duplicate-role", SupervisorPreDecision, pre_execute(reviewer_roles=["general", "general"]),
     [("reviewer_roles.1", "duplicate_value")]),
    ("pre-duplicate-stage", SupervisorPreDecision, pre_execute(stage_intents=_intents),
     [("stage_intents.2.stage", "duplicate_stage")]),
    ("plan-unknown-phase", DeliveryPlan, plan(delivery_phases=_phases([], ["design"], ["ship"])),
     [("delivery_phases.2.depends_on_phase_keys", "unknown_phase_key")]),
    ("plan-duplicate-phase", DeliveryPlan, plan(delivery_phases=_phases([], [], [], keys=("a", "b", "a"))),
     [("delivery_phases.2.phase_key", "duplicate_key")]),
    ("plan-self-dependency", DeliveryPlan, plan(delivery_phases=_phases([], ["build"], [])),
     [("delivery_phases.1.depends_on_phase_keys", "self_dependency")]),
    ("plan-dependency-twice", DeliveryPlan, plan(delivery_phases=_phases([], ["design", "design"], [])),
     [("delivery_phases.1.depends_on_phase_keys", "duplicate_dependency")]),
    ("plan-cycle", DeliveryPlan, plan(delivery_phases=_phases(["verify"], ["design"], ["build"])),
     [("delivery_phases", "dependency_cycle")]),
    ("plan-duplicate-criterion", DeliveryPlan, plan(acceptance_criteria=_criteria("AC-1", "AC-1")),
     [("acceptance_criteria.1.criterion_key", "duplicate_key")]),
    ("tasks-cycle", DeliveryTasks, tasks(tasks=_tasks(["T2"], ["T1"])), [("tasks", "dependency_cycle")]),
    ("tasks-unknown", DeliveryTasks, tasks(tasks=_tasks([], ["T9"])), [("tasks.1.depends_on_task_ids", "unknown_task_id")]),
    ("finding-duplicate-target", ReviewFinding, finding(targets=("plan", "plan")), [("target_artifacts.1", "duplicate_value")]),
    ("boundary-blocked-without-violation", BoundaryReview, boundary("blocked", violations=[]),
     [("violations", "required_when_blocked")]),
    ("post-duplicate-target", SupervisorPostGuidance, post("plan", "plan"), [("recommendations.1.target", "duplicate_target")]),
    ("polish-not-prose", PolishedSummary, {"summary": "# Heading\nText"}, [("summary", "not_plain_prose")]),
    ("strategy-range-out", TasklistStrategy, {**STRATEGY, "expected_step_range": [0, 40]},
     [("expected_step_range.0", "out_of_range"), ("expected_step_range.1", "out_of_range")]),
    ("strategy-range-reversed", TasklistStrategy, {**STRATEGY, "expected_step_range": [5, 2]},
     [("expected_step_range", "min_above_max")]),
    ("decision-needs-strategy", PlanningDecision, {"decision": proceed()["decision"]},
     [("strategy", "required_for_proceed_to_tasklist_strategy")]),
    ("decision-forbids-strategy", PlanningDecision, {**ask(), "strategy": dict(STRATEGY)},
     [("strategy", "forbidden_for_ask_clarification")]),
    ("plan-duplicate-step", AssistantPlan, {"goal": "g", "steps": [_plan_steps["steps"][0]] * 2},
     [("steps.1.id", "duplicate_step_id")]),
    ("plan-out-of-order", AssistantPlan,
     {"goal": "g", "steps": [{"id": 2, "tool": "calculator", "purpose": "p"}, {"id": 1, "tool": "calculator", "purpose": "p"}]},
     [("steps", "steps_out_of_order")]),
    ("intent-complex-without-plan", AssistantIntent, {"intent": "COMPLEX", "reason": "r"}, [("plan", "required_for_complex")]),
    ("intent-qa-with-plan", AssistantIntent, {"intent": "QA", "reason": "r", "plan": _plan_steps},
     [("plan", "forbidden_unless_complex")]),
    ("tool-args-too-long", ToolCall, {"tool": "calculator", "args": {"x": "y" * 5000}}, [("args", "args_too_long")]),
    ("reflection-duplicate-keyword", AssistantReflection,
     {"went_well": "a", "went_wrong": "b", "next_time": "c", "keywords": ["Tool", "tool"]}, [("keywords", "duplicate_keyword")]),
]


@pytest.mark.parametrize(("schema", "value", "expected"), [row[1:] for row in ROWS], ids=[row[0] for row in ROWS])
def test_cross_field_rule_has_a_stable_path_and_code(schema, value, expected):
    with pytest.raises(ValidationError) as caught:
        schema.model_validate(value)
    issues = [(issue.path, issue.code) for issue in _issues_from(caught.value)]
    assert issues == expected
    assert all(code != "value_error" and path != "$" for path, code in issues)


def test_no_rule_message_echoes_the_rejected_value():
    bad = plan(delivery_phases=_phases([], ["design"], ["SECRET-PHASE-NAME"]))
    with pytest.raises(ValidationError) as caught:
        DeliveryPlan.model_validate(bad)
    assert "SECRET-PHASE-NAME" not in str(caught.value)


def _validators() -> set[tuple[str, str]]:
    found = set()
    for module in (delivery_schemas, tasklist_schemas, assistant_schemas):
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, BaseModel) and cls.__module__ == module.__name__:
                decorators = cls.__pydantic_decorators__
                for name in [*decorators.model_validators, *decorators.field_validators]:
                    found.add((cls.__name__, name))
    return found


def test_every_validator_in_schemas_has_a_row():
    covered = {row[1].__name__ for row in ROWS}
    missing = sorted(f"{cls}.{name}" for cls, name in _validators() if cls not in covered)
    assert _validators(), "no validators found: the scan itself is broken"
    assert missing == []

"""Delivery contracts: strict, bounded, with cross-field rules."""

import copy

import pytest
from tests.delivery.delivery_builders import boundary, finding, general, plan, post, pre_blocked, pre_clarification, pre_execute, risk, tasks
from pydantic import ValidationError

from reins.schemas.delivery import (
    BoundaryReview,
    DeliveryPlan,
    DeliveryTasks,
    GeneralReview,
    PolishedSummary,
    ReviewFinding,
    RiskReview,
    RuntimeArtifact,
    SubagentCallArgs,
    SubagentToolResult,
    SupervisorPostGuidance,
    SupervisorPreDecision,
    find_cycle,
)


def edited(value, path, new):
    """A deep copy of ``value`` with ``path`` (a tuple of keys/indexes) set to ``new`` (or deleted)."""
    result = copy.deepcopy(value)
    target = result
    for key in path[:-1]:
        target = target[key]
    if new is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = new
    return result


DELETE = object()
LONG = "x" * 1001


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        (SupervisorPreDecision, pre_execute()),
        (SupervisorPreDecision, pre_clarification()),
        (SupervisorPreDecision, pre_blocked()),
        (SupervisorPreDecision, pre_execute(reviewer_roles=["general"])),  # exactness is a policy, not schema
        (DeliveryPlan, plan()),
        (DeliveryTasks, tasks()),
        (ReviewFinding, finding(targets=("plan", "tasks"))),
        (GeneralReview, general("needs_changes", "misaligned", [finding()])),
        (RiskReview, risk("blocker", [finding(severity="blocker")])),
        (BoundaryReview, boundary("blocked")),
        (BoundaryReview, boundary("passed")),
        (SupervisorPostGuidance, post("plan", "tasks")),
        (SubagentCallArgs, {}),
        (SubagentCallArgs, {"note": "start with the plan"}),
        (PolishedSummary, {"summary": "Plain words about the run."}),
    ],
)
def test_valid_outputs_pass(schema, value):
    schema.model_validate(value)


@pytest.mark.parametrize(
    ("schema", "value", "reason"),
    [
        # unknown fields are rejected, never dropped
        (SupervisorPreDecision, {**pre_execute(), "status": "pass"}, "extra"),
        (DeliveryPlan, edited(plan(), ("delivery_phases", 0, "owner"), "me"), "extra"),
        (GeneralReview, {**general(), "final_status": "pass"}, "extra"),
        (SubagentCallArgs, {"note": "hi", "requirement": "do it"}, "extra"),
        # types are strict
        (DeliveryTasks, edited(tasks(), ("tasks", 0, "task_id"), 1), "type"),
        (GeneralReview, edited(general(), ("findings",), "none"), "type"),
        (SubagentCallArgs, {"note": 3}, "type"),
        # missing fields
        (DeliveryPlan, edited(plan(), ("acceptance_criteria",), DELETE), "missing"),
        (RiskReview, edited(risk(), ("severity",), DELETE), "missing"),
        # enums
        (GeneralReview, edited(general(), ("disposition",), "approved"), "enum"),
        (RiskReview, edited(risk(), ("severity",), "critical"), "enum"),
        (BoundaryReview, edited(boundary(), ("boundary_status",), "ok"), "enum"),
        (ReviewFinding, edited(finding(), ("finding_type",), "bug"), "enum"),
        (ReviewFinding, edited(finding(), ("target_artifacts",), ["report"]), "enum"),
        (GeneralReview, edited(general(), ("role",), "risk"), "enum"),
        (SupervisorPreDecision, pre_execute(reviewer_roles=["general", "security"]), "enum"),
        # bounds
        (DeliveryPlan, edited(plan(), ("summary",), LONG), "bound"),
        (DeliveryPlan, edited(plan(), ("summary",), "   "), "bound"),  # trimmed, then empty
        (DeliveryTasks, edited(tasks(), ("tasks", 0, "task_id"), "t" * 121), "bound"),
        (DeliveryTasks, edited(tasks(), ("tasks", 0, "target_area"), "a" * 241), "bound"),
        (DeliveryPlan, edited(plan(), ("markdown",), "m" * 14_001), "bound"),
        (SubagentCallArgs, {"note": "n" * 201}, "bound"),
        (ReviewFinding, edited(finding(), ("evidence",), ["e"] * 11), "bound"),
        (ReviewFinding, edited(finding(), ("target_artifacts",), []), "bound"),
        (DeliveryPlan, edited(plan(), ("requirement_refs",), []), "bound"),
        (DeliveryPlan, edited(plan(), ("requirement_refs",), [f"R{i}" for i in range(21)]), "bound"),
        (DeliveryTasks, edited(tasks(), ("tasks",), []), "bound"),
        (SupervisorPostGuidance, post("plan", "tasks", "plan"), "bound"),
        # exact counts and uniqueness
        (SupervisorPreDecision, edited(pre_execute(), ("stage_intents",), pre_execute()["stage_intents"][:2]), "count"),
        (SupervisorPreDecision, edited(pre_execute(), ("stage_intents", 2, "stage"), "plan"), "unique"),
        (SupervisorPreDecision, pre_execute(reviewer_roles=["general", "risk", "risk"]), "unique"),
        (SupervisorPreDecision, pre_execute(reviewer_roles=[]), "count"),
        (ReviewFinding, edited(finding(), ("target_artifacts",), ["plan", "plan"]), "unique"),
        (SupervisorPostGuidance, post("plan", "plan"), "unique"),
        (DeliveryPlan, edited(plan(), ("delivery_phases", 1, "phase_key"), "design"), "unique"),
        (DeliveryPlan, edited(plan(), ("acceptance_criteria", 1, "criterion_key"), "AC-1"), "unique"),
        (DeliveryTasks, edited(tasks(), ("tasks", 1, "task_id"), "T1"), "unique"),
        # dependencies exist, are not self-references and form no cycle
        (DeliveryPlan, edited(plan(), ("delivery_phases", 1, "depends_on_phase_keys"), ["ghost"]), "dependency"),
        (DeliveryPlan, edited(plan(), ("delivery_phases", 0, "depends_on_phase_keys"), ["design"]), "dependency"),
        (DeliveryPlan, edited(plan(), ("delivery_phases", 0, "depends_on_phase_keys"), ["build"]), "cycle"),
        (DeliveryTasks, edited(tasks(), ("tasks", 0, "depends_on_task_ids"), ["T2"]), "cycle"),
        (DeliveryTasks, edited(tasks(), ("tasks", 1, "depends_on_task_ids"), ["T9"]), "dependency"),
        (DeliveryTasks, edited(tasks(), ("tasks", 1, "depends_on_task_ids"), ["T1", "T1"]), "dependency"),
        # branch fields: required for the branch, forbidden for the others
        (SupervisorPreDecision, {**pre_clarification(), "assumptions": ["a"]}, "branch"),
        (SupervisorPreDecision, edited(pre_execute(), ("review_focus",), DELETE), "branch"),
        (SupervisorPreDecision, {**pre_blocked(), "missing_information": ["x"]}, "branch"),
        (SupervisorPreDecision, edited(pre_blocked(), ("boundary_evidence",), DELETE), "branch"),
        (SupervisorPreDecision, {**pre_execute(), "branch": "proceed"}, "enum"),
        # a blocked boundary names its violation
        (BoundaryReview, boundary("blocked", violations=[]), "cross-field"),
        # polish may only be prose
        (PolishedSummary, {"summary": "# Status: pass"}, "prose"),
        (PolishedSummary, {"summary": "fine\n| a | b |"}, "prose"),
    ],
)
def test_invalid_outputs_are_rejected(schema, value, reason):
    with pytest.raises(ValidationError):
        schema.model_validate(value)


def test_strings_are_trimmed():
    value = DeliveryPlan.model_validate(edited(plan(), ("summary",), "  padded  "))
    assert value.summary == "padded"


@pytest.mark.parametrize(
    ("graph", "cycle"),
    [
        ({"a": [], "b": ["a"]}, None),
        ({"a": ["b"], "b": ["a"]}, ["a", "b", "a"]),
        ({"a": ["b"], "b": ["c"], "c": ["a"]}, ["a", "b", "c", "a"]),
        ({"a": [], "b": ["a"], "c": ["b", "d"], "d": ["c"]}, ["c", "d", "c"]),
        ({f"n{i}": [f"n{i + 1}"] for i in range(3000)} | {"n3000": []}, None),  # deep chains, no recursion
    ],
)
def test_find_cycle(graph, cycle):
    assert find_cycle(graph) == cycle


def test_tool_result_and_artifact_shapes():
    SubagentToolResult.model_validate({"status": "completed", "markdown": "# Plan", "summary_for_manager": "ok", "warnings": []})
    with pytest.raises(ValidationError):
        SubagentToolResult.model_validate({"status": "completed", "markdown": "# Plan", "summary_for_manager": "s" * 401})
    with pytest.raises(ValidationError):
        RuntimeArtifact.model_validate({"artifact_id": "plan-1", "kind": "plan", "title": "Plan", "markdown": "x",
                                        "revision": 3, "metadata": {}})

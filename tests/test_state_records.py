"""Every record the graphs keep in state is pinned to the schema or policy it stores.

State holds plain data: a validated model is dumped into a ``TypedDict`` record, a policy result is
stored with its ``as_dict`` (a refusal as the rule it broke). The records are written out so Studio and readers see their shapes; this
table keeps them from drifting from their sources. A schema record has the model's field names and
types (a ``Literal`` reads as ``str``, a tuple as a list, an optional model field may be an absent
key); a policy record is exactly what the run stores of the result (every key, every value's type).
"""

from __future__ import annotations

import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

import pytest
from pydantic import BaseModel
from typing_extensions import NotRequired, Required, is_typeddict

from reins.nodes.assistant import state as assistant_state
from reins.nodes.delivery import state as delivery_state
from reins.nodes.tasklist import state as tasklist_state
from reins.nodes.delivery.routing import policy_violation
from reins.policies.tools.data_flow import FlowDecision
from reins.policies.delivery.delegation import violation
from reins.policies.audit.flow_replay import flow_record, flow_turn
from reins.policies.tasklist.machine import Counters, Limits, Machine, Proposal, guard
from reins.policies.tasklist.plan import PlanExtraction, Readiness
from reins.policies.audit.tasklist_replay import guard_record
from reins.policies.tasklist.review import RevisionEffect, WarningDisposition, manual_item
from reins.policies.tasklist.structure import Finding, StructureValidation
from reins.schemas import assistant as assistant_schemas
from reins.schemas import delivery as delivery_schemas
from reins.schemas import tasklist as tasklist_schemas
from reins.schemas.skills import SkillDraft
from reins.schemas.persona import AssistantPersona, PersonaExample
from reins.schemas.tasklist import REVISION_REVIEW_DECISIONS, STRATEGY_REVIEW_DECISIONS


@dataclass(frozen=True)
class SchemaRecord:
    """A record holding a dumped model (or any one of a union of models)."""

    record: type
    sources: tuple[type[BaseModel], ...]
    added: tuple[str, ...] = ()  # keys the runtime adds beside the model's fields
    left_out: tuple[str, ...] = ()  # model fields the record does not keep


def _members(union: Any) -> tuple[type[BaseModel], ...]:
    """The models of a (discriminated) union."""
    return get_args(get_args(union)[0]) if get_origin(union) is Annotated else get_args(union)


SCHEMA_RECORDS = (
    SchemaRecord(delivery_state.PreDecision, (delivery_schemas.SupervisorPreDecision,)),
    SchemaRecord(delivery_state.ContextBlock, (delivery_schemas.ContextBlock,)),
    SchemaRecord(delivery_state.ToolResultView, (delivery_schemas.SubagentToolResult,), left_out=("metadata",)),
    SchemaRecord(tasklist_state.ManualReviewItem, (tasklist_schemas.ManualReviewItem,)),
    SchemaRecord(tasklist_state.PlanningAction, _members(tasklist_schemas.PlanningAction)),
    SchemaRecord(tasklist_state.Strategy, (tasklist_schemas.TasklistStrategy,)),
    SchemaRecord(tasklist_state.Decision, (tasklist_schemas.PlanningDecision,)),
    SchemaRecord(tasklist_state.ReviewDecision, (
        *_members(tasklist_schemas.review_decision_type("strategy_review", STRATEGY_REVIEW_DECISIONS)),
        *_members(tasklist_schemas.review_decision_type("revision_review", REVISION_REVIEW_DECISIONS)),
    )),
    SchemaRecord(assistant_state.Answer, (assistant_schemas.AssistantAnswer,)),
    SchemaRecord(assistant_state.PlanStep, (assistant_schemas.PlanStep,)),
    SchemaRecord(assistant_state.Plan, (assistant_schemas.AssistantPlan,),
                 added=("unavailable", "replaced", "replacement", "skipped")),
    SchemaRecord(assistant_state.SkillDraftRecord, (SkillDraft,), added=("key", "topic")),
    SchemaRecord(assistant_state.Persona, (AssistantPersona,)),
    SchemaRecord(assistant_state.PersonaExample, (PersonaExample,)),
)
# Which record a nested model is stored as.
RECORD_OF: dict[type, type] = {source: entry.record for entry in SCHEMA_RECORDS for source in entry.sources}

# A policy record and what the run stores of a representative result of its policy (every list
# non-empty, so element types are checked too).
POLICY_RECORDS: tuple[tuple[type, dict[str, Any]], ...] = (
    (delivery_state.PolicyViolation, policy_violation(violation("no_tool_call"))),
    (tasklist_state.Limits, Limits(max_steps=12).as_dict()),
    (tasklist_state.Counters, Counters(steps=3, optional_context_reads=1).as_dict()),
    (assistant_state.FlowRecord, flow_record(2, "send_email", False, "ask", FlowDecision("ask", codes=("tainted_sink",)))),
    (assistant_state.FlowTurn, flow_turn(1, "paused", [flow_record(1, "send_email", False, "ask", FlowDecision("ask"))],
                                         {"contract": "assistant.answer", "recorded": "accepted", "value": {"summary": "Sent."}})),
    (tasklist_state.GuardRecord, guard_record(Machine(), Proposal("read_plan", "docs://versions/v.md"),
                                              guard(Machine(), Proposal("read_plan", "docs://versions/v.md")))),
    (tasklist_state.PlanExtraction, PlanExtraction("Plan", "v0.2.0", {"goals": ("Ship it",)}, ("Notes",)).as_dict()),
    (tasklist_state.Readiness, Readiness("needs_review", ("test_plan",), ("goals",), "Fill in the test plan.").as_dict()),
    (tasklist_state.WarningDisposition, WarningDisposition(
        ("missing_risks",), (manual_item("Risks", "Name the risks.", "warning"),), "One to fix.").as_dict()),
    (tasklist_state.RevisionEffect, RevisionEffect(("a",), ("b",), True, 80, 95, "final", ("c",)).as_dict()),
    (tasklist_state.Validation, StructureValidation(
        "warning", 90, (Finding("missing_goals"),), (Finding("step_too_few_tasks", 2),), 3).as_dict()),
)


# ------------------------------------------------------------------------------ schema records


def _shape(annotation: Any) -> Any:
    """A type as plain data would carry it (what a record and its model must agree on)."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _shape(args[0])
    if origin is Literal:
        return "str" if all(isinstance(value, str) for value in args) else ("literal", args)
    if origin in (Union, types.UnionType):
        shapes = frozenset(_shape(arg) for arg in args)
        return next(iter(shapes)) if len(shapes) == 1 else ("union", shapes)
    if origin in (list, tuple, Sequence):
        return ("list", _shape(args[0]))
    if origin in (dict, Mapping):
        return ("dict", _shape(args[0]), _shape(args[1]))
    if annotation is type(None):
        return "none"
    if isinstance(annotation, type) and (annotation in RECORD_OF or is_typeddict(annotation)):
        return ("record", RECORD_OF.get(annotation, annotation).__name__)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        # A model stored as a mapping (e.g. the review focus per role): its fields share one type.
        values = frozenset(_shape(field.annotation) for field in annotation.model_fields.values())
        return ("dict", "str", next(iter(values)) if len(values) == 1 else ("union", values))
    return getattr(annotation, "__name__", repr(annotation)).lower()


def _optional_keys(record: type) -> set[str]:
    """Keys a record may leave out (read from the annotations: the modules postpone their evaluation,
    so ``__optional_keys__`` cannot see ``NotRequired``)."""
    hints = get_type_hints(record, include_extras=True)
    marked = {key: get_origin(hint) for key, hint in hints.items()}
    return {key for key, origin in marked.items()
            if origin is NotRequired or (origin is not Required and not record.__total__)}


def _without_none(shape: Any) -> Any:
    if shape == "none" or not (isinstance(shape, tuple) and shape[0] == "union"):
        return shape
    rest = frozenset(member for member in shape[1] if member != "none")
    return next(iter(rest)) if len(rest) == 1 else ("union", rest)


def _model_fields(entry: SchemaRecord) -> dict[str, tuple[Any, bool, bool]]:
    """Per field over the sources: (shape, required by every source, defaults to None somewhere)."""
    fields: dict[str, tuple[set, bool, bool]] = {}
    for source in entry.sources:
        for name, field in source.model_fields.items():
            if name in entry.left_out:
                continue
            shapes, required, none_default = fields.get(name, (set(), True, False))
            shapes.add(_shape(field.annotation))
            fields[name] = (shapes, required and field.is_required(), none_default or field.default is None)
    merged = {}
    for name, (shapes, required, none_default) in fields.items():
        required = required and all(name in source.model_fields for source in entry.sources)
        flat = frozenset(m for s in shapes for m in (s[1] if isinstance(s, tuple) and s[0] == "union" else (s,)))
        merged[name] = (next(iter(flat)) if len(flat) == 1 else ("union", flat), required, none_default)
    return merged


@pytest.mark.parametrize("entry", SCHEMA_RECORDS, ids=lambda entry: entry.record.__name__)
def test_a_schema_record_has_its_models_fields_and_types(entry):
    hints = get_type_hints(entry.record)
    fields = _model_fields(entry)
    assert set(hints) - set(entry.added) == set(fields), "the record's keys are the model's fields"
    for name, (shape, required, none_default) in fields.items():
        kept = _shape(hints[name])
        absent_allowed = name in _optional_keys(entry.record)
        # A model field that defaults to None may be stored as an absent key instead.
        expected = {shape, _without_none(shape)} if absent_allowed and none_default else {shape}
        assert kept in expected, f"{entry.record.__name__}.{name}: {kept} is none of {expected}"
        if required:
            assert not absent_allowed, f"{entry.record.__name__}.{name} is always set"


# ------------------------------------------------------------------------------ policy records


def _conforms(value: Any, annotation: Any, where: str) -> list[str]:
    """Where ``value`` breaks ``annotation`` (a TypedDict record or plain data types)."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _conforms(value, args[0], where)
    if origin in (Union, types.UnionType):
        return [] if any(not _conforms(value, arg, where) for arg in args) else [f"{where}: {value!r} is none of {args}"]
    if origin is Literal:
        return [] if value in args else [f"{where}: {value!r} not in {args}"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: {type(value).__name__} is not a list"]
        return [problem for i, item in enumerate(value) for problem in _conforms(item, args[0], f"{where}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__} is not a dict"]
        return [problem for key, item in value.items()
                for problem in [*_conforms(key, args[0], where), *_conforms(item, args[1], f"{where}.{key}")]]
    if is_typeddict(annotation):
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__} is not a dict"]
        hints = get_type_hints(annotation)
        problems = [f"{where}: unexpected key {key}" for key in set(value) - set(hints)]
        problems += [f"{where}: missing key {key}" for key in set(hints) - _optional_keys(annotation) - set(value)]
        return problems + [problem for key in set(value) & set(hints)
                           for problem in _conforms(value[key], hints[key], f"{where}.{key}")]
    if annotation is Any:
        return []
    if annotation is type(None):
        return [] if value is None else [f"{where}: {value!r} is not None"]
    if annotation is int and isinstance(value, bool):
        return [f"{where}: a bool is not an int"]
    return [] if isinstance(value, annotation) else [f"{where}: {type(value).__name__} is not {annotation.__name__}"]


@pytest.mark.parametrize(("record", "stored"), POLICY_RECORDS, ids=[record.__name__ for record, _ in POLICY_RECORDS])
def test_a_policy_record_is_exactly_what_its_policy_stores(record, stored):
    assert set(stored) == set(get_type_hints(record)), "every key of as_dict, and no other"
    assert _conforms(stored, record, record.__name__) == []


def test_the_checks_fail_on_a_drifted_record():
    # A record that lost a key, or holds a list where the policy stores a string, is caught.
    from typing_extensions import TypedDict

    class DriftedViolation(TypedDict):
        code: list[str]

    assert sorted(_conforms(policy_violation(violation("no_tool_call")), DriftedViolation, "v")) == [
        "v.code: str is not a list", "v: unexpected key message"
    ]
    drifted = SchemaRecord(delivery_state.ContextBlock, (delivery_schemas.SubagentToolResult,))
    with pytest.raises(AssertionError):
        test_a_schema_record_has_its_models_fields_and_types(drifted)


# Records that are their shape's only declaration: nodes build them from several sources (or from
# none but the run), so there is nothing else for them to drift from. (WeakFinding is checked inside
# Validation, which holds it.)
DECLARED_IN_STATE = {
    "reins.nodes.delivery.state": {"Failure", "DelegationVerdict", "Governance", "ProposedToolCall", "ManagerRefusal", "ManagerProposal",
                             "ArtifactRecord", "ReviewFailure", "ReviewOutcome", "RevisionOutcome", "Tokens",
                             "RunMetrics", "RunBudget", "RevisionSummary", "ReviewerTask", "DeliveryInput", "DeliveryOutput",
                             "DeliveryState"},
    "reins.nodes.tasklist.state": {"TasklistInput", "TasklistOutput", "TasklistState", "StrategyReview", "ReviewSubject",
                             "ReviewRequest", "RevisionReview", "ArtifactMetadata", "Artifact", "WeakFinding",
                             "ContextDoc"},
    "reins.nodes.assistant.state": {"PendingCall", "PipelineReview", "ToolRecord", "Observed", "RemovedClaim", "CheckReport",
                              "PipelineOutcome", "Turn", "AssistantInput", "AssistantOutput", "AssistantState",
                              "TurnIdentity"},  # its keys are AssistantContext fields (tests/assistant/test_turn_identity.py)
}


@pytest.mark.parametrize("module", [delivery_state, tasklist_state, assistant_state], ids=lambda m: m.__name__)
def test_every_state_record_is_pinned_to_its_source_or_declared_only_in_state(module):
    records = {name for name, value in vars(module).items()
               if is_typeddict(value) and value.__module__ == module.__name__ and value.__name__ == name}
    pinned = {entry.record.__name__ for entry in SCHEMA_RECORDS} | {record.__name__ for record, _ in POLICY_RECORDS}
    assert records - pinned == DECLARED_IN_STATE[module.__name__], "a new record: pin it above or list it here"

"""Every built-in offline responder answers in its contract's schema, checked directly
(``Schema.model_validate``), on the inputs real offline runs of the three graphs gave it and on inputs
far past every bound (so a bound the stand-in restated wrongly, or not at all, fails here).

The inputs are the structured ones a call carries in its metadata; the prompt's prose is left empty,
so a responder that still parsed prose would answer from nothing and fail its schema or its rows.
"""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from pydantic import BaseModel, Field

from reins.graphs.assistant import build_graph as build_assistant
from reins.graphs.delivery_chain import build_graph as build_delivery
from reins.graphs.tasklist_agent import build_graph as build_tasklist
from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS
from reins.runtime.contracts.roles import CONTRACT_ROLES
from reins.runtime.standins.fake_base import ModelCall
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.offline import OfflineModel, registered_contracts
from reins.runtime.standins.offline.bounds import limit
from reins.runtime.config.paths import RESOURCES
from reins.runtime.resources import ResourceResolver
from reins.schemas.assistant import (
    AssistantAnswer,
    AssistantIntent,
    AssistantReflection,
    AssistantReplan,
    AssistantSummary,
)
from reins.schemas.delivery import (
    DeliveryPlan,
    DeliveryTasks,
    PolishedSummary,
    SupervisorPostGuidance,
    SupervisorPreDecision,
)
from reins.schemas.skills import SkillDraft
from reins.schemas.tasklist import PlanningDecision, TasklistStrategy
from tests.assistant.helpers import chat_registry

# contract → the schema its answer must satisfy (structured) or the kind of answer (text, tool turn)
SCHEMAS: dict[str, type[BaseModel] | str] = {
    "tasklist.planning_decision": PlanningDecision,
    "tasklist.strategy": TasklistStrategy,
    "tasklist.draft": "text",
    "tasklist.revision": "text",
    "delivery.supervisor_pre": SupervisorPreDecision,
    "delivery.manager": "tool_turn",
    "delivery.plan": DeliveryPlan,
    "delivery.plan_revision": DeliveryPlan,
    "delivery.tasks": DeliveryTasks,
    "delivery.task_revision": DeliveryTasks,
    **{spec.contract: spec.schema for spec in DEFAULT_REVIEWERS},
    "delivery.supervisor_post": SupervisorPostGuidance,
    "delivery.report_polish": PolishedSummary,
    "assistant.intent": AssistantIntent,
    "assistant.step": "tool_turn",
    "assistant.answer": AssistantAnswer,
    "assistant.reflection": AssistantReflection,
    "assistant.replan": AssistantReplan,
    "assistant.summary": AssistantSummary,
    "assistant.skill_draft": SkillDraft,
}
BUILT_IN = sorted(name for name in CONTRACT_ROLES if name.split(".")[0] in ("tasklist", "delivery", "assistant"))


class RecordingModel(OfflineModel):
    """The offline model, keeping every call it answered."""

    calls: list[ModelCall] = Field(default_factory=list, exclude=True)

    def respond(self, call: ModelCall):
        self.calls.append(call)
        return super().respond(call)


def _recorded_calls() -> list[ModelCall]:
    model = RecordingModel()
    models = ModelSet.uniform(model)
    delivery = build_delivery(models)
    for scenario in sorted(p.name for p in (RESOURCES / "scenarios").iterdir()):
        delivery.invoke({"requirement_uri": f"demo://scenarios/{scenario}/requirement.md"})
    delivery.invoke({"requirement": "- Show a banner when a request limit is reached.\n\n"
                                    "Exports must include a CSV file for every invoice.\n"})  # a revision round
    tasklist = build_tasklist(models=models, resolver=ResourceResolver())
    for plan in sorted(p.name for p in ResourceResolver().docs_root.joinpath("versions").glob("*.md")):
        tasklist.invoke({"request": f"/tasklist docs://versions/{plan}"})
    assistant = build_assistant(models=models, registry=chat_registry())
    for n, text in enumerate(("hello", "what is (17+25)*3?", "compute 2+2 and what time is it",
                              "read docs://versions/v0.2.0-ready.md and compute 3*7", "why is the sky blue?")):
        assistant.invoke({"messages": [HumanMessage(content=text)]}, {"configurable": {"thread_id": f"t{n}"}})
    return model.calls


@pytest.fixture(scope="module")
def recorded() -> list[ModelCall]:
    return _recorded_calls()

# Inputs past every bound: more statements, findings, steps and characters than any schema admits.
LONG = "word " * 3000
MANY = [f"- Item {i}: the system must record change number {i} for audit {LONG[:900]}" for i in range(60)]
FINDINGS = [{"finding_id": f"F{i}", "description": LONG, "evidence": [LONG] * 15, "severity": "medium",
             "finding_type": "issue", "requirement": "required", "suggested_action": LONG,
             "target_artifacts": ["plan", "tasks"]} for i in range(50)]
STEPS = [{"id": i, "tool": "calculator", "purpose": LONG} for i in range(1, 31)]
OBSERVATIONS = [{"n": i, "step": None, "tool": "calculator", "args": {"expression": "1+1"}, "ok": i % 2 == 0,
                 "output": LONG} for i in range(1, 40)]
EXTREME: list[tuple[str, dict]] = [
    ("delivery.supervisor_pre", {"requirement": "\n".join(MANY) + "\n## Assumptions\n" + "\n".join(MANY)}),
    ("delivery.plan", {"requirement": "# " + LONG + "\n" + "\n".join(MANY) + "\n## Out of scope\n" + "\n".join(MANY)}),
    ("delivery.plan_revision", {"requirement": "\n".join(MANY), "findings": FINDINGS}),
    ("delivery.tasks", {"plan": {}}),
    ("delivery.task_revision", {"plan": {}, "tasks": {}, "findings": FINDINGS}),
    ("delivery.general_review", {"requirement": "\n".join(MANY), "plan": {}, "tasks": {}}),
    ("delivery.risk_review", {"requirement": " ".join(["password migration unresolved security"] * 50)}),
    ("delivery.boundary_review", {"requirement": "persist raw delivery artifacts; " * 40,
                                  "context": [{"kind": "governance", "title": "Delivery boundaries", "markdown":
                                               "## Hard\n" + "\n".join(f"- Rule {i} {LONG[:2000]}. Signals: persist raw"
                                                                       for i in range(30))}]}),
    ("delivery.supervisor_post", {"findings": FINDINGS}),
    ("delivery.report_polish", {"summary": LONG}),
    ("assistant.intent", {"request": " ".join(f"{i}+{i}" for i in range(30)) + " and the time"}),
    ("assistant.answer", {"request": "q", "observations": OBSERVATIONS}),
    ("assistant.reflection", {"request": LONG, "observations": OBSERVATIONS}),
    ("assistant.replan", {"plan": {"goal": LONG, "steps": STEPS}, "failed_step": 1, "observations": []}),
    ("assistant.summary", {"summary": LONG, "conversation": [{"role": "user", "text": LONG}] * 20}),
    ("assistant.skill_draft", {"topic": [LONG], "lessons": [LONG] * 30}),
    ("tasklist.strategy", {"plan_sections": {"key_changes": [LONG] * 40, "interface_changes": [LONG]},
                           "feedback": "more detail"}),
    ("tasklist.planning_decision", {"readiness": {"status": "blocked", "missing_fields": [LONG] * 20},
                                    "allowed_actions": ["ask_clarification"], "plan_sections": {}}),
    ("tasklist.planning_decision", {"readiness": {"status": "needs_review", "weak_fields": ["Goals", "Key Changes",
                                    "Non-goals", "Interface Changes", "Test Plan"] * 3},
                                    "allowed_actions": ["proceed_with_manual_review_items"],
                                    "plan_sections": {"key_changes": [LONG] * 40}}),
]


def _answer(call: ModelCall):
    return OfflineModel().respond(call)


def _check(contract: str, call: ModelCall, answer) -> None:
    expected = SCHEMAS[contract]
    if expected == "text":
        assert isinstance(answer, str) and answer.strip()
    elif expected == "tool_turn":
        assert isinstance(answer, AIMessage)
        assert {c["name"] for c in answer.tool_calls} <= set(call.tool_names)
    else:
        expected.model_validate(answer)  # the schema itself, no contract runtime in between


def test_the_table_names_every_built_in_contract_and_each_has_a_responder():
    assert sorted(SCHEMAS) == BUILT_IN
    assert set(BUILT_IN) <= set(registered_contracts())


def test_every_built_in_contract_was_answered_in_the_recorded_runs_or_the_extreme_rows(recorded):
    covered = {call.contract for call in recorded} | {contract for contract, _ in EXTREME}
    assert set(BUILT_IN) <= covered, sorted(set(BUILT_IN) - covered)
    assert all(call.inputs for call in recorded)  # every prompt carried its inputs


def test_every_recorded_call_answered_from_its_inputs_alone_satisfies_its_schema(recorded):
    for call in recorded:
        alone = ModelCall(call.contract, call.role, call.structured, call.tool_names, (), schema=call.schema,
                          inputs=call.inputs)  # no prose at all
        answer = _answer(alone)
        _check(call.contract, call, answer)
        assert answer == _answer(call), call.contract  # the prose added nothing: the answer comes from the inputs


@pytest.mark.parametrize(("contract", "inputs"), EXTREME, ids=[contract for contract, _ in EXTREME])
def test_inputs_past_every_bound_still_give_an_answer_within_the_schema(contract, inputs):
    role = CONTRACT_ROLES[contract]
    call = ModelCall(contract, role, True, (), (), inputs=inputs)
    _check(contract, call, _answer(call))


@pytest.mark.parametrize(
    ("schema", "path", "bound"),
    [
        (DeliveryPlan, ("acceptance_criteria",), 40),
        (DeliveryPlan, ("acceptance_criteria", "description"), 1000),
        (DeliveryPlan, ("scope", "included", "[]"), 1000),
        (DeliveryTasks, ("tasks", "task_id"), 120),
        (TasklistStrategy, ("grouping", "[]"), 120),
        (AssistantIntent, ("plan", "steps"), 10),
        (AssistantSummary, ("summary",), 800),
    ],
)
def test_limit_reads_the_bound_the_schema_declares(schema, path, bound):
    assert limit(schema, *path) == bound


def test_limit_refuses_a_field_without_a_bound():
    with pytest.raises(KeyError):
        limit(DeliveryPlan, "delivery_phases", "phase_key", "missing")
    with pytest.raises(KeyError):
        limit(SupervisorPreDecision, "branch")

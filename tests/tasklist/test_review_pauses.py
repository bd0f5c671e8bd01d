"""Review pauses describe every allowed decision (schema and example); invalid answers re-ask, never fail."""

from __future__ import annotations

import asyncio

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import TypeAdapter

from reins.policies.tasklist.review import check_review_decision
from reins.runtime.persistence.checkpoint import strict_serializer
from reins.runtime.standins.scripted import ScriptedModel
from reins.schemas.tasklist import (
    REVIEW_KINDS,
    REVISION_REVIEW_DECISIONS,
    STRATEGY_REVIEW_DECISIONS,
    review_decision_forms,
    review_decision_type,
    review_response_schema,
)
from tests.tasklist.builders import NEEDS_NON_GOALS, PASSING, READY, STRATEGY, graph_for, proceed

ALLOWED = {"strategy_review": STRATEGY_REVIEW_DECISIONS, "revision_review": REVISION_REVIEW_DECISIONS}


def _start(model: ScriptedModel):
    graph = graph_for(model, checkpointer=InMemorySaver(serde=strict_serializer()), human_review=True)
    config = {"configurable": {"thread_id": "pause"}}
    return graph, config, graph.invoke({"request": f"/tasklist {READY}"}, config)


def _types_admitted(schema: dict) -> set[str]:
    """The ``type`` values a response schema admits (one shape, or a discriminated union)."""
    shapes = [schema["$defs"][ref["$ref"].split("/")[-1]] for ref in schema["oneOf"]] if "oneOf" in schema else [schema]
    return {shape["properties"]["type"]["const"] for shape in shapes}


# ------------------------------------------------------------------------------ schemas and examples


@pytest.mark.parametrize("kind", REVIEW_KINDS)
def test_every_decision_has_a_description_a_schema_and_an_example_that_validates(kind):
    forms = review_decision_forms(kind, ALLOWED[kind])
    assert list(forms) == list(ALLOWED[kind])
    for name, form in forms.items():
        assert form["description"] and form["schema"]["properties"]["type"]["const"] == name
        assert form["schema"]["additionalProperties"] is False
        assert form["example"]["type"] == name
        check = check_review_decision(kind, ALLOWED[kind], form["example"])
        assert check.error is None and check.decision == form["example"]


@pytest.mark.parametrize(("kind", "allowed"), [("strategy_review", ("approve", "edit", "reject")), ("revision_review", ("approve",))])
def test_the_response_schema_admits_exactly_the_decisions_allowed_now(kind, allowed):
    assert _types_admitted(review_response_schema(kind, allowed)) == set(allowed)
    assert list(review_decision_forms(kind, allowed)) == list(allowed)


def test_unknown_decisions_have_no_form():
    with pytest.raises(ValueError, match="unknown"):
        review_decision_forms("strategy_review", ("approve", "delete"))
    with pytest.raises(ValueError):
        review_decision_forms("revision_review", ())


def test_a_given_example_replaces_the_built_in_one():
    forms = review_decision_forms("strategy_review", ("approve", "edit"), {"edit": {"type": "edit", "strategy": STRATEGY}})
    assert forms["edit"]["example"] == {"type": "edit", "strategy": STRATEGY}
    assert forms["approve"]["example"] == {"type": "approve"}


# ------------------------------------------------------------------------------------- the pauses


def test_the_strategy_pause_carries_forms_a_response_schema_and_an_edit_that_starts_from_the_strategy():
    graph, config, first = _start(ScriptedModel({"tasklist.planning_decision": [proceed()], "tasklist.draft": [PASSING]}))
    (pending,) = first["__interrupt__"]
    payload = pending.value
    assert payload["error"] is None
    assert list(payload["decisions"]) == payload["allowed_decisions"] == list(STRATEGY_REVIEW_DECISIONS)
    assert payload["decisions"]["edit"]["example"] == {"type": "edit", "strategy": STRATEGY}
    assert _types_admitted(pending.response_schema) == set(STRATEGY_REVIEW_DECISIONS)
    for form in payload["decisions"].values():  # every example is a resume the run accepts
        TypeAdapter(review_decision_type("strategy_review", payload["allowed_decisions"])).validate_python(form["example"])
    assert graph.invoke(Command(resume=payload["decisions"]["approve"]["example"]), config)["final_decision"] == "final"


def test_the_revision_pause_carries_forms_for_approve_edit_reject():
    model = ScriptedModel({"tasklist.planning_decision": [proceed()], "tasklist.draft": [NEEDS_NON_GOALS]})
    graph, config, _ = _start(model)
    paused = graph.invoke(Command(resume={"type": "approve"}), config)
    payload = paused["__interrupt__"][0].value
    assert payload["kind"] == "revision_review" and payload["error"] is None
    assert list(payload["decisions"]) == list(REVISION_REVIEW_DECISIONS)
    assert payload["decisions"]["edit"]["schema"]["properties"]["markdown"]["maxLength"] == 100_000


def test_invalid_answers_are_asked_again_with_one_redacted_line_until_a_valid_one_arrives():
    model = ScriptedModel({"tasklist.planning_decision": [proceed()], "tasklist.draft": [PASSING]})
    graph, config, _ = _start(model)
    secret = "sk-live0123456789abcdefXYZ"
    first = graph.invoke(Command(resume={"type": secret}), config)["__interrupt__"][0].value
    assert "not allowed" in first["error"] and secret not in first["error"] and "\n" not in first["error"]
    second = graph.invoke(Command(resume={"type": "edit", "strategy": {"granularity": "huge"}}), config)
    error = second["__interrupt__"][0].value["error"]
    assert error.startswith("the edit decision is not valid (edit.strategy.granularity: literal_error;") and "huge" not in error
    assert graph.get_state(config).next == ("review_strategy",)
    assert model.count("tasklist.planning_decision") == 1 and model.count("tasklist.draft") == 0

    result = graph.invoke(Command(resume={"type": "approve"}), config)
    assert result["final_decision"] == "final" and model.count("tasklist.draft") == 1
    reviews = [t["summary"] for t in result["trace"] if t["step"] == "strategy-review"]
    assert reviews == ["reviewer chose approve after 2 refused answer(s)"]


def test_a_refused_answer_does_not_leak_into_the_next_review():
    model = ScriptedModel({"tasklist.planning_decision": [proceed()], "tasklist.draft": [NEEDS_NON_GOALS]})
    graph, config, _ = _start(model)
    graph.invoke(Command(resume="approve"), config)  # not an object: refused
    paused = graph.invoke(Command(resume={"type": "approve"}), config)
    payload = paused["__interrupt__"][0].value
    assert payload["kind"] == "revision_review" and payload["error"] is None


def test_the_async_path_re_asks_too():
    """LangGraph Server resumes with ``ainvoke``/``astream``: same behaviour."""
    model = ScriptedModel({"tasklist.planning_decision": [proceed()], "tasklist.draft": [PASSING]})
    graph, config, _ = _start(model)

    async def resume(value):
        return await graph.ainvoke(Command(resume=value), config)

    again = asyncio.run(resume({"type": "ship-it"}))
    assert "ship-it is not allowed" in again["__interrupt__"][0].value["error"]
    assert asyncio.run(resume({"type": "approve"}))["final_decision"] == "final"

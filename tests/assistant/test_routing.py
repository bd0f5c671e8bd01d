"""The assistant routes like the delivery chain: every deciding node returns a ``Command`` to one of
its declared destinations, the graph has no conditional edge, and Studio draws each branch."""

from __future__ import annotations

import pytest
from langgraph.graph import END

from reins.graphs.assistant import build_graph
from reins.nodes.assistant.routing import (
    AFTER_CHECK,
    AFTER_INTENT,
    AFTER_OBSERVATION,
    AFTER_PROPOSAL,
    AFTER_REFLECTION,
    AFTER_REVISION,
    AFTER_SKILL_DRAFT,
    after_turn_start,
    route_input,
    routed,
)

INSTALLED = {"tasklist": object(), "delivery-chain": object()}


def test_no_conditional_edge_is_left_and_each_deciding_node_draws_its_destinations():
    compiled = build_graph(store=None)
    assert dict(compiled.builder.branches) == {}
    drawn: dict[str, set[str]] = {}
    for edge in compiled.get_graph().edges:
        if edge.conditional:
            drawn.setdefault(edge.source, set()).add(edge.target)
    assert drawn == {
        "prepare_turn": set(after_turn_start(INSTALLED)),
        "classify_intent": set(AFTER_INTENT),
        "propose_step": set(AFTER_PROPOSAL),
        "observe": set(AFTER_OBSERVATION),
        "revise_plan": set(AFTER_REVISION),
        "check_and_reply": set(AFTER_CHECK),
        "reflect": set(AFTER_REFLECTION),
        "draft_skill": set(AFTER_SKILL_DRAFT),
        "tasklist": {"tasklist", "__end__"},  # a review pause is announced, then waited for, in its next step
    }


@pytest.mark.parametrize(
    ("request_text", "installed", "expected"),
    [
        ("", INSTALLED, "empty_request"),
        ("what is 2+2?", INSTALLED, "classify_intent"),
        ("/tasklist docs://versions/v0.2.0-ready.md", INSTALLED, "tasklist"),
        ("/delivery-chain Add a login page", INSTALLED, "delivery_chain"),
        ("/delivery-chain Add a login page", {}, "run_slash_command"),  # not installed: answered by rule
        ("/delivery-chain", INSTALLED, "run_slash_command"),  # no argument: its usage
        ("/help", INSTALLED, "run_slash_command"),
    ],
)
def test_a_turn_starts_where_its_request_says(request_text, installed, expected):
    assert route_input({"request": request_text}, pipelines=installed) == expected
    assert expected in after_turn_start(installed)


def test_a_routed_node_routes_on_the_state_its_update_leaves():
    def decide(state):
        return {"intent": "QA"}

    def steps(state):
        yield "a request"
        return {"skill_draft": None}

    command = routed(decide, lambda view: "draft_answer" if view["intent"] == "QA" else "propose_step")({"intent": "COMPLEX"})
    assert (command.update, command.goto) == ({"intent": "QA"}, "draft_answer")

    generator = routed(steps, lambda view: "review_skill_draft" if view.get("skill_draft") else END)({"skill_draft": {"name": "x"}})
    assert next(generator) == "a request"
    with pytest.raises(StopIteration) as done:
        generator.send(None)
    assert (done.value.value.update, done.value.value.goto) == ({"skill_draft": None}, END)

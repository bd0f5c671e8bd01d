"""Human review: strategy and revision interrupts, refused resumes, resume from a new process (SQLite)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from langgraph.types import Command

from reins.graphs.tasklist_agent import ResumeError, pending_review, resume_command
from reins.policies.tasklist.machine import MAX_STEPS_WITH_REVIEW
from langgraph.checkpoint.memory import InMemorySaver

from reins.runtime.persistence.checkpoint import open_checkpointer, strict_serializer
from reins.runtime.standins.scripted import ScriptedModel
from tests.tasklist.builders import NEEDS_NON_GOALS, PASSING, READY, STRATEGY, graph_for, proceed, steps_of

PROJECT = Path(__file__).resolve().parents[2]
EDITED = {**STRATEGY, "grouping": ["Edited grouping"], "expected_step_range": [1, 2]}


def strict_memory_saver() -> InMemorySaver:
    return InMemorySaver(serde=strict_serializer())


@pytest.fixture
def review_run():
    """Start a reviewed run of the ready plan; returns (graph, config, first result, model)."""

    def start(model: ScriptedModel, **options):
        graph = graph_for(model, checkpointer=strict_memory_saver(), human_review=True, **options)
        config = {"configurable": {"thread_id": "review"}}
        return graph, config, graph.invoke({"request": f"/tasklist {READY}"}, config)

    return start


def _resume(graph, config, decision):
    return graph.invoke(resume_command(graph, config, decision), config)


def test_strategy_review_pauses_before_the_draft_then_approve_finishes(review_run):
    model = ScriptedModel({"tasklist.planning_decision": [proceed()], "tasklist.draft": [PASSING]})
    graph, config, first = review_run(model)
    payload = first["__interrupt__"][0].value
    assert payload["kind"] == "strategy_review" and payload["strategy"] == STRATEGY
    assert payload["allowed_decisions"] == ["approve", "edit", "reject", "respond"]
    assert first["status"] == "strategy_decided" and model.count("tasklist.draft") == 0
    result = _resume(graph, config, {"type": "approve"})
    assert result["final_decision"] == "final" and model.count("tasklist.draft") == 1
    assert model.count("tasklist.planning_decision") == 1  # nothing before the pause ran again
    assert steps_of(result).count("read-plan") == 1 and "strategy-review" in steps_of(result)


def test_edit_replaces_the_strategy_the_draft_uses(review_run):
    model = ScriptedModel({"tasklist.planning_decision": [proceed()], "tasklist.draft": [PASSING]})
    graph, config, _ = review_run(model)
    result = _resume(graph, config, {"type": "edit", "strategy": EDITED})
    assert result["strategy"] == EDITED
    assert "Edited grouping" in str(model.calls[-1].messages[-1].content)


def test_reject_stops_without_a_draft(review_run):
    model = ScriptedModel({"tasklist.planning_decision": [proceed()]})
    graph, config, _ = review_run(model)
    result = _resume(graph, config, {"type": "reject", "reason": "Too many steps."})
    assert (result["status"], result["final_decision"]) == ("stopped", "stopped")
    assert "rejected" in result["message"] and "Too many steps." in result["message"]
    assert model.count("tasklist.draft") == 0


def test_respond_triggers_exactly_one_regeneration_then_only_approve_edit_reject(review_run):
    regenerated = {**STRATEGY, "granularity": "coarse"}
    model = ScriptedModel({
        "tasklist.planning_decision": [proceed()],
        "tasklist.strategy": [regenerated],
        "tasklist.draft": [PASSING],
    })
    graph, config, _ = review_run(model)
    second = _resume(graph, config, {"type": "respond", "feedback": "Fewer, larger steps please."})
    assert model.count("tasklist.strategy") == 1
    assert "Fewer, larger steps please." in str(model.calls[-1].messages[-1].content)
    payload = second["__interrupt__"][0].value
    assert payload["allowed_decisions"] == ["approve", "edit", "reject"] and payload["strategy"] == regenerated
    # a second respond is refused before it is consumed; the run stays paused where it was
    with pytest.raises(ResumeError, match="not allowed"):
        resume_command(graph, config, {"type": "respond", "feedback": "again"})
    # straight to the graph: asked again with the reason, never consumed
    again = graph.invoke(Command(resume={"type": "respond", "feedback": "again"}), config)
    assert "not allowed" in again["__interrupt__"][0].value["error"]
    assert pending_review(graph, config)["allowed_decisions"] == ["approve", "edit", "reject"]
    assert model.count("tasklist.strategy") == 1
    result = _resume(graph, config, {"type": "approve"})
    assert result["final_decision"] == "final" and result["strategy"] == regenerated
    assert result["contract_metrics"]["tasklist.strategy"]["business_calls"] == 1


@pytest.mark.parametrize(
    ("decision", "message"),
    [
        ({"type": "maybe"}, "not allowed"),
        ({"type": "edit"}, "strategy"),
        ({"type": "edit", "strategy": {**STRATEGY, "expected_step_range": [9, 1]}}, "strategy"),
        ({"type": "reject"}, "reason"),
        ("approve", "JSON object"),
    ],
)
def test_an_invalid_resume_is_refused_and_the_run_stays_paused(review_run, decision, message):
    model = ScriptedModel({"tasklist.planning_decision": [proceed()], "tasklist.draft": [PASSING]})
    graph, config, _ = review_run(model)
    before = graph.get_state(config)
    with pytest.raises(ResumeError, match=message):
        resume_command(graph, config, decision)
    # Straight to the graph (as LangGraph Server resumes): not an error of the run, the same review
    # is asked again with the same one-line reason.
    again = graph.invoke(Command(resume=decision), config)
    (pending,) = again["__interrupt__"]
    assert re.search(message, pending.value["error"]) and "\n" not in pending.value["error"]
    assert pending.value["kind"] == "strategy_review" and pending.value["decisions"]
    after = graph.get_state(config)
    assert after.next == before.next == ("review_strategy",)
    assert after.interrupts and after.values["status"] == "strategy_decided"
    assert after.values["counters"] == before.values["counters"]
    assert _resume(graph, config, {"type": "approve"})["final_decision"] == "final"


def test_revision_review_approve_runs_the_revision(review_run):
    model = ScriptedModel({
        "tasklist.planning_decision": [proceed()], "tasklist.draft": [NEEDS_NON_GOALS], "tasklist.revision": [PASSING],
    })
    graph, config, _ = review_run(model)
    paused = _resume(graph, config, {"type": "approve"})
    payload = paused["__interrupt__"][0].value
    assert payload["kind"] == "revision_review" and payload["fix_now"] == ["missing_non_goals"]
    assert payload["allowed_decisions"] == ["approve", "edit", "reject"] and "# v0.2.0 Tasklist" in payload["draft"]
    assert model.count("tasklist.revision") == 0
    result = _resume(graph, config, {"type": "approve"})
    assert result["final_decision"] == "final" and model.count("tasklist.revision") == 1


def test_revision_review_edit_is_validated_directly_as_v2(review_run):
    model = ScriptedModel({"tasklist.planning_decision": [proceed()], "tasklist.draft": [NEEDS_NON_GOALS]})
    graph, config, _ = review_run(model)
    _resume(graph, config, {"type": "approve"})
    result = _resume(graph, config, {"type": "edit", "markdown": PASSING})
    assert model.count("tasklist.revision") == 0
    assert result["validation"]["v2"]["status"] == "pass" and result["artifact"]["metadata"]["revision"] == 2
    assert result["final_decision"] == "final"


def test_revision_review_reject_ends_the_run(review_run):
    model = ScriptedModel({"tasklist.planning_decision": [proceed()], "tasklist.draft": [NEEDS_NON_GOALS]})
    graph, config, _ = review_run(model)
    _resume(graph, config, {"type": "approve"})
    result = _resume(graph, config, {"type": "reject"})
    assert result["final_decision"] == "stopped" and model.count("tasklist.revision") == 0
    with pytest.raises(ResumeError, match="not waiting"):
        resume_command(graph, config, {"type": "approve"})  # a finished run cannot be resumed twice


def test_human_review_from_the_run_context_and_its_step_budget():
    model = ScriptedModel({"tasklist.planning_decision": [proceed()], "tasklist.draft": [PASSING]})
    with open_checkpointer("memory") as saver:
        graph = graph_for(model, checkpointer=saver)
        config = {"configurable": {"thread_id": "ctx"}}
        first = graph.invoke({"request": f"/tasklist {READY}"}, config, context={"human_review": True})
        assert first["__interrupt__"][0].value["kind"] == "strategy_review"
        assert graph.get_state(config).values["limits"]["max_steps"] == MAX_STEPS_WITH_REVIEW


def test_resume_of_an_unknown_thread_is_refused():
    with open_checkpointer("memory") as saver:
        graph = graph_for(ScriptedModel({}), checkpointer=saver)
        with pytest.raises(ResumeError, match="no tasklist run"):
            resume_command(graph, {"configurable": {"thread_id": "nobody"}}, {"type": "approve"})


def test_a_paused_run_survives_a_process_restart(tmp_path):
    """Pause in this process with SQLite, then finish it from a brand-new Python process (the CLI)."""
    from reins.graphs.tasklist_agent import build_graph
    from reins.runtime.llm.models import ModelSet
    from reins.runtime.standins.offline import OfflineModel

    db = tmp_path / ".reins" / "checkpoints.db"
    config = {"configurable": {"thread_id": "tasklist-restart"}}
    with open_checkpointer("sqlite", path=db) as saver:
        graph = build_graph(models=ModelSet.uniform(OfflineModel()), checkpointer=saver, human_review=True)
        first = graph.invoke({"request": "/tasklist docs://versions/v0.2.2-needs-revision.md"}, config)
        assert first["__interrupt__"][0].value["kind"] == "strategy_review"
        second = graph.invoke(resume_command(graph, config, {"type": "approve"}), config)
        assert second["__interrupt__"][0].value["kind"] == "revision_review"
        with pytest.raises(ResumeError):  # refused here: nothing is written, the run stays paused
            resume_command(graph, config, {"type": "respond", "feedback": "x"})

    env = {k: v for k, v in os.environ.items() if not k.startswith(("REINS_", "OPENAI_"))}
    env.update({"REINS_CHECKPOINT": "sqlite", "PYTHONPATH": str(PROJECT)})
    code = "import sys; from reins.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", code, "resume", "tasklist-restart", "--decision", '{"type": "approve"}', "--json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=110,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["final_decision"] == "final" and result["artifact"]["metadata"]["revision"] == 2
    steps = [t["step"] for t in result["trace"]]
    assert steps.count("read-plan") == 1 and steps.count("planning-decision") == 1
    assert steps.count("strategy-review") == 1 and steps.count("revision-review") == 1
    assert result["contract_metrics"]["tasklist.planning_decision"]["business_calls"] == 1
    # the new process continued at the revision: it never re-ran the earlier steps
    assert "Revise to v2" in done.stderr and "Read the version plan" not in done.stderr


def test_a_reviewed_tasklist_as_a_subgraph_uses_the_parents_checkpointer():
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class Parent(TypedDict, total=False):
        request: str
        final_decision: str

    model = ScriptedModel({"tasklist.planning_decision": [proceed()], "tasklist.draft": [PASSING]})
    reviewed = graph_for(model, human_review=True)  # no checkpointer of its own: built without error
    builder = StateGraph(Parent)
    builder.add_node("tasklist", reviewed)
    builder.add_edge(START, "tasklist")
    builder.add_edge("tasklist", END)
    parent = builder.compile(checkpointer=strict_memory_saver())
    config = {"configurable": {"thread_id": "parent"}}
    first = parent.invoke({"request": f"/tasklist {READY}"}, config)
    assert first["__interrupt__"][0].value["kind"] == "strategy_review"  # paused on the parent's thread
    done = parent.invoke(Command(resume={"type": "approve"}), config)
    assert done["final_decision"] == "final"
    assert model.count("tasklist.planning_decision") == 1 and model.count("tasklist.draft") == 1

    # On its own, with no checkpointer anywhere, the run is refused before any step.
    with pytest.raises(ValueError, match="human_review needs a checkpointer"):
        reviewed.invoke({"request": f"/tasklist {READY}"}, {"configurable": {"thread_id": "alone"}})
    assert model.count("tasklist.planning_decision") == 1

"""The compiled tasklist graph on ScriptedModel: the reference cases and the guard's refusals."""

from __future__ import annotations

import json

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from reins.graphs.tasklist_agent import NODES, build_graph, graph as exported_graph
from reins.nodes.tasklist.common import TasklistDeps
from reins.nodes.tasklist.planning import read_optional_context
from reins.policies.tasklist.machine import ENTRY, EXIT, edge_allowed
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.scripted import ScriptedModel
from tests.tasklist.builders import (
    BLOCKED,
    FAILING,
    MANUAL_ONLY,
    NEEDS_NON_GOALS,
    NEEDS_REVIEW,
    PASSING,
    READY,
    STRATEGY,
    ask,
    boundary,
    docs_root,
    graph_for,
    proceed,
    proceed_with_items,
    read_context,
    steps_of,
    tasklist_script,
)

PUBLIC_KEYS = {
    "status", "final_decision", "decision", "strategy", "artifact", "validation", "warning_disposition",
    "revision_effect", "manual_review_items", "trace", "summary", "message", "contract_metrics", "run_id",
}


def run(model: ScriptedModel, request: str = f"/tasklist {READY}", **options):
    return graph_for(model, **options).invoke({"request": request})


# ----------------------------------------------------------------------------------- graph shape


def test_every_compiled_edge_is_a_transition_the_guard_table_allows():
    edges = build_graph(models=ModelSet.uniform(ScriptedModel({}))).get_graph().edges
    names = {"__start__": ENTRY, "__end__": EXIT}
    pairs = {(names.get(e.source, e.source), names.get(e.target, e.target)) for e in edges}
    assert len(pairs) >= 30
    refused = [pair for pair in pairs if not edge_allowed(*pair)]
    assert refused == []
    # and the graph really has every node of the table, each one reachable and each able to finish
    assert {source for source, _ in pairs} >= set(NODES) - {"finish"} | {ENTRY}
    assert all((node, "finish") in pairs for node in NODES if node != "finish")


def test_every_action_of_the_table_is_one_guarded_node():
    from reins.nodes.tasklist.stages import STEPS
    from reins.policies.tasklist.machine import ACTIONS

    assert list(NODES) == list(ACTIONS) and {step.action for step in STEPS} == set(ACTIONS)
    assert len(STEPS) == len(ACTIONS)  # each step listed once


def test_module_graph_builds_without_network_or_environment():
    assert exported_graph.name == "tasklist_agent"
    assert set(exported_graph.get_graph().nodes) >= set(NODES)


# ---------------------------------------------------------------------- the reference cases


def test_pass_on_v1():
    model = tasklist_script()
    result = run(model)
    assert set(result) >= PUBLIC_KEYS
    assert (result["status"], result["final_decision"]) == ("final", "final")
    assert model.contracts_called() == ["tasklist.planning_decision", "tasklist.draft"]
    assert steps_of(result) == [
        "read-plan", "check-readiness", "check-readiness", "planning-decision", "decide-strategy",
        "draft-v1", "validate-v1", "warning-disposition", "revision-effect", "final", "finish",
    ]
    artifact = result["artifact"]
    assert artifact["metadata"] == {"plan_uri": READY, "target_version": "v0.2.0", "revision": 1, "validated": True}
    assert artifact["markdown"].startswith("# v0.2.0 Tasklist\n")
    assert "Status: draft, awaiting human confirmation" in artifact["markdown"]
    assert result["strategy"] == STRATEGY and result["decision"]["decision"]["type"] == "proceed_to_tasklist_strategy"
    assert result["revision_effect"]["final_decision"] == "final" and result["message"] is None
    assert result["contract_metrics"]["tasklist.planning_decision"]["business_calls"] == 1
    # the strategy reaches the draft prompt as explicit constraints
    draft_prompt = "\n".join(str(m.content) for m in model.calls[1].messages)
    assert "Keep the number of steps between 2 and 4" in draft_prompt and "Filtering; Export" in draft_prompt


def test_fix_now_findings_get_one_revision_that_passes():
    model = tasklist_script(draft_text=NEEDS_NON_GOALS, tasklist__revision=[PASSING])
    result = run(model)
    assert result["final_decision"] == "final"
    assert model.count("tasklist.revision") == 1
    assert result["validation"]["v1"]["issue_ids"] == ["missing_non_goals"]
    assert result["validation"]["v2"]["status"] == "pass"
    assert result["revision_effect"]["fixed_issues"] == ["missing_non_goals"]
    assert result["revision_effect"]["improved"] is True
    assert result["artifact"]["metadata"]["revision"] == 2
    revision_prompt = str(model.calls[-1].messages[-1].content)
    findings = json.loads(revision_prompt.split("<findings>\n", 1)[1].split("\n</findings>", 1)[0])
    assert [f["id"] for f in findings] == ["missing_non_goals"]


def test_only_fix_now_findings_reach_the_revision_prompt():
    model = tasklist_script(draft_text=NEEDS_NON_GOALS.replace("## Risks", "## Notes"), tasklist__revision=[PASSING])
    result = run(model)
    assert result["warning_disposition"]["fix_now"] == ["missing_non_goals"]
    assert "weak_risks" not in str(model.calls[-1].messages[-1].content)
    assert [i["title"] for i in result["manual_review_items"]] == ["Risks and confirmation points are missing"]


def test_manual_only_warnings_do_not_trigger_a_revision():
    model = tasklist_script(draft_text=MANUAL_ONLY)
    result = run(model)
    assert result["final_decision"] == "final_with_manual_review_items"
    assert model.count("tasklist.revision") == 0
    assert result["warning_disposition"]["fix_now"] == []
    assert result["manual_review_items"][0]["severity"] == "warning"
    assert result["artifact"]["metadata"]["validated"] is True


def test_failing_v1_gets_one_revision_never_a_v3_and_ends_blocked():
    model = tasklist_script(draft_text=FAILING, tasklist__revision=[FAILING, FAILING])
    result = run(model)
    assert model.count("tasklist.revision") == 1
    assert set(result["validation"]) == {"v1", "v2"}
    assert result["status"] == "final" and result["final_decision"] == "blocked"
    assert result["artifact"]["metadata"]["validated"] is False and result["artifact"]["metadata"]["revision"] == 2
    assert "do not adopt" in result["message"]
    assert result["revision_effect"]["unresolved_fix_now"]
    assert any(i["title"] == "Not fixed by the automatic revision" for i in result["manual_review_items"])


def test_needs_review_plan_proceeds_with_manual_review_items():
    model = tasklist_script(decision=proceed_with_items("Plan states no non-goals", "Plan has no test plan"))
    result = run(model, f"/tasklist {NEEDS_REVIEW}")
    assert result["final_decision"] == "final_with_manual_review_items"
    assert [i["title"] for i in result["manual_review_items"]] == ["Plan states no non-goals", "Plan has no test plan"]
    readiness_prompt = str(model.calls[0].messages[-1].content)
    assert '"status": "needs_review"' in readiness_prompt


@pytest.mark.parametrize(
    ("decision", "kind", "step"),
    [(ask("Which version is this plan for?"), "clarification", "ask-clarification"),
     (boundary("Writing docs is outside this agent."), "boundary", "boundary-stop")],
)
def test_ask_clarification_and_boundary_stop_end_the_run(decision, kind, step):
    model = ScriptedModel({"tasklist.planning_decision": [decision]})
    result = run(model)
    assert (result["status"], result["final_decision"]) == ("stopped", "stopped")
    assert result["message"] == (decision["decision"].get("question") or decision["decision"].get("message"))
    assert result["artifact"] is None and model.contracts_called() == ["tasklist.planning_decision"]
    assert steps_of(result)[-2:] == [step, "finish"]


def test_blocked_plan_asks_for_clarification():
    model = ScriptedModel({"tasklist.planning_decision": [ask()]})
    result = run(model, f"/tasklist {BLOCKED}")
    prompt = str(model.calls[0].messages[-1].content)
    assert '"status": "blocked"' in prompt
    assert '"ask_clarification",\n "stop_with_boundary_message"' in prompt
    assert result["final_decision"] == "stopped" and result["message"] == ask()["decision"]["question"]


CONTEXT_FILES = {
    "versions/v1.0.0.md": open("resources/docs/versions/v0.2.0-ready.md", encoding="utf-8").read(),
    "architecture/runtime-boundary.md": "# Runtime boundary\nNo writes, no scans. MARKER-DOCS\n",
    "latest-context.md": "# Latest\nMARKER-LATEST\n",
}


@pytest.mark.parametrize(
    ("uri", "marker"),
    [("docs://architecture/runtime-boundary.md", "MARKER-DOCS"), ("project://latest-context", "MARKER-LATEST")],
)
def test_optional_context_is_read_once_and_shapes_strategy_and_draft(tmp_path, uri, marker):
    resolver = docs_root(tmp_path, CONTEXT_FILES)
    model = tasklist_script(decision=read_context(uri), tasklist__strategy=[STRATEGY])
    result = run(model, "/tasklist docs://versions/v1.0.0.md", resolver=resolver)
    assert result["final_decision"] == "final"
    assert model.contracts_called() == ["tasklist.planning_decision", "tasklist.strategy", "tasklist.draft"]
    assert marker in str(model.calls[1].messages[-1].content) and marker in str(model.calls[2].messages[-1].content)
    assert "read-optional-context" in steps_of(result)


def test_a_failed_context_read_degrades_to_a_manual_review_item(tmp_path):
    files = {k: v for k, v in CONTEXT_FILES.items() if not k.startswith("architecture")}
    model = tasklist_script(decision=read_context("docs://architecture/runtime-boundary.md"), tasklist__strategy=[STRATEGY])
    result = run(model, "/tasklist docs://versions/v1.0.0.md", resolver=docs_root(tmp_path, files))
    assert result["final_decision"] == "final_with_manual_review_items"
    assert result["manual_review_items"][0]["title"] == "optional context read failed"
    assert result["manual_review_items"][0]["severity"] == "warning"
    assert "<context>" not in str(model.calls[1].messages[-1].content)


@pytest.mark.parametrize(
    "bad",
    [
        "not json at all",
        {"decision": {"type": "proceed_to_tasklist_strategy", "reason": "r"}},  # strategy missing
        {**ask(), "strategy": STRATEGY},  # strategy on a stop action
        {**proceed(), "strategy": {**STRATEGY, "expected_step_range": [6, 2]}},  # invalid strategy
        {"decision": {"type": "scan_source_tree", "reason": "r"}},  # not one of the five
    ],
)
def test_invalid_planning_output_stops_safely_after_one_repair(bad):
    model = ScriptedModel({"tasklist.planning_decision": [bad, bad]})
    result = run(model)
    assert (result["status"], result["final_decision"]) == ("stopped", "stopped")
    assert model.count("tasklist.planning_decision") == 2  # the call and its single repair
    assert result["contract_metrics"]["tasklist.planning_decision"]["repair_calls"] == 1
    assert "did not satisfy its contract" in result["message"]
    assert not result.get("decision") and model.count("tasklist.draft") == 0


def test_one_repair_can_rescue_the_decision():
    model = ScriptedModel({"tasklist.planning_decision": ["{}", proceed()], "tasklist.draft": [PASSING]})
    assert run(model)["final_decision"] == "final"


def test_invalid_regenerated_strategy_stops_safely(tmp_path):
    model = tasklist_script(decision=read_context("project://latest-context"), tasklist__strategy=[{"granularity": "x"}] * 2)
    result = run(model, "/tasklist docs://versions/v1.0.0.md", resolver=docs_root(tmp_path, CONTEXT_FILES))
    assert result["final_decision"] == "stopped" and model.count("tasklist.draft") == 0


def test_a_provider_error_ends_the_run_failed_with_its_stage_and_cause():
    model = ScriptedModel({"tasklist.planning_decision": [RuntimeError("provider exploded at sk-secret-123456789")]})
    result = run(model)
    assert result["final_decision"] == "failed" and result["status"] == "failed"
    assert result["message"] == "The run failed: planning_decision failed: error (RuntimeError)."
    assert "exploded" not in str(result)  # the provider's message is never copied


# -------------------------------------------------------------------------------- guard refusals


def test_an_action_outside_the_allowed_set_stops():
    model = ScriptedModel({"tasklist.planning_decision": [proceed()], "tasklist.draft": [PASSING]})
    result = run(model, f"/tasklist {BLOCKED}")
    assert (result["status"], result["final_decision"]) == ("stopped", "stopped")
    assert model.contracts_called() == ["tasklist.planning_decision"]
    violation = [t for t in result["trace"] if t.get("violation")]
    assert "outside the allowed set" in violation[0]["summary"]


@pytest.mark.parametrize(
    "uri",
    ["docs://versions/v0.3.0-needs-review.md", "docs://architecture/../versions/v0.2.0-ready.md", "file:///etc/passwd"],
)
def test_a_context_uri_off_the_allowlist_is_refused_by_the_guard(uri):
    model = ScriptedModel({"tasklist.planning_decision": [read_context(uri)]})
    result = run(model)
    assert result["final_decision"] == "stopped"
    assert model.contracts_called() == ["tasklist.planning_decision"]
    assert "allowlist" in [t for t in result["trace"] if t.get("violation")][0]["summary"]


def _decided_state(**changes):
    state = {
        "run_id": "r", "status": "planning_decided", "plan_uri": READY, "allowed_actions": ["read_optional_context"],
        "counters": {"steps": 3, "optional_context_reads": 0, "draft_revisions": 0, "strategy_regenerations": 0},
        "decision": read_context("docs://README.md"),
    }
    state.update(changes)
    return state


class CountingResolver:
    def __init__(self):
        self.reads = []

    def read(self, uri):
        self.reads.append(uri)
        raise AssertionError("the guard should have refused before any read")


@pytest.mark.parametrize(
    "changes",
    [
        {"counters": {"steps": 3, "optional_context_reads": 1, "draft_revisions": 0, "strategy_regenerations": 0}},
        {"status": "optional_context_read"},
        {"decision": proceed()},
        {"allowed_actions": ["ask_clarification", "stop_with_boundary_message"]},
    ],
)
def test_the_read_node_refuses_a_second_or_undecided_read(changes):
    resolver = CountingResolver()
    from reins.runtime.execution.calls import drive

    update = drive(read_optional_context(_decided_state(**changes), deps=TasklistDeps(resolver=resolver)))  # a generator node: it reads off the loop
    assert update["status"] == "stopped" and resolver.reads == []


def test_max_steps_stops_the_run():
    model = tasklist_script()
    result = run(model, max_steps=4)
    assert (result["status"], result["final_decision"]) == ("stopped", "stopped")
    assert model.count("tasklist.draft") == 0
    assert "step limit (4)" in [t for t in result["trace"] if t.get("violation")][0]["summary"]


# ----------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        ({"request": "/tasklist please plan v1.0.0"}, "Reference exactly one version plan"),
        ({"request": "/tasklist docs://README.md"}, "Only version plans"),
        ({"request": "/tasklist docs://versions/nope.md"}, "not found"),
        ({"request": "/tasklist docs://versions/../README.md"}, "must stay inside"),
        ({"plan_uri": "docs://versions/../../etc/passwd.md"}, "must stay inside"),
        ({"request": "/tasklist file:///etc/passwd"}, "Only version plans"),
        ({"request": "/tasklist docs://versions/a.md docs://versions/b.md"}, "exactly one"),
        ({}, "Reference exactly one version plan"),
    ],
)
def test_bad_input_fails_closed_without_a_model_call(inputs, expected):
    model = ScriptedModel({})
    result = graph_for(model).invoke(inputs)
    assert (result["status"], result["final_decision"]) == ("failed", "failed")
    assert expected in result["message"]
    assert "passwd" not in result["message"] and "nope" not in result["message"]
    assert model.calls == [] and result["artifact"] is None


# ------------------------------------------------------------------------- progress, redaction


def test_progress_events_per_step_never_carry_the_artifact():
    model = tasklist_script(draft_text=NEEDS_NON_GOALS, tasklist__revision=[PASSING])
    events = [chunk for chunk in graph_for(model).stream({"request": f"/tasklist {READY}"}, stream_mode="custom")]
    assert events[0]["step"] == "start" and events[-1]["step"] == "end"
    steps = [e["step"] for e in events if e["status"] == "completed" and e["step"] not in ("start", "end")]
    assert steps == [
        "read-plan", "check-readiness", "planning-decision", "decide-strategy", "draft-v1", "validate-v1",
        "warning-disposition", "revise-v2", "validate-v2", "revision-effect", "final",
    ]
    assert {e["run_id"] for e in events} == {events[0]["run_id"]}
    for event in events:
        assert event["type"] == "workflow-progress" and event["workflow"] == "tasklist"
        assert len(event["summary"]) <= 200 and "- [ ]" not in event["summary"] and "##" not in event["summary"]


def test_secrets_in_the_request_and_the_draft_are_redacted():
    secret = "sk-live1234567890abcdef"
    model = tasklist_script(draft_text=PASSING + f"\n\nNote: api_key={secret}\n")
    result = run(model, f"/tasklist {READY} Bearer abcdefghijk and {secret}")
    assert secret not in json.dumps(result) and "abcdefghijk" not in json.dumps(result)
    assert "[redacted]" in result["artifact"]["markdown"]


def test_two_step_contract_mode_uses_the_encoder():
    model = ScriptedModel({
        "tasklist.planning_decision": ["draft of the decision", proceed()],
        "tasklist.draft": [PASSING],
    })
    result = graph_for(model).invoke({"request": f"/tasklist {READY}"}, context={"contract_mode": "two_step"})
    assert result["final_decision"] == "final"
    assert result["contract_metrics"]["tasklist.planning_decision"]["encoder_calls"] == 1
    assert [c.role for c in model.calls][:2] == ["tasklist", "encoder"]


def test_the_longest_path_fits_the_step_budget_exactly(tmp_path):
    model = tasklist_script(
        decision=read_context("project://latest-context"), draft_text=NEEDS_NON_GOALS,
        tasklist__strategy=[STRATEGY], tasklist__revision=[PASSING],
    )
    config = {"configurable": {"thread_id": "longest"}}
    graph = graph_for(model, resolver=docs_root(tmp_path, CONTEXT_FILES), checkpointer=InMemorySaver())
    result = graph.invoke({"request": "/tasklist docs://versions/v1.0.0.md"}, config)
    assert result["final_decision"] == "final"
    assert graph.get_state(config).values["counters"] == {
        "steps": 12, "optional_context_reads": 1, "draft_revisions": 1, "strategy_regenerations": 0,
    }


def test_a_model_timeout_fails_the_run_with_a_static_message():
    from reins.runtime.llm.models import RolePolicy
    from reins.runtime.config.settings import ROLES

    model = ScriptedModel({"tasklist.planning_decision": [proceed()], "tasklist.draft": [TimeoutError("slow"), TimeoutError("slow")]})
    fast = ModelSet.uniform(model).with_policies(**dict.fromkeys(ROLES, RolePolicy(5, 0, 0.0)))
    result = build_graph(models=fast).invoke({"request": f"/tasklist {READY}"})
    assert (result["status"], result["final_decision"]) == ("failed", "failed")
    assert result["message"] == "The run failed: the model did not answer in time."
    assert result["artifact"] is None and "slow" not in result["summary"]


def test_model_text_in_the_decision_and_strategy_is_redacted():
    secret = "sk-fromtheplan1234567890"
    leaky = {**STRATEGY, "reason": f"Because api_key={secret}"}
    model = tasklist_script(decision={"decision": {"type": "proceed_to_tasklist_strategy", "reason": f"token {secret}"},
                                      "strategy": leaky})
    result = run(model)
    assert secret not in json.dumps(result["decision"]) and secret not in json.dumps(result["strategy"])
    assert secret not in str(model.calls[-1].messages[-1].content)  # nor does it travel on to the draft prompt


def test_the_graph_takes_each_listed_step_once():
    from reins.nodes.tasklist.stages import STEPS
    from reins.nodes.tasklist.steps import nodes_by_action

    with pytest.raises(ValueError, match="listed twice"):
        nodes_by_action([*STEPS, STEPS[0]])
    with pytest.raises(ValueError, match="no step is listed for read_plan"):
        nodes_by_action(STEPS[1:])

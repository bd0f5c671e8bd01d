"""A manager turn refused again after its re-ask goes once to the manager's escalation model: the
same prompt and tools, the same delegation policy; refused there too, the run fails closed."""

from __future__ import annotations

import json

from tests.delivery.delivery_builders import honest_manager, script, turn
from langchain_core.messages import AIMessage, messages_to_dict

from reins.graphs.delivery_chain import build_graph
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.scripted import ScriptedModel

REFUSED = AIMessage(content="I would rather write the plan myself.")  # no tool call


def prompt(call) -> str:
    return json.dumps([messages_to_dict(call.messages), list(call.tool_names)], sort_keys=True)


def manager_calls(model: ScriptedModel) -> list:
    return [c for c in model.calls if c.contract == "delivery.manager"]


def run(primary: ScriptedModel, stronger: ScriptedModel | None) -> dict:
    models = ModelSet.uniform(primary)
    if stronger is not None:
        models = models.with_escalations({"manager": ("strong", stronger)})
    return build_graph(models).invoke({"requirement": "Show a banner when the request limit is reached."})


def test_a_turn_refused_twice_is_escalated_once_and_the_run_goes_on():
    primary = ScriptedModel(script(manager=[REFUSED, REFUSED, *honest_manager()[1:]]))
    stronger = ScriptedModel({"delivery.manager": [turn("plan-subagent")]})

    out = run(primary, stronger)

    assert out["run_status"] == "pass"
    assert len(manager_calls(stronger)) == 1
    # the same turn: the prompt and tools the primary was asked on its re-ask (told why it was
    # refused), at the role's own temperature
    assert prompt(manager_calls(stronger)[0]) == prompt(manager_calls(primary)[1])
    assert "no_tool_call" in prompt(manager_calls(stronger)[0]) and "no_tool_call" not in prompt(manager_calls(primary)[0])
    assert manager_calls(primary)[2].tool_names == ("task-subagent",)  # the next turn is the primary's again
    refusals = [e["summary"] for e in out["trace"] if e["step"] == "manager-refused"]
    assert len(refusals) == 2 and "escalated to strong" in refusals[1]
    assert out["metrics"]["escalations"] == 1
    assert out["metrics"]["models"]["manager"] == sorted(["ScriptedModel", "strong"])


def test_an_escalated_turn_meets_the_same_policy_and_is_never_escalated_twice():
    primary = ScriptedModel(script(manager=[REFUSED, REFUSED]))
    stronger = ScriptedModel({"delivery.manager": [turn("task-subagent"), turn("plan-subagent")]})

    out = run(primary, stronger)

    assert out["run_status"] == "failed"
    assert out["policy_violation"]["code"] == "out_of_order"  # the escalated turn's own refusal
    assert len(manager_calls(stronger)) == 1 and primary.count("delivery.tasks") == 0
    refusals = [e["summary"] for e in out["trace"] if e["step"] == "manager-refused"]
    assert len(refusals) == 3 and "budget spent" in refusals[-1]


def test_without_an_escalation_model_the_run_fails_closed_as_before():
    primary = ScriptedModel(script(manager=[REFUSED, REFUSED]))
    out = run(primary, None)
    assert out["run_status"] == "failed" and len(manager_calls(primary)) == 2
    assert out["metrics"]["escalations"] == 0

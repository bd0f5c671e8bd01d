"""A deeply nested or huge JSON answer is invalid output (one repair, then a contract failure),
never a RecursionError, under the scripted, the offline and the real client path."""

from __future__ import annotations

import json

import pytest

from reins.graphs.tasklist_agent import build_graph as build_tasklist
from reins.policies.text.json_limits import MAX_JSON_DEPTH
from reins.runtime.standins.offline import OfflineModel
from reins.runtime.standins.scripted import ScriptedModel
from tests.wire.conftest import wire_models
from tests.wire.provider_stub import Completion, StubProvider
from tests.wire.behaviours import cooperative, schema_name

PLAN = {"request": "/tasklist docs://versions/v0.2.0-ready.md"}


def deep_dict(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth):
        value = {"a": value}
    return value


DEEP_TEXT = "[" * 100_000 + "]" * 100_000
HUGE_TEXT = json.dumps({"decision": {"type": "x" * 1_100_000}})


@pytest.mark.parametrize(
    "answer",
    [deep_dict(100_000), DEEP_TEXT, deep_dict(MAX_JSON_DEPTH + 1), HUGE_TEXT],
    ids=["deep-dict", "deep-text", "one-level-too-deep", "too-large"],
)
def test_a_scripted_deep_answer_fails_the_contract_cleanly(answer):
    scripted = ScriptedModel({"tasklist.planning_decision": [answer, answer]})
    result = build_tasklist(models=scripted).invoke(PLAN)
    invalid = build_tasklist(models=ScriptedModel({"tasklist.planning_decision": ["not json", "not json"]})).invoke(PLAN)
    assert (result["final_decision"], result["message"]) == (invalid["final_decision"], invalid["message"])
    assert result["final_decision"] == "stopped" and result["artifact"] is None
    assert scripted.contracts_called() == ["tasklist.planning_decision"] * 2  # the answer and its one repair


def test_the_offline_encoder_refuses_a_deep_draft():
    from langchain_core.messages import HumanMessage

    from reins.runtime.standins.offline.framework import OfflineRequest, _generic_answer

    for draft in (DEEP_TEXT, HUGE_TEXT):
        request = OfflineRequest(contract="x", role="encoder", structured=True, tool_names=(),
                                 messages=(HumanMessage(content=f"<draft>\n{draft}\n</draft>"),))
        assert _generic_answer(request) == {}  # over the limits: nothing passed through
    ordinary = OfflineRequest(contract="x", role="encoder", structured=True, tool_names=(),
                              messages=(HumanMessage(content='<draft>\n{"a": [1]}\n</draft>'),))
    assert _generic_answer(ordinary) == {"a": [1]}


def test_the_real_client_path_treats_a_deep_answer_as_invalid_output():
    def deep(body):
        if schema_name(body) == "PlanningDecision":
            return Completion(content=DEEP_TEXT)
        return cooperative(body)

    with StubProvider(deep) as provider:
        result = build_tasklist(models=wire_models(provider.base_url)).invoke(PLAN)
        kinds = [schema_name(body) for body in provider.bodies()]
    assert result["final_decision"] == "stopped" and result["artifact"] is None
    assert kinds == ["PlanningDecision", "PlanningDecision"]


def test_offline_graphs_still_pass():
    assert build_tasklist(models=OfflineModel()).invoke(PLAN)["final_decision"] == "final"

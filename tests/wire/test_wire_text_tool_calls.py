"""Local models that write their tool calls as text, over the real ChatOpenAI path.

The manager role is served by a real ``ChatOpenAI`` against the loopback stub, which answers as
llama-server did with Qwen2.5-Coder-0.5B (``tests/wire/llama_server.py``); every other role is the
offline model, so the stub sees manager turns only. Recovered calls face the delegation policy
exactly like native ones; with ``REINS_TEXT_TOOL_CALLS=refuse`` the chain fails closed as before.
"""

from __future__ import annotations

import json

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from reins.graphs.delivery_chain import build_graph
from reins.runtime.standins.offline import OfflineModel
from reins.runtime.config.settings import ROLES
from tests.wire.behaviours import text_only, tool_names
from tests.wire.conftest import wire_models
from tests.wire.llama_server import LONG_NOTE, NOTES, cut_off, is_manager_turn, qwen
from tests.wire.provider_stub import StubProvider

SCENARIO = {"requirement_uri": "demo://scenarios/request-limit-banner/requirement.md"}
PHASES = [["plan-subagent"], ["task-subagent"], ["review-subagent", "risk-subagent", "boundary-subagent"]]


def manager_on(provider: StubProvider, **env: str):
    offline = OfflineModel()
    models = wire_models(provider.base_url, **env)
    return models.with_models({role: offline for role in ROLES if role != "manager"})


def run(provider: StubProvider, **env: str) -> dict:
    return build_graph(models=manager_on(provider, **env)).invoke(dict(SCENARIO))


def run_kept(provider: StubProvider, **env: str) -> tuple[dict, dict]:
    """The run's output and its full final state (which holds the last turn's proposed calls)."""
    graph = build_graph(models=manager_on(provider, **env), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "text-calls"}}
    return graph.invoke(dict(SCENARIO), config), graph.get_state(config).values


def manager_records(out: dict) -> list[dict]:
    return [record for record in out["trace"] if record["step"] == "manager"]


@pytest.mark.parametrize("tool_choice", ["required", "auto"])
def test_text_calls_are_recovered_and_the_chain_passes(stub, tool_choice):
    provider = stub(qwen())
    out, state = run_kept(provider, REINS_TOOL_CHOICE=tool_choice)

    bodies = provider.bodies()
    assert out["run_status"] == "pass"
    assert all(is_manager_turn(body) for body in bodies)
    assert [tool_names(body) for body in bodies] == PHASES  # one turn per phase: nothing refused
    assert [record.get("recovered_from_text") for record in manager_records(out)] == [True, True, True]
    assert all("(written as text)" in record["summary"] for record in manager_records(out))
    assert out["metrics"]["manager_refusals"] == 0
    assert out["review_bundle"]["coverage"] == {"general": "completed", "risk": "completed", "boundary": "completed"}
    # the review turn's calls as recovered: ids of their own, the notes the model wrote as arguments
    assert [(c["id"], c["name"], c["args"]) for c in state["pending_calls"]] == [
        (f"text-{n}", name, {"note": NOTES[name]}) for n, name in enumerate(PHASES[2], 1)]


def test_with_refuse_the_same_answers_fail_closed_and_nothing_runs(stub):
    provider = stub(qwen())
    out = run(provider, REINS_TEXT_TOOL_CALLS="refuse")

    assert out["run_status"] == "failed"
    # padded to max_tokens (finish_reason: length) without a native call: the turn was cut off
    assert out["policy_violation"]["code"] == "truncated"
    assert out["artifacts"]["plan"] is None and out["artifacts"]["tasks"] is None
    assert len(provider.bodies()) == 2  # the turn and its one re-ask
    assert not any(record.get("recovered_from_text") for record in out["trace"])

    clean = stub(qwen())
    out = run(clean, REINS_TEXT_TOOL_CALLS="refuse", REINS_TOOL_CHOICE="auto")
    assert (out["run_status"], out["policy_violation"]["code"]) == ("failed", "no_tool_call")


def test_a_recovered_call_whose_note_is_too_long_runs_with_the_note_cut(stub):
    # The 1.5B model pasted the tool's description as its note (282 characters, at most 200): the note
    # is advisory, so the runtime cuts it instead of refusing a turn that is otherwise right.
    provider = stub(qwen({**NOTES, "plan-subagent": LONG_NOTE}))
    out, state = run_kept(provider)

    assert len(LONG_NOTE) > 200
    assert out["run_status"] == "pass" and out["metrics"]["manager_refusals"] == 0
    assert [tool_names(body) for body in provider.bodies()] == PHASES  # no re-ask
    first = manager_records(out)[0]
    assert first["recovered_from_text"] and "note cut to its bound" in first["summary"]
    assert "note cut" not in manager_records(out)[1]["summary"]


def test_a_recovered_call_the_policy_refuses_is_asked_again_with_the_reason(stub):
    # A note of the wrong type is still refused: the re-ask tells the model {path, code}, never its answer.
    provider = stub(qwen({**NOTES, "plan-subagent": 12345}))
    out, state = run_kept(provider)

    assert out["run_status"] == "failed"
    assert out["policy_violation"]["code"] == "invalid_tool_arguments"
    assert out["artifacts"]["plan"] is None
    assert [r["code"] for r in state["manager_refusals"]] == ["invalid_tool_arguments"] * 2
    first, again = provider.bodies()
    assert again["messages"][:-1] == first["messages"]
    told = again["messages"][-1]
    assert told["role"] == "user" and '"path": "note", "code": "string_type"' in told["content"]
    assert "12345" not in told["content"]
    refused = [r["summary"] for r in out["trace"] if r["step"] == "manager-refused"]
    assert "asked again with the reason [note: string_type], temperature 0 → 0.4, output bound 512 → 512" in refused[0]
    steps = [record["step"] for record in out["trace"]]
    assert "delegate-plan" not in steps and steps.count("manager") == 2
    assert all(record.get("recovered_from_text") for record in manager_records(out))


def test_a_turn_cut_off_inside_the_call_is_truncated_and_the_reask_gets_room(stub):
    provider = stub(cut_off)
    out = run(provider)

    first, again = provider.bodies()
    assert out["run_status"] == "failed"
    assert out["policy_violation"]["code"] == "truncated"
    assert "cut off at its output token limit" in out["report"]
    assert "answered without delegating" not in out["report"]
    assert (first["max_tokens"], again["max_tokens"]) == (512, 1024)  # twice the bound, once
    assert (first["temperature"], again["temperature"]) == (0.0, 0.4)
    assert again["messages"][:-1] == first["messages"] and "truncated" in again["messages"][-1]["content"]


def test_the_reask_differs_from_the_first_request_only_in_its_temperature_and_reason(stub):
    provider = stub(text_only)  # prose: no call, finish_reason stop
    out = build_graph(models=wire_models(provider.base_url)).invoke(dict(SCENARIO))

    turns = [body for body in provider.bodies() if is_manager_turn(body)]
    assert out["policy_violation"]["code"] == "no_tool_call"
    assert len(turns) == 2
    first, again = turns
    assert {key for key in first.keys() | again.keys() if first.get(key) != again.get(key)} == {"temperature",
                                                                                                "messages"}
    assert (first["temperature"], again["temperature"]) == (0.0, 0.4)
    # the same prompt byte for byte, plus the reason: [{"path": "$", "code": "no_tool_call"}]
    assert json.dumps(first["messages"]) == json.dumps(again["messages"][:-1])
    assert '[{"path": "$", "code": "no_tool_call"}]' in again["messages"][-1]["content"]

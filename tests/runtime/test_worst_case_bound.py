"""The printed worst case bounds every request a run can make: the assistant's task roles with their
own chains (a turn whose step role falls back three times), a pipeline started from chat, each
tool's own deadline, and caps that are finite numbers above zero."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from pydantic import BaseModel

from reins.cli import main
from reins.evals.budget_fuzz_models import overloaded
from reins.graphs.assistant import build_graph
from reins.policies.assistant.replanning import MAX_REPLANS
from reins.policies.audit.run_budgets import assistant_turns
from reins.runtime.execution.budget import BudgetExceeded, caps_from_env, used, worst_case
from reins.runtime.execution.run_ledger import BudgetCapReached, run_ledger
from reins.runtime.llm.models import ROLE_POLICIES, ModelSet
from reins.runtime.standins.offline import OfflineModel
from reins.runtime.standins.scripted import ScriptedModel
from reins.runtime.tools.registry import RegisteredTool
from reins.runtime.tools.runner import RunTool
from tests.assistant.helpers import chat_registry

COMPLEX = "what is 17 * 23 + 4 and what is 2 + 2?"


def _stepping() -> ScriptedModel:
    """A step model that proposes a new calculator call on every turn: the loop runs to its limit."""
    numbers = itertools.count(1)

    def step(messages):
        n = next(numbers)
        return AIMessage(content="", tool_calls=[{"name": "calculator", "args": {"expression": f"{n} + {n}"},
                                                  "id": f"call_{n}", "type": "tool_call"}])

    return ScriptedModel({"assistant.step": step})


def _step_with_three_fallbacks() -> ModelSet:
    """The reported case: the step role on its own model with three fallbacks; the first three are
    overloaded (each attempt fails retryably), the last answers. No backoff, so nothing sleeps."""
    failing = [ScriptedModel({"assistant.step": lambda messages: overloaded()}) for _ in range(3)]
    step_policy = replace(ROLE_POLICIES["chat"], backoff_initial_s=0.0)
    return (ModelSet.uniform(OfflineModel()).with_models({"step": failing[0]})
            .with_fallbacks({"step": [*failing[1:], _stepping()]}).with_policies(step=step_policy))


def test_a_turn_with_three_step_fallbacks_stays_within_the_printed_worst_case():
    models = _step_with_three_fallbacks()
    graph = build_graph(models, registry=chat_registry(), store=None)
    out = graph.invoke({"messages": [HumanMessage(content=COMPLEX)]}, {"configurable": {"thread_id": "steps"}})
    spent = used(out["contract_metrics"], len(out["records"]))
    worst = worst_case("assistant", models).as_dict()
    assert spent["calls"] > worst_case("assistant", ModelSet.uniform(OfflineModel())).calls  # the old bound: 52
    assert spent["calls"] <= worst["calls"] and spent["output_tokens"] <= worst["output_tokens"]
    assert spent["tool_calls"] <= worst["tool_calls"]


def test_the_step_role_s_fallbacks_move_the_bound_by_every_request_they_add():
    plain = worst_case("assistant", ModelSet.uniform(OfflineModel()))
    stepped = worst_case("assistant", _step_with_three_fallbacks())
    attempts = 1 + ROLE_POLICIES["chat"].retries
    # every tool-calling turn may now go to 4 models instead of 1, each with its retries, and so may
    # each replan (also the step role's) and its repair
    assert stepped.calls - plain.calls == 3 * attempts * (assistant_turns() + 2 * MAX_REPLANS)


DELIVERY = "/delivery-chain Show a banner when a user reaches the request limit"


@pytest.fixture
def chat_home(offline_cli, monkeypatch):
    monkeypatch.setenv("REINS_HOME", str(offline_cli / "home"))
    for name in ("REINS_MAX_CALLS", "REINS_MAX_OUTPUT_TOKENS", "REINS_MAX_TOOL_CALLS", "REINS_MAX_SECONDS",
                 "REINS_ALLOW_OVER_CAP", "REINS_MCP_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    return offline_cli


def test_a_delivery_started_from_chat_is_counted_inside_the_turn(chat_home, capsys):
    assert main(["chat", "--once", DELIVERY, "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["pipeline"]["command"] == "delivery-chain"
    spent, worst = payload["budget"]["used"], payload["budget"]["worst_case"]
    # the pipeline's requests are the turn's: every delivery contract is in the turn's metrics
    delivery_calls = used({c: v for c, v in payload["metrics"]["per_contract"].items() if c.startswith("delivery.")})
    assert delivery_calls["calls"] >= 8 and spent["calls"] == used(payload["metrics"]["per_contract"])["calls"]
    assert spent["tool_calls"] == payload["pipeline"]["tool_calls"] >= 2  # the plan and task delegations
    delivery_alone = worst_case("delivery_chain", ModelSet.uniform(OfflineModel())).as_dict()
    for name in ("calls", "output_tokens", "tool_calls"):
        assert spent[name] <= worst[name]
    assert worst["calls"] > delivery_alone["calls"] and worst["seconds"] > delivery_alone["seconds"]


def test_a_seconds_cap_that_refuses_a_delivery_refuses_it_in_chat_too(chat_home, capsys, monkeypatch):
    monkeypatch.setenv("REINS_MAX_SECONDS", "4000")
    assert main(["deliver", "--scenario", "request-limit-banner"]) == 2
    assert "the delivery_chain worst case does not fit your caps (seconds: " in capsys.readouterr().err
    assert main(["chat", "--once", DELIVERY]) == 2
    err = capsys.readouterr().err
    assert "the assistant worst case does not fit your caps (seconds: " in err and "Manager turn" not in err


def test_a_delivery_in_chat_let_past_a_cap_is_stopped_there(chat_home, capsys, monkeypatch):
    monkeypatch.setenv("REINS_MAX_CALLS", "10")
    monkeypatch.setenv("REINS_ALLOW_OVER_CAP", "1")
    main(["chat", "--once", DELIVERY, "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert payload["budget"]["used"]["calls"] == 10  # charged to the turn and stopped at its cap


def test_a_slow_mcp_server_s_deadline_is_the_tool_time_counted(chat_home, capsys, monkeypatch):
    assert main(["doctor", "--budget", "--json"]) == 0
    builtin = json.loads(capsys.readouterr().out)["graphs"]["assistant"]
    config = chat_home / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"slow": {"command": "not-started", "timeout_s": 600}}}))
    monkeypatch.setenv("REINS_MCP_CONFIG", str(config))
    assert main(["doctor", "--budget", "--json"]) == 0
    slow = json.loads(capsys.readouterr().out)["graphs"]["assistant"]
    # every one of a chat turn's tool calls may be a call to the slow server, to its own deadline
    tool_calls = slow["worst_case"]["tool_calls"]
    assert slow["worst_case"]["seconds"] >= tool_calls * 600
    before, after = builtin["paths"]["chat turn"], slow["paths"]["chat turn"]
    assert after["seconds"] - before["seconds"] == tool_calls * (600 - 30)


class LookupArgs(BaseModel):
    query: str


def _slow_tool(ran: list, deadline_s: float) -> RegisteredTool:
    return RegisteredTool(name="slow_lookup", description="look something up", args_schema=LookupArgs,
                          scopes=frozenset({"chat"}), func=lambda query: ran.append(query) or "found",
                          read_only=True, timeout_s=deadline_s)


def test_the_seconds_cap_is_checked_before_a_tool_call():
    ran: list = []
    with run_ledger({"seconds": 10}, {"seconds": "REINS_MAX_SECONDS"}) as ledger:
        with pytest.raises(BudgetCapReached, match=r"seconds \(REINS_MAX_SECONDS=10\)"):
            RunTool(_slow_tool(ran, 30), {"query": "x"}).run()  # to its deadline it would end past the cap
        assert ran == [] and ledger.used["tool_calls"] == 0 and ledger.refused == "seconds"
        assert RunTool(_slow_tool(ran, 5), {"query": "y"}).run().ok  # one that fits runs
    assert ran == ["y"]


def test_a_chat_tool_call_past_the_seconds_cap_is_not_run(chat_home, capsys, monkeypatch):
    monkeypatch.setenv("REINS_TIMEOUT_CHAT", "1")  # model requests fit the cap; the calculator's 30 s do not
    monkeypatch.setenv("REINS_MAX_SECONDS", "10")
    monkeypatch.setenv("REINS_ALLOW_OVER_CAP", "1")
    main(["chat", "--once", "what is 6*7?", "--json"])
    payload = json.loads(capsys.readouterr().out)
    (record,) = payload["records"]
    assert record["tool"] == "calculator" and not record["ok"]
    assert "budget cap reached: seconds (REINS_MAX_SECONDS=10)" in record["output"]
    assert payload["budget"]["used"]["seconds"] < 10


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "Infinity", "0", "-1", "0.0", "lots", "1e400"])
@pytest.mark.parametrize("variable", ["REINS_MAX_CALLS", "REINS_MAX_OUTPUT_TOKENS", "REINS_MAX_TOOL_CALLS",
                                      "REINS_MAX_SECONDS"])
def test_a_cap_that_is_not_a_finite_positive_number_is_refused_in_one_line(variable, value, chat_home, capsys,
                                                                          monkeypatch):
    with pytest.raises(BudgetExceeded, match=f"^{variable} must be a finite positive number"):
        caps_from_env({variable: value})
    monkeypatch.setenv(variable, value)
    assert main(["doctor", "--budget"]) == 2
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith(f"error: {variable} must be a finite positive number")
    assert main(["chat", "--once", "hello"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and variable in err[0] and "Traceback" not in err[0]

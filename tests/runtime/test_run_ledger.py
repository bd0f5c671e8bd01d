"""The run's ledger: a request that would pass a user's cap is refused before it is made, parallel
branches cannot pass a cap together, and each graph stops with a reason that names the cap."""

from __future__ import annotations

import contextvars
import json
import threading
from typing import Literal

import pytest

from reins.cli import main
from reins.runtime.contracts import ContractError, invoke_contract
from reins.runtime.llm.models import ModelSet
from reins.runtime.execution.run_ledger import BudgetCapReached, current_ledger, ledgered, run_ledger
from reins.runtime.standins.scripted import ScriptedModel
from reins.runtime.llm.models import ROLE_POLICIES
from reins.schemas.strict import Strict

POLICY = ROLE_POLICIES["reviewer"]  # max_tokens 4096, limit 8192


def _ask(answer=None, more_room: bool = False):
    """Drive one ledgered request by hand: admitted, answered with ``answer``, booked."""
    steps = ledgered("request", POLICY, more_room)
    assert next(steps) == "request"
    try:
        steps.send(answer)
    except StopIteration:
        pass


def test_without_caps_nothing_is_checked():
    with run_ledger({}) as ledger:
        assert ledger is None and current_ledger() is None
        for _ in range(50):
            _ask()


def test_the_request_past_the_call_cap_is_refused_and_names_it():
    with run_ledger({"calls": 3}, {"calls": "REINS_MAX_CALLS"}) as ledger:
        for _ in range(3):
            _ask()
        with pytest.raises(BudgetCapReached, match=r"budget cap reached: calls \(REINS_MAX_CALLS=3\)"):
            _ask()
        assert ledger.used["calls"] == 3 and ledger.refused == "calls"
    assert current_ledger() is None


def test_a_request_is_refused_when_its_output_bound_would_pass_the_token_cap():
    cap = POLICY.max_tokens + POLICY.max_tokens // 2
    with run_ledger({"output_tokens": cap}) as ledger:
        first = ledgered("a", POLICY, False)
        next(first)  # in flight: its bound (4096) is held
        with pytest.raises(BudgetCapReached):
            _ask()  # 4096 held + 4096 > 6144
        with pytest.raises(StopIteration):
            first.send(None)  # answered: no usage reported, nothing spent, the hold released
        _ask()
        with pytest.raises(BudgetCapReached):
            _ask(more_room=True)  # a repair asks for 8192 at most


def test_parallel_branches_cannot_pass_a_cap_together():
    """Sixteen threads each try four requests that wait at a barrier while in flight: exactly the
    cap's number is admitted, the rest refused before they are made."""
    made, refused = [], []
    lock = threading.Lock()
    with run_ledger({"calls": 10}) as ledger:
        barrier = threading.Barrier(10)

        def branch() -> None:
            for _ in range(4):
                steps = ledgered("r", POLICY, False)
                try:
                    next(steps)
                except BudgetCapReached:
                    with lock:
                        refused.append(1)
                    continue
                with lock:
                    made.append(1)
                barrier.wait(timeout=5)  # ten requests in flight at once
                with pytest.raises(StopIteration):
                    steps.send(None)

        # each branch in a copy of the run's context, as LangGraph runs a node
        threads = [threading.Thread(target=contextvars.copy_context().run, args=(branch,)) for _ in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(made) == 10 and len(refused) == 16 * 4 - 10
        assert ledger.used["calls"] == 10 and ledger.held["calls"] == 0


class Verdict(Strict):
    verdict: Literal["pass", "fail"]


PRE = {"verdict": "pass"}


def test_a_contract_stops_before_its_repair_when_the_cap_is_reached():
    model = ScriptedModel({"delivery.supervisor_pre": [{"wrong": 1}, PRE]})
    models = ModelSet.uniform(model)
    messages = [("user", "requirement")]
    with run_ledger({"calls": 1}, {"calls": "REINS_MAX_CALLS"}):
        with pytest.raises(BudgetCapReached) as caught:
            invoke_contract("delivery.supervisor_pre", Verdict, messages, models)
    assert model.count("delivery.supervisor_pre") == 1  # the repair was never sent
    assert caught.value.metrics["delivery.supervisor_pre"]["business_calls"] == 1
    with run_ledger({"calls": 2}):  # room for the repair: the contract's own failure handling again
        model = ScriptedModel({"delivery.supervisor_pre": [{"wrong": 1}, {"wrong": 2}]})
        with pytest.raises(ContractError):
            invoke_contract("delivery.supervisor_pre", Verdict, messages, ModelSet.uniform(model))


@pytest.mark.parametrize("cap", [5, 8])
def test_a_delivery_run_over_its_cap_fails_naming_it_and_never_passes_it(cap, capsys, tmp_path, monkeypatch):
    """Allowed to start over the cap, the run stops at it (cap 8 falls in the parallel reviews)."""
    monkeypatch.setenv("REINS_HOME", str(tmp_path))
    monkeypatch.setenv("REINS_MAX_CALLS", str(cap))
    monkeypatch.setenv("REINS_ALLOW_OVER_CAP", "1")
    assert main(["deliver", "--scenario", "request-limit-banner"]) != 0
    captured = capsys.readouterr()
    assert f"budget cap reached: calls (REINS_MAX_CALLS={cap})" in captured.out + captured.err  # the report says why
    line = next(line for line in captured.err.splitlines() if line.startswith("budget (used/worst case):"))
    assert f"calls {cap}/48" in line  # every call the cap allowed, and not one more
    assert "status: completed" not in captured.err


def test_a_chat_turn_over_its_cap_stops_with_the_budget_reason(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("REINS_HOME", str(tmp_path))
    monkeypatch.setenv("REINS_MAX_CALLS", "1")
    monkeypatch.setenv("REINS_ALLOW_OVER_CAP", "1")
    main(["chat", "--once", "what is 17 * 23 + 4?", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert out["budget"]["used"]["calls"] == 1
    assert out["stop_reason"] == "budget_cap"
    assert "budget cap" in out["reply"]


def test_without_the_flag_a_cap_below_the_worst_case_is_still_refused_at_start(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("REINS_HOME", str(tmp_path))
    monkeypatch.setenv("REINS_MAX_CALLS", "5")
    assert main(["deliver", "--scenario", "request-limit-banner"]) == 2
    assert "does not fit your caps" in capsys.readouterr().err


def test_a_tasklist_run_over_its_cap_fails_naming_it(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("REINS_HOME", str(tmp_path))
    monkeypatch.setenv("REINS_MAX_CALLS", "1")
    monkeypatch.setenv("REINS_ALLOW_OVER_CAP", "1")
    assert main(["tasklist", "docs://versions/v0.2.0-ready.md", "--json"]) != 0
    out = json.loads(capsys.readouterr().out)
    assert out["final_decision"] == "failed"
    assert "budget cap reached: calls (REINS_MAX_CALLS=1)" in out["message"]
    assert out["budget"]["used"]["calls"] == 1

"""The executor decides a step's calls with one call to the gate (``reins.policies.tools.gate``) and
enters no module of ``nodes/assistant`` twice while it does; what the gate answers is what the turn
does (the batch that runs, the calls left for later, the step summary)."""

from __future__ import annotations

import sys
from collections import Counter

from langchain_core.messages import AIMessage

from reins.nodes.assistant import executor
from tests.assistant.helpers import REFLECTION, answer, complex_, done, summaries

NODES = "reins.nodes.assistant"


def _calls(*expressions: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": "calculator", "args": {"expression": e}, "id": f"c{i}",
                                              "type": "tool_call"} for i, e in enumerate(expressions)])


def test_one_gate_call_per_step_and_no_node_module_entered_twice(runner, monkeypatch):
    gated, entries = [], []
    decide, proposal = executor.decide_calls, executor._proposal

    def counted(*args, **kwargs):
        result = decide(*args, **kwargs)
        gated.append(result)
        return result

    def watched(*args, **kwargs):
        """Count every entry into a nodes/assistant module from another module while the step is decided."""
        entered: Counter[str] = Counter()

        def profile(frame, event, _):
            if event == "call" and frame.f_back is not None:
                callee, caller = frame.f_globals.get("__name__", ""), frame.f_back.f_globals.get("__name__", "")
                if callee.startswith(NODES) and callee != caller:
                    entered[callee] += 1

        sys.setprofile(profile)
        try:
            return proposal(*args, **kwargs)
        finally:
            sys.setprofile(None)
            entries.append(entered)

    monkeypatch.setattr(executor, "decide_calls", counted)
    monkeypatch.setattr(executor, "_proposal", watched)
    run = runner({
        "assistant.intent": [complex_("calculator")],
        "assistant.step": [_calls("1+1", "2+2", "3+3", "4+4"), _calls("4+4"), done()],
        "assistant.answer": [answer("2, 4, 6 and 8.")],
        "assistant.reflection": [REFLECTION],
    })
    result = run.ask("add these four sums")
    assert [r["output"] for r in result["records"]] == ["2", "4", "6", "8"]
    assert len(gated) == 2 and len(entries) == 3  # two steps with calls, one that finished
    assert [len(g.now) for g in gated] == [3, 1] and [c.batch for c in gated[0].calls] == [0, 0, 0, 1]
    # the executor's own entry (the decision starts there), the converter once, nothing else
    assert entries[0] == Counter({f"{NODES}.executor": 1, f"{NODES}.data_flow": 1}) and entries[1] == entries[0]
    assert all(count == 1 for entered in entries for count in entered.values())
    assert summaries(result, "propose")[0] == gated[0].summary == (
        "proposed calculator, calculator, calculator; 1 more call(s) left for later steps")
    log = run.graph.get_state({"configurable": {"thread_id": "t1"}}).values["flow_log"]
    assert [(entry["n"], entry["execution"]) for entry in log] == [(1, "run"), (2, "run"), (3, "run"), (4, "run")]

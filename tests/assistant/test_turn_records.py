"""A turn's records describe that turn only: its trace and its model-call metrics start again
together when the next message arrives on the same thread."""

from __future__ import annotations

from reins.runtime.execution.steps import METRICS_KEY
from tests.assistant.helpers import REFLECTION, answer, complex_, done, qa, tool_call


def _calls(result: dict) -> dict[str, int]:
    return {contract: values["business_calls"] for contract, values in result[METRICS_KEY].items()}


def test_the_second_turn_counts_only_its_own_calls_and_steps(runner):
    run = runner({
        "assistant.intent": [complex_("calculator"), qa()],
        "assistant.step": [tool_call("calculator", expression="2+2"), done()],
        "assistant.answer": [answer("2+2 is 4."), answer("You are welcome.")],
        "assistant.reflection": [REFLECTION],
    })
    first = run.ask("what is 2+2?", thread="t")
    assert _calls(first) == {"assistant.intent": 1, "assistant.step": 2, "assistant.answer": 1, "assistant.reflection": 1}

    second = run.ask("thanks", thread="t")
    assert _calls(second) == {"assistant.intent": 1, "assistant.answer": 1}
    assert [record["step"] for record in second["trace"]] == ["memory", "classify-intent", "answer", "check"]
    # The checkpoint holds the same: the thread's state is this turn's, not the sum of both.
    stored = run.graph.get_state({"configurable": {"thread_id": "t"}}).values
    assert _calls(stored) == _calls(second)
    assert len(run.model.calls) == 7  # every call was made; only the per-turn records start again

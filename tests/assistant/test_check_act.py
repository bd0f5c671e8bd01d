"""Check → act through the graph: one round back to the tool loop with {code, where} findings, then
the answer is checked again; a second failure caps the verdict; refusals quoted are supported."""

from __future__ import annotations

import json

from tests.assistant.helpers import REFLECTION, answer, block, complex_, done, prompt_of, simple, summaries, tool_call

REJECTED = "The clock said it is 99 o'clock."


def test_unfinished_steps_send_the_turn_back_once_then_it_succeeds(runner):
    run = runner(
        {
            "assistant.intent": [complex_("calculator", "clock")],
            "assistant.step": [tool_call("calculator", expression="6*7"), done(), tool_call("clock"), done()],
            "assistant.answer": [answer(f"6*7 = 42. {REJECTED}"), answer("6*7 = 42 and I read the clock.")],
            "assistant.reflection": [REFLECTION],
        }
    )
    result = run.ask("what is 6*7 and the time")
    assert run.model.contracts_called() == [
        "assistant.intent", "assistant.step", "assistant.step", "assistant.answer",
        "assistant.step", "assistant.step", "assistant.answer", "assistant.reflection",
    ]
    findings = block(prompt_of(run.model, "assistant.step", 2), "findings").splitlines()[1:]
    assert [json.loads(line) for line in findings] == [
        {"code": "unfinished_step", "where": "plan step 2"},
        {"code": "unsupported_claim", "where": "summary (clock)"},
    ]
    # The rejected text never goes back to the model.
    assert "99" not in prompt_of(run.model, "assistant.step", 2) and "99" not in prompt_of(run.model, "assistant.answer", 1)
    assert "<findings>" not in prompt_of(run.model, "assistant.step", 0)
    assert [r["tool"] for r in result["records"]] == ["calculator", "clock"]
    assert result["answer"]["verdict"] == "success" and result["check"]["unfinished_steps"] == []
    checks = summaries(result, "check")
    assert checks[0] == "2 finding(s) (unfinished_step, unsupported_claim); back to the tool loop once"
    assert checks[1] == "verdict success"
    assert len(result["messages"]) == 2  # one reply: the sent-back draft never reached the conversation


def test_a_second_failure_caps_the_verdict_and_no_third_round_happens(runner):
    run = runner(
        {
            "assistant.intent": [complex_("calculator", "clock")],
            "assistant.step": [tool_call("calculator", expression="6*7"), done(), done()],
            "assistant.answer": [answer("6*7 = 42.", "success"), answer("6*7 = 42.", "success")],
            "assistant.reflection": [REFLECTION],
        }
    )
    result = run.ask("what is 6*7 and the time")
    assert run.model.count("assistant.answer") == 2 and run.model.count("assistant.step") == 3
    assert result["answer"]["verdict"] == "partial"
    assert result["check"]["unfinished_steps"] == [2]
    assert "Plan steps not finished: step 2" in result["reply"]
    assert summaries(result, "check")[-1].endswith("no check-act round (round_used)")


def test_a_simple_tool_turn_has_no_room_for_a_round(runner):
    run = runner(
        {
            "assistant.intent": [simple()],
            "assistant.step": [tool_call("calculator", expression="6*7")],
            "assistant.answer": [answer("The calculator returned 41.")],
        }
    )
    result = run.ask("6*7?")
    assert run.model.count("assistant.answer") == 1
    assert result["answer"]["verdict"] == "partial" and result["check"]["removed_claims"][0]["reason"] == "value_mismatch"
    assert summaries(result, "check")[0].endswith("no check-act round (no_steps_left)")


def test_a_refusal_quoted_from_the_tool_counts_as_supported(runner):
    run = runner(
        {
            "assistant.intent": [simple()],
            "assistant.step": [tool_call("calculator", expression="2**99999")],
            "assistant.answer": [answer("The calculator refused 2**99999: exponents above 1000 are not allowed.", "failure")],
        }
    )
    result = run.ask("what is 2**99999?")
    assert result["records"][0]["output"] == "calculator refused: exponents above 1000 are not allowed"
    assert "No tool result supports" not in result["reply"]
    assert result["reply"].startswith("The calculator refused 2**99999: exponents above 1000")
    assert result["check"]["removed_claims"] == []
    assert run.model.count("assistant.answer") == 1

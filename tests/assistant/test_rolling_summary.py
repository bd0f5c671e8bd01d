"""The rolling summary: turns the window drops are folded into a bounded summary the next prompts show."""

from __future__ import annotations

from tests.assistant.helpers import answer, block, prompt_of, qa, summaries


def _summaries_of(messages) -> dict:
    previous = block(str(messages[-1].content), "summary")
    dropped = block(str(messages[-1].content), "conversation")
    return {"summary": f"{previous} + [{dropped.splitlines()[0]}]".strip(" +")}


def test_dropped_turns_are_summarised_and_shown_to_later_prompts(runner):
    run = runner({"assistant.intent": lambda m: qa(), "assistant.answer": lambda m: answer("noted"),
                  "assistant.summary": _summaries_of})
    for turn in range(1, 9):
        run.ask(f"fact {turn}")
    assert run.model.count("assistant.summary") == 0  # eight turns fit the window
    assert "<summary>" not in prompt_of(run.model, "assistant.intent")

    result = run.ask("fact 9")
    assert run.model.count("assistant.summary") == 1
    folded = prompt_of(run.model, "assistant.summary")
    assert block(folded, "conversation").splitlines() == ["user: fact 1", "assistant: noted"]
    assert block(prompt_of(run.model, "assistant.intent"), "summary") == "[user: fact 1]"
    assert block(prompt_of(run.model, "assistant.answer"), "summary") == "[user: fact 1]"
    assert summaries(result, "memory")[0].endswith("dropped turns summarised")

    run.ask("fact 10")  # the next dropped turn is folded into the previous summary
    assert block(prompt_of(run.model, "assistant.summary"), "summary") == "[user: fact 1]"
    assert block(prompt_of(run.model, "assistant.intent"), "summary") == "[user: fact 1] + [user: fact 2]"


def test_a_summary_over_the_bound_is_refused_and_the_previous_one_kept(runner):
    long = {"summary": "x" * 801}
    run = runner({"assistant.intent": lambda m: qa(), "assistant.answer": lambda m: answer("noted"),
                  "assistant.summary": [{"summary": "first"}, long, long]})
    for turn in range(1, 10):
        run.ask(f"fact {turn}")
    result = run.ask("fact 10")
    assert run.model.count("assistant.summary") == 3  # the second fold: once + its repair, both too long
    assert block(prompt_of(run.model, "assistant.intent"), "summary") == "first"
    assert "summary not updated (contract" in summaries(result, "memory")[0]

"""A chat thread paused at a /tasklist review shows the review question as its last message, the
way the assistant's own pauses (ask_user, approvals) do; resuming works as before and the question
is neither repeated nor left as the last word."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reins.graphs.assistant import build_graph
from reins.nodes.assistant.pipeline_pause import review_message
from reins.runtime.persistence.checkpoint import strict_serializer
from reins.runtime.llm.models import ModelSet
from tests.api_recorder import RecordingOfflineModel
from tests.assistant.helpers import chat_registry

NEEDS_REVIEW = "/tasklist docs://versions/v0.3.0-needs-review.md"
QUESTION = "Approve the task-list split strategy before the draft is written?"
REVIEW = {"human_review": True}


def _assistant(model: Any = None) -> Any:
    models = ModelSet.uniform(model or RecordingOfflineModel())
    return build_graph(models, InMemorySaver(serde=strict_serializer()), registry=chat_registry())


def _say(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(content=text)]}


def _questions(messages: list[Any]) -> list[str]:
    return [m.content for m in messages if isinstance(m, AIMessage) and m.content.startswith(QUESTION)]


def test_the_paused_thread_shows_the_review_question_and_its_answers_as_the_last_message():
    model = RecordingOfflineModel()
    graph = _assistant(model)
    config = {"configurable": {"thread_id": "pause-message"}}

    first = graph.invoke(_say(NEEDS_REVIEW), config, context=REVIEW)
    (pause,) = first["__interrupt__"]
    state = graph.get_state(config)
    assert state.next == ("tasklist",) and [i.value for i in state.interrupts] == [pause.value]
    assert pause.value["kind"] == "strategy_review"  # the pipeline's own payload, unchanged
    last = state.values["messages"][-1]
    assert isinstance(last, AIMessage) and last.content == review_message(pause.value).content
    assert last.content.startswith(QUESTION + "\n")
    for decision in pause.value["allowed_decisions"]:  # every answer allowed now, with what it does
        assert f"\n- {decision}: {pause.value['decisions'][decision]['description']}" in last.content
    assert "Plan: docs://versions/v0.3.0-needs-review.md" in last.content
    assert f"granularity {pause.value['strategy']['granularity']}" in last.content
    assert not first.get("reply")  # nothing is answered before the person decides
    drafted_before = model.apis.count("sync")

    final = graph.invoke(Command(resume={"type": "approve"}), config, context=REVIEW)
    assert "__interrupt__" not in final and graph.get_state(config).next == ()
    assert model.apis.count("sync") > drafted_before  # the draft was written after the approval
    messages = graph.get_state(config).values["messages"]
    assert [type(m).__name__ for m in messages] == ["HumanMessage", "AIMessage", "AIMessage"]
    assert _questions(messages) == [last.content]  # asked once, not repeated by the resume
    assert messages[-1].content == final["reply"] and final["reply"].startswith("/tasklist finished with status ")
    assert graph.get_state(config).values["pipeline_review"] is None  # nothing left waiting


def test_a_refused_answer_is_asked_again_with_the_reason_as_a_new_last_message():
    graph = _assistant()
    config = {"configurable": {"thread_id": "refused"}}
    graph.invoke(_say(NEEDS_REVIEW), config, context=REVIEW)

    again = graph.invoke(Command(resume={"type": "ship-it"}), config, context=REVIEW)
    (pause,) = again["__interrupt__"]
    assert pause.value["kind"] == "strategy_review" and pause.value["error"]
    messages = graph.get_state(config).values["messages"]
    assert len(_questions(messages)) == 2  # the first question, then the one that says why it asks again
    assert messages[-1].content.startswith(QUESTION + "\nYour last answer was refused: ")

    final = graph.invoke(Command(resume={"type": "approve"}), config, context=REVIEW)
    assert final["reply"].startswith("/tasklist finished with status ")
    messages = graph.get_state(config).values["messages"]
    assert len(_questions(messages)) == 2 and messages[-1].content == final["reply"]


def test_the_next_command_on_the_thread_runs_a_fresh_pipeline_and_pauses_again():
    model = RecordingOfflineModel()
    graph = _assistant(model)
    config = {"configurable": {"thread_id": "twice"}}
    graph.invoke(_say(NEEDS_REVIEW), config, context=REVIEW)
    graph.invoke(Command(resume={"type": "approve"}), config, context=REVIEW)
    calls_first_run = len(model.apis)

    second = graph.invoke(_say(NEEDS_REVIEW), config, context=REVIEW)
    assert second["__interrupt__"][0].value["kind"] == "strategy_review"  # not the first run's end
    graph.invoke(Command(resume={"type": "approve"}), config, context=REVIEW)
    assert len(model.apis) == 2 * calls_first_run  # the second run made every call again, once
    messages = graph.get_state(config).values["messages"]
    kinds = ["human" if isinstance(m, HumanMessage) else "question" if m.content.startswith(QUESTION) else "reply"
             for m in messages]
    assert kinds == ["human", "question", "reply", "human", "question", "reply"]


def test_the_pause_message_is_shown_on_the_async_path_too():
    model = RecordingOfflineModel()
    graph = _assistant(model)
    config = {"configurable": {"thread_id": "async-pause"}}

    async def main() -> tuple[Any, Any, Any]:
        first = await graph.ainvoke(_say(NEEDS_REVIEW), config, context=REVIEW)
        paused = (await graph.aget_state(config)).values["messages"][-1]
        final = await graph.ainvoke(Command(resume={"type": "approve"}), config, context=REVIEW)
        return first, paused, final

    first, paused, final = asyncio.run(main())
    assert isinstance(paused, AIMessage) and paused.content == review_message(first["__interrupt__"][0].value).content
    messages = graph.get_state(config).values["messages"]
    assert len(_questions(messages)) == 1 and messages[-1].content == final["reply"]
    assert set(model.apis) == {"async"}


def test_the_review_message_is_redacted_and_printable():
    payload = {
        "kind": "strategy_review", "question": "\x1b[2JApprove?\x1b]0;owned\x07", "plan_uri": "docs://p.md",
        "strategy": {"granularity": "medium", "expected_step_range": [3, 6],
                     "grouping": ["by sk-abcdefghijklmnop1234 area"], "priority": ["\x1b[32mfirst\x1b[0m"]},
        "allowed_decisions": ["approve", "reject"],
        "decisions": {"approve": {"description": "Accept it."}, "reject": {"description": "Stop the run."}},
        "error": None,
    }
    text = review_message(payload).content
    assert "\x1b" not in text and "owned" not in text and "sk-abcdefghijklmnop1234" not in text
    assert text.splitlines() == [
        "Approve?",
        "Plan: docs://p.md",
        "Strategy: granularity medium, 3-6 steps",
        f"  grouping: {text.splitlines()[3].split(': ', 1)[1]}",
        "  priority: first",
        "Answer with one of:",
        "- approve: Accept it.",
        "- reject: Stop the run.",
        'Resume this thread with your decision, e.g. {"type": "approve"}.',
    ]
    assert text.splitlines()[3].startswith("  grouping: by ") and text.splitlines()[3].endswith(" area")
    revision = review_message({"question": "Fix?", "fix_now": ["W1", "W2"], "allowed_decisions": ["approve"],
                               "decisions": {}, "error": "unknown decision 'x'"}).content
    assert revision.splitlines() == ["Fix?", "Your last answer was refused: unknown decision 'x'", "To fix now: W1, W2",
                                     "Answer with one of:", "- approve",
                                     'Resume this thread with your decision, e.g. {"type": "approve"}.']

"""ask_user: the turn pauses with the question, the answer is the observation, at most two
questions per turn; side-effecting built-ins pause for approval like MCP tools."""

from __future__ import annotations

import pytest
from langgraph.types import Command
from pydantic import BaseModel, ConfigDict

from reins.runtime.tools.registry import RegisteredTool
from reins.runtime.standins.scripted import ScriptedModel
from reins.runtime.execution.user_input import ResumeRefused
from tests.assistant.helpers import Runner, answer, chat_registry, complex_, tool_call

THREAD = {"configurable": {"thread_id": "t1"}}


def _pending(run):
    return [i.value for i in run.graph.get_state(THREAD).interrupts]


def _runner(steps, registry=None):
    script = {"assistant.intent": [complex_("ask_user", "calculator")], "assistant.step": list(steps),
              "assistant.answer": [answer("Done.")], "assistant.reflection": [
                  {"went_well": "asked", "went_wrong": "nothing", "next_time": "ask", "keywords": ["ask"]}]}
    return Runner(ScriptedModel(script), registry or chat_registry())


def test_the_question_pauses_and_the_answer_is_the_observation():
    run = _runner([tool_call("ask_user", question="Which city?", options=["Paris", "Tokyo"]),
                   tool_call("calculator", expression="2+2"), tool_call("calculator", expression="3+3")])
    run.ask("weather for my city")
    (payload,) = _pending(run)
    assert payload == {"kind": "question", "question": "Which city?", "options": ["Paris", "Tokyo"]}
    with pytest.raises(ResumeRefused, match="answer with one of the options: Paris, Tokyo"):
        run.graph.invoke(Command(resume="Berlin"), THREAD)  # not an option: refused before it is stored
    assert _pending(run) == [payload]  # still paused, exactly as it was
    result = run.graph.invoke(Command(resume="2"), THREAD)  # an option's number counts
    assert result["records"][0] == {"n": 1, "step": 1, "tool": "ask_user",
                                    "args": {"question": "Which city?", "options": ["Paris", "Tokyo"]},
                                    "ok": True, "output": "Tokyo"}
    assert "Tokyo" in "\n".join(str(m.content) for m in run.model.calls[2].messages)  # the model saw it


def _last_message(run) -> str:
    return str(run.graph.get_state(THREAD).values["messages"][-1].content)


def test_a_paused_thread_shows_what_it_waits_for_as_its_last_message():
    """Studio and SDK clients see the question (or the call waiting for approval) in the thread's messages."""
    registry = chat_registry()
    registry.register(RegisteredTool("save_note", "saves", _Note, frozenset({"chat"}), func=lambda text: "saved"))
    run = _runner([tool_call("ask_user", question="Which city?", options=["Paris", "Tokyo"]),
                   tool_call("save_note", text="b"), tool_call("calculator", expression="1+1")], registry)
    run.ask("weather for my city")
    assert _pending(run)[0]["kind"] == "question"
    assert _last_message(run) == "Which city?\n1. Paris\n2. Tokyo"
    run.graph.invoke(Command(resume="Paris"), THREAD)
    assert _pending(run)[0]["tool"] == "save_note"
    assert _last_message(run) == ('Before I run save_note with {"text": "b"}, I need your approval: approve, reject or edit.'
                                  "\n- text = 'b' [unknown origin] comes from the model (not in anything read this turn)")
    done = run.graph.invoke(Command(resume={"type": "approve"}), THREAD)
    assert not _pending(run) and _last_message(run) == done["reply"]  # the reply follows once answered


def test_at_most_two_questions_per_turn():
    questions = [tool_call("ask_user", question=f"Question {i}?") for i in (1, 2, 3)]
    run = _runner([*questions, tool_call("calculator", expression="1+1")])
    run.ask("help me decide")
    run.graph.invoke(Command(resume="yes"), THREAD)
    result = run.graph.invoke(Command(resume="no"), THREAD)
    assert not _pending(run)  # the third question did not pause
    assert [(r["tool"], r["ok"]) for r in result["records"]] == [
        ("ask_user", True), ("ask_user", True), ("ask_user", False), ("calculator", True)]
    assert result["records"][2]["output"].startswith("question limit reached: at most 2 questions per turn")


class _Note(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str


def test_a_side_effecting_builtin_pauses_and_a_trusted_one_does_not():
    ran: list[str] = []
    registry = chat_registry()
    registry.register(RegisteredTool("save_note", "saves", _Note, frozenset({"chat"}), func=lambda text: ran.append(text) or "saved"))
    registry.register(RegisteredTool("log_note", "logs", _Note, frozenset({"chat"}), approval="run",
                                     func=lambda text: ran.append(f"log:{text}") or "logged"))
    run = _runner([tool_call("log_note", text="a"), tool_call("save_note", text="b"), tool_call("calculator", expression="1+1")],
                  registry)
    run.ask("save b")
    assert ran == ["log:a"]  # trusted: ran without a pause; save_note waits for a person
    (payload,) = _pending(run)
    assert payload["tool"] == "save_note" and payload["args"] == {"text": "b"}
    run.graph.invoke(Command(resume={"type": "approve"}), THREAD)
    assert ran == ["log:a", "b"]


def test_a_read_only_call_that_lost_its_connection_is_dispatched_once_more():
    attempts: list[int] = []

    def flaky(text: str) -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise ConnectionError("connection reset by peer")
        return f"got {text}"

    registry = chat_registry()
    registry.register(RegisteredTool("lookup", "looks up", _Note, frozenset({"chat"}), func=flaky, read_only=True))
    run = _runner([tool_call("lookup", text="a"), tool_call("calculator", expression="1+1")], registry)
    result = run.ask("look up a")
    assert len(attempts) == 2 and result["records"][0]["output"] == "got a"
    assert [r["summary"] for r in result["trace"] if r["step"] == "tool-1"] == ["lookup: ok; dispatched 2 times"]


def test_a_pause_is_described_without_escape_sequences():
    from reins.cli.chat_pauses import describe

    shown = describe({"kind": "question", "question": "\x1b[2JWhich city?\x1b[32m", "options": ["Paris\x1b[0m", "Tokyo"]})
    assert shown == "The assistant asks: Which city?\n  1. Paris\n  2. Tokyo" and "\x1b" not in shown
    approval = describe({"kind": "approval", "tool": "save_note", "args": {"text": "\x1b[2Jhi"}})
    assert "\x1b" not in approval and '{"text": "\\u001b[2Jhi"}' in approval  # the exact arguments, escaped as JSON


def test_under_a_langgraph_server_a_refused_answer_keeps_the_thread_paused_with_the_refusal():
    import asyncio

    from langgraph.types import Command

    run = _runner([tool_call("ask_user", question="Which city?", options=["Paris", "Tokyo"]),
                   tool_call("calculator", expression="2+2")])
    run.ask("weather for my city")
    # As LangGraph Server runs it (Studio, the SDK): its version in the run's metadata. A raise there
    # would end the run as an error and mark the thread "error" though it is still paused.
    served = {"configurable": {"thread_id": "t1"}, "metadata": {"langgraph_api_version": "0.16"}}

    async def resume(value):
        return [chunk async for chunk in run.graph.astream(Command(resume=value), served)]

    asyncio.run(resume("Berlin"))  # no exception: the run ends paused, not failed
    state = run.graph.get_state({"configurable": {"thread_id": "t1"}})
    (payload,) = [i.value for i in state.interrupts]
    assert payload["question"] == "Which city?" and payload["error"] == "answer with one of the options: Paris, Tokyo"
    assert state.next  # still waiting: the thread is "interrupted"
    asyncio.run(resume("Tokyo"))
    done = run.graph.get_state({"configurable": {"thread_id": "t1"}})
    assert not done.interrupts and done.values["records"][0]["output"] == "Tokyo"


def test_outside_a_server_a_refused_answer_still_raises():
    import asyncio

    from langgraph.types import Command

    run = _runner([tool_call("ask_user", question="Which city?", options=["Paris", "Tokyo"])])
    run.ask("weather for my city")

    async def resume():
        return [c async for c in run.graph.astream(Command(resume="Berlin"), {"configurable": {"thread_id": "t1"}})]

    with pytest.raises(ResumeRefused, match="answer with one of the options"):
        asyncio.run(resume())
    (payload,) = _pending(run)
    assert "error" not in payload  # nothing stored

"""The offline (rule-based) responders for the assistant contracts, and the offline end-to-end run."""

from __future__ import annotations


import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from reins.graphs.assistant import build_graph
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.offline import OfflineModel, OfflineRequest
from reins.runtime.standins.offline.assistant import answer, classify, find_subtasks, next_step, reflection
from reins.schemas.assistant import AssistantAnswer, AssistantIntent, AssistantReflection
from tests.assistant.helpers import CHAT_TOOLS, chat_registry, summaries


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("what is (17+25)*3?", [("calculator", {"expression": "(17+25)*3"})]),
        ("hello there", []),
        ("what time is it in Europe/Paris?", [("clock", {"timezone": "Europe/Paris"})]),
        ("现在几点？", [("clock", {})]),
        ("read docs://versions/v0.2.0-ready.md please", [("read_doc", {"uri": "docs://versions/v0.2.0-ready.md"})]),
        ("fetch https://example.com/a?b=1.", [("http_get", {"url": "https://example.com/a?b=1"})]),
        (
            "compute 2+3, then 4*5 and tell me the date",
            [("calculator", {"expression": "2+3"}), ("calculator", {"expression": "4*5"}), ("clock", {})],
        ),
        ("release v1.2 on 2024-01-02", []),  # versions and dates are not sums
        ("is 9**9**9 big?", [("calculator", {"expression": "9**9**9"})]),
        ("page http://127.0.0.1:8000/x then 1+1", [("http_get", {"url": "http://127.0.0.1:8000/x"}), ("calculator", {"expression": "1+1"})]),
    ],
)
def test_find_subtasks(text, expected):
    assert [(t.tool, t.args) for t in find_subtasks(text)] == expected


def _request(contract: str, inputs: dict, tool_names: tuple[str, ...] = ()) -> OfflineRequest:
    """A call as the stand-in sees it: its inputs travel in the metadata; the prose says nothing."""
    messages = (SystemMessage(content="Rules mention the observations block."), HumanMessage(content="(prose)"))
    return OfflineRequest(contract, "chat", True, tool_names, messages, inputs=inputs)


def _inputs(**inputs) -> dict:
    return inputs


@pytest.mark.parametrize(
    ("text", "intent", "steps"),
    [
        ("hi!", "QA", None),
        ("what is (17+25)*3?", "SIMPLE_TOOL", None),
        ("compute 2+2 and what time is it", "COMPLEX", ["calculator", "clock"]),
    ],
)
def test_intent_by_keywords(text, intent, steps):
    value = AssistantIntent.model_validate(classify(_request("assistant.intent", _inputs(request=text))))
    assert value.intent == intent
    assert (None if value.plan is None else [s.tool for s in value.plan.steps]) == steps


def test_intent_only_plans_available_tools():
    tools = [{"name": "calculator", "parameters": ["expression"]}]
    value = classify(_request("assistant.intent", _inputs(tools=tools, request="2+2 and the time")))
    assert value["intent"] == "SIMPLE_TOOL"


def _observation(n, tool, args, ok=True, output="x"):
    return {"n": n, "step": None, "tool": tool, "args": args, "ok": ok, "output": output}


@pytest.mark.parametrize(
    ("mode", "observations", "expected"),
    [
        ("COMPLEX", [], ("calculator", {"expression": "2+2"})),
        ("COMPLEX", [_observation(1, "calculator", {"expression": "2+2"})], ("clock", {})),
        ("COMPLEX", [_observation(1, "calculator", {"expression": "2+2"}), _observation(2, "clock", {})], None),
        ("SIMPLE_TOOL", [], ("calculator", {"expression": "2+2"})),
        ("COMPLEX", [_observation(1, "calculator", {"expression": "2+2"}, ok=False)], ("clock", {})),
    ],
)
def test_next_step_calls_the_first_unobserved_subtask(mode, observations, expected):
    human = _inputs(mode=mode, request="compute 2+2 and what time is it", observations=observations)
    message = next_step(_request("assistant.step", human, CHAT_TOOLS))
    calls = [(c["name"], c["args"]) for c in message.tool_calls]
    assert calls == ([] if expected is None else [expected])


@pytest.mark.parametrize(
    ("observations", "summary", "verdict"),
    [
        ([_observation(1, "calculator", {"expression": "(17+25)*3"}, output="126")], "(17+25)*3 = 126.", "success"),
        (
            [_observation(1, "calculator", {"expression": "9**9**9"}, ok=False, output="calculator refused: too big")],
            "calculator could not help: calculator refused: too big",
            "failure",
        ),
        (
            [_observation(1, "clock", {}, output="2026-01-01T00:00:00+00:00"), _observation(2, "read_doc", {"uri": "docs://x"}, ok=False, output="not found")],
            "The current time is 2026-01-01T00:00:00+00:00. read_doc could not help: not found",
            "partial",
        ),
    ],
)
def test_answer_is_composed_from_observations_only(observations, summary, verdict):
    value = AssistantAnswer.model_validate(
        answer(_request("assistant.answer", _inputs(observations=observations, request="q")))
    )
    assert (value.summary, value.verdict) == (summary, verdict)


def test_answer_without_tools_is_honest_about_being_a_stand_in():
    value = answer(_request("assistant.answer", _inputs(observations=[], request="why is the sky blue?")))
    assert "rule-based stand-in" in value["summary"] and value["verdict"] == "partial"
    greeting = answer(_request("assistant.answer", _inputs(observations=[], request="Hello!")))
    assert greeting["verdict"] == "success"


def test_reflection_names_the_tools_and_keywords():
    human = _inputs(observations=[_observation(1, "calculator", {"expression": "2+2"}, output="4")], request="Compute currency totals")
    value = AssistantReflection.model_validate(reflection(_request("assistant.reflection", human)))
    assert "use calculator" in value.next_time
    assert value.keywords == ["compute", "currency", "totals"]


@pytest.fixture
def offline_graph():
    return build_graph(models=ModelSet.uniform(OfflineModel()), registry=chat_registry())


def _ask(graph, text, thread="e2e"):
    return graph.invoke({"messages": [HumanMessage(content=text)]}, {"configurable": {"thread_id": thread}})


def test_offline_end_to_end_the_calculator_answers_126(offline_graph):
    result = _ask(offline_graph, "what is (17+25)*3?")
    assert result["intent"] == "SIMPLE_TOOL"
    assert result["records"] == [
        {"n": 1, "step": None, "tool": "calculator", "args": {"expression": "(17+25)*3"}, "ok": True, "output": "126"}
    ]
    assert "126" in result["reply"]
    assert result["answer"]["verdict"] == "success"
    assert result["answer"]["evidence"] == ["calculator((17+25)*3) → 126"]


def test_offline_end_to_end_a_multi_step_request_plans_and_reflects(offline_graph):
    result = _ask(offline_graph, "compute 12*4, then 100/8, and tell me the time")
    assert result["intent"] == "COMPLEX"
    assert [s["tool"] for s in result["plan"]["steps"]] == ["calculator", "calculator", "clock"]
    assert [(r["step"], r["output"]) for r in result["records"][:2]] == [(1, "48"), (2, "12.5")]
    assert result["check"]["unfinished_steps"] == []
    assert result["reply"].startswith("12*4 = 48. 100/8 = 12.5. The current time is ")
    assert any(line.startswith("note stored") for line in summaries(result, "reflect"))


def test_offline_end_to_end_the_calculator_refuses_a_huge_power(offline_graph):
    result = _ask(offline_graph, "what is 9**9**9?")
    assert result["records"][0]["ok"] is False
    assert "exponents above 1000" in result["reply"]
    assert result["answer"]["verdict"] == "failure"

"""The assistant's tool loop reads tool calls a model wrote as text, as the delivery manager does:
the same parser, the same ``REINS_TEXT_TOOL_CALLS`` setting; recovered calls meet the same rules."""

from __future__ import annotations

import dataclasses

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from reins.graphs.assistant import build_graph
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.scripted import ScriptedModel
from tests.assistant.helpers import REFLECTION, answer, chat_registry, done, simple, summaries

FAMILY_TEXTS = {
    "qwen": '<tool_call>\n{"name": "calculator", "arguments": {"expression": "6*7"}}\n</tool_call>',
    "llama3.1": '<|python_tag|>{"name": "calculator", "parameters": {"expression": "6*7"}}<|eom_id|>',
    "llama3.2-pythonic": "[calculator(expression='6*7')]",
    "mistral": '[TOOL_CALLS][{"name": "calculator", "arguments": {"expression": "6*7"}}]',
    "phi": '<|tool_call|>[{"name": "calculator", "arguments": {"expression": "6*7"}}]<|/tool_call|>',
    "granite": '<function_call> {"name": "calculator", "arguments": "{\\"expression\\": \\"6*7\\"}"}',
}


def script(step_text: str) -> dict:
    return {"assistant.intent": [simple()], "assistant.step": [AIMessage(content=step_text), done()],
            "assistant.answer": [answer("6*7 is 42")], "assistant.reflection": [REFLECTION]}


def ask(model: ScriptedModel, text_tool_calls: str = "recover") -> dict:
    models = dataclasses.replace(ModelSet.uniform(model), text_tool_calls=text_tool_calls)
    graph = build_graph(models=models, checkpointer=InMemorySaver(), registry=chat_registry())
    return graph.invoke({"messages": [HumanMessage(content="what is 6*7?")]}, {"configurable": {"thread_id": "t"}})


@pytest.mark.parametrize("family", FAMILY_TEXTS)
def test_a_call_written_as_text_runs_as_a_native_one(family):
    model = ScriptedModel(script(FAMILY_TEXTS[family]))
    result = ask(model)
    assert [(r["tool"], r["args"], r["output"]) for r in result["records"]] == [("calculator", {"expression": "6*7"}, "42")]
    proposal = [r for r in result["trace"] if r["step"] == "propose-1"][0]
    assert proposal["recovered_from_text"] is True and "(written as text)" in proposal["summary"]


def test_with_refuse_the_text_is_no_call():
    model = ScriptedModel(script(FAMILY_TEXTS["qwen"]))
    result = ask(model, "refuse")
    assert result["records"] == []
    assert all("recovered_from_text" not in r for r in result["trace"])


def test_a_recovered_call_meets_the_same_rules_as_a_native_one():
    # An unknown argument breaks the calculator's schema: one malformed-call observation, nothing runs.
    model = ScriptedModel(script('{"name": "calculator", "arguments": {"expression": "1", "shell": "rm -rf /"}}'))
    result = ask(model)
    assert len(result["records"]) == 1 and result["records"][0]["ok"] is False
    assert "malformed tool call" in result["records"][0]["output"]
    assert any("malformed tool call" in s for s in summaries(result, "propose"))


@pytest.mark.parametrize("text", ["I would use the calculator: calculator(expression='6*7').",
                                  '{"name": "shell", "arguments": {"cmd": "ls"}}',  # never offered
                                  "[calculator(expression=__import__('os').getcwd())]"])
def test_prose_and_calls_to_tools_not_offered_are_no_call(text):
    model = ScriptedModel(script(text))
    result = ask(model)
    assert result["records"] == []
    assert all("recovered_from_text" not in r for r in result["trace"])

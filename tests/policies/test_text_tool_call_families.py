"""Tool calls written as text, per model family: each family's documented output format rendered for
the same calls is read back exactly; prose, however call-like, is never read as a call.

The renderers follow the formats the families' chat templates and tool parsers document: Qwen 2.5 /
Hermes (``<tool_call>``), the OpenAI wire form (``arguments`` as a JSON string), Llama 3.1 (JSON with
``parameters``, bare or after ``<|python_tag|>``), Llama 3.2 / 4 (pythonic lists), Mistral
(``[TOOL_CALLS]`` with a JSON list, or ``name[ARGS]{...}`` from the v11 tokenizer on), Phi-4-mini
(``<|tool_call|>`` … ``<|/tool_call|>``), Granite 3 (``<|tool_call|>`` without a closing tag) and
Granite 20B function calling (``<function_call>``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from reins.policies.models.text_tool_calls import TextToolCall, recover_text_tool_calls

TOOLS = ("calculator", "clock", "http_get", "read_doc", "remember", "forget", "load_skill", "plan-subagent")
Call = tuple[str, dict]

CALL_SETS: dict[str, list[Call]] = {
    "one-call": [("calculator", {"expression": "2 * (3 + 4)"})],
    "no-arguments": [("clock", {})],
    "typed-arguments": [("http_get", {"url": "https://example.org/a?b=1", "timeout_s": 2.5, "follow": True,
                                      "headers": {"accept": "text/plain"}, "retries": None, "tags": ["a", "b"]})],
    "quotes-and-unicode": [("remember", {"text": 'Ava prefers "short" answers — über kurz.\nNew line.'})],
    "two-calls": [("read_doc", {"name": "README.md"}), ("load_skill", {"name": "release-notes"})],
}


def _json(args: dict) -> str:
    return json.dumps(args, ensure_ascii=False)


def _obj(name: str, args: dict, key: str = "arguments") -> str:
    return json.dumps({"name": name, key: args}, ensure_ascii=False)


def _pythonic(calls: list[Call]) -> str:
    return "[" + ", ".join(f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})" for name, args in calls) + "]"


FAMILIES: dict[str, Callable[[list[Call]], str]] = {
    "qwen-hermes": lambda calls: "\n".join(f"<tool_call>\n{_obj(n, a)}\n</tool_call>" for n, a in calls),
    "openai-string-arguments": lambda calls: "\n".join(
        json.dumps({"name": n, "arguments": _json(a)}, ensure_ascii=False) for n, a in calls),
    "openai-string-arguments-list": lambda calls: json.dumps(
        [{"name": n, "arguments": _json(a)} for n, a in calls], ensure_ascii=False),
    "llama3.1-json": lambda calls: "\n".join(_obj(n, a, "parameters") for n, a in calls),
    "llama3.1-python-tag": lambda calls: "<|python_tag|>" + "; ".join(_obj(n, a, "parameters") for n, a in calls)
    + "<|eom_id|>",
    "llama3.2-pythonic": _pythonic,
    "llama3.2-pythonic-eot": lambda calls: _pythonic(calls) + "<|eot_id|>",
    "mistral-v3": lambda calls: "[TOOL_CALLS]" + json.dumps(
        [{"name": n, "arguments": a, "id": f"a{i}b2c3d4e"} for i, (n, a) in enumerate(calls)], ensure_ascii=False),
    "mistral-v3-no-id": lambda calls: "[TOOL_CALLS] " + json.dumps(
        [{"name": n, "arguments": a} for n, a in calls], ensure_ascii=False) + "</s>",
    "mistral-v11": lambda calls: "".join(f"[TOOL_CALLS]{n}[ARGS]{_json(a)}" for n, a in calls),
    "mistral-v7-call-id": lambda calls: "".join(f"[TOOL_CALLS]{n}[CALL_ID]abc{i}23456[ARGS]{_json(a)}"
                                                for i, (n, a) in enumerate(calls)),
    "phi4-mini": lambda calls: "<|tool_call|>" + json.dumps(
        [{"name": n, "arguments": a} for n, a in calls], ensure_ascii=False) + "<|/tool_call|>",
    "phi-unclosed": lambda calls: "<|tool_call|>" + json.dumps(
        [{"name": n, "arguments": a} for n, a in calls], ensure_ascii=False) + "<|end|>",
    "granite3": lambda calls: "<|tool_call|>" + json.dumps(
        [{"name": n, "arguments": a} for n, a in calls], ensure_ascii=False),
    "granite-20b-fc": lambda calls: " ".join(f"<function_call> {_obj(n, a)}" for n, a in calls),
    "bare-json": lambda calls: "\n".join(_obj(n, a) for n, a in calls),
    "json-list": lambda calls: json.dumps([{"name": n, "arguments": a} for n, a in calls], ensure_ascii=False),
    "fenced": lambda calls: "\n\n".join(f"```json\n{_obj(n, a)}\n```" for n, a in calls),
}


@pytest.mark.parametrize("calls", CALL_SETS.values(), ids=CALL_SETS.keys())
@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_is_read_back_exactly(family, calls):
    text = FAMILIES[family](calls)
    assert recover_text_tool_calls(text, TOOLS) == tuple(TextToolCall(n, a) for n, a in calls)


@pytest.mark.parametrize("family", FAMILIES)
def test_a_family_call_of_a_tool_not_offered_is_no_call(family):
    assert recover_text_tool_calls(FAMILIES[family](CALL_SETS["one-call"]), ("clock",)) is None


@pytest.mark.parametrize("family", FAMILIES)
def test_a_family_call_with_prose_after_it_is_no_call(family):
    text = FAMILIES[family](CALL_SETS["one-call"]) + "\nThat gives the answer."
    assert recover_text_tool_calls(text, TOOLS) is None


@pytest.mark.parametrize("family", FAMILIES)
def test_a_family_call_cut_off_is_no_call(family):
    text = FAMILIES[family](CALL_SETS["typed-arguments"])
    assert recover_text_tool_calls(text[: len(text) // 2], TOOLS) is None


@pytest.mark.parametrize(
    "text",
    [
        "[calculator(2 + 3)]",  # a positional argument
        "[calculator(expression=__import__('os').system('true'))]",  # not a literal: never evaluated
        "[calculator(expression='1', expression='2')]",  # a repeated argument
        "[calculator(**{'expression': '1'})]",
        "[calculator(expression={1, 2})]",  # a set is nothing JSON could say
        "[calculator(expression=b'1')]",
        "[calculator(expression=float('nan'))]",
        "[os.system(cmd='true')]",  # an attribute, not an offered name
        "[calculator]",
        "[]",
        "calculator(expression='1')",  # pythonic calls come in a list
        "[calculator(expression='1')] and then I add them",
        "<|python_tag|>brave_search.call(query='weather')",  # a built-in tool, never offered here
        "<|python_tag|>" + _obj("calculator", {}, "parameters") + ";",  # a second call promised, none came
        "[TOOL_CALLS]shell[ARGS]{\"cmd\": \"rm -rf /\"}",
        "[TOOL_CALLS]calculator[ARGS][1, 2]",
        "[TOOL_CALLS]",
        "<function_call>",
        "<|tool_call|>",
        "<|tool_call|>[{\"name\": \"calculator\", \"arguments\": {}}] <|tool_call|>",
        '{"name": "calculator", "arguments": "{\\"expression\\": \\"1\\"} trailing"}',
    ],
)
def test_call_like_text_that_is_no_call(text):
    assert recover_text_tool_calls(text, TOOLS) is None


# Prose answers, many call-like: a model explaining a tool, quoting a call, listing references.
CRAFTED_PROSE = [
    "I can use the calculator for that: calculator(expression='2+2') gives 4.",
    "[1] The calculator tool evaluates arithmetic. [2] The clock tells the time.",
    "[calculator](https://example.org/docs/calculator) explains the syntax.",
    "[See the docs] for http_get(url=...) before calling it.",
    "To call it, write {\"name\": \"calculator\", \"arguments\": {\"expression\": \"1\"}} — but I won't.",
    "<tool_call> is how Qwen marks a call; I answer in prose instead.",
    "[TOOL_CALLS] is Mistral's marker. Here is the answer: 42.",
    "<|python_tag|> precedes Llama's calls. The answer is 7.",
    "Sure! ```json\n{\"name\": \"calculator\", \"arguments\": {}}\n``` is what a call looks like.",
    "```python\n[calculator(expression='1')]\n```",
    "[\"calculator\", \"clock\"] are the tools I have.",
    "[{\"tool\": \"calculator\"}] is not how calls are written.",
    "[x * 2 for x in range(3)]",
    "[print('hello')]",
    "(calculator(expression='1'))",
    "The result is [3, 4] and {\"a\": 1}.",
    "<function_call> tags are used by Granite. Answer: none needed.",
    "<|tool_call|> then prose, not JSON.",
    "42",
    "True",
    "None of the tools apply; the answer is in the question.",
]


def _readme_samples() -> list[str]:
    """Every paragraph of the README and the docs and every line of them, as answers on their own."""
    root = Path(__file__).resolve().parents[2]
    text = "\n\n".join(path.read_text(encoding="utf-8") for path in [root / "README.md", *sorted((root / "docs").glob("*.md"))])
    samples = [*re.split(r"\n\s*\n", text), *text.splitlines()]
    return [sample.strip() for sample in samples if len(sample.strip()) > 20]


def test_no_prose_is_recovered_as_calls():
    """Zero false recoveries: the README's and the docs' paragraphs and lines (prose, tables, code, JSON examples)
    and the crafted call-like answers above, with every tool name offered."""
    corpus = CRAFTED_PROSE + _readme_samples()
    assert len(corpus) >= 900
    recovered = [text for text in corpus if recover_text_tool_calls(text, TOOLS) is not None]
    assert recovered == []

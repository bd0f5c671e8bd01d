"""Offline responders for the assistant contracts.

Rules, not a language model: the request is scanned for sub-tasks — arithmetic expressions
(→ calculator), time/date words (→ clock), resource URIs (→ read_doc), http(s) URLs (→ http_get) —
in the order they appear, and any other offered tool the message names explicitly
(``use notes__word_count on "a b c"``: its first parameter gets the quoted text). None is QA, one is SIMPLE_TOOL, several are COMPLEX with one plan step
each. Tool turns call the first sub-task not yet in ``<observations>``; answers are composed from
the observations only.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage

from policies.loop_guards import call_signature
from policies.memory import keywords
from runtime.offline.framework import OfflineRequest, responder

_URI = re.compile(r"\b(?:docs|demo|project)://[^\s,;'\"<>)\]]+")
_URL = re.compile(r"\bhttps?://[^\s,;'\"<>)\]]+")
_EXPR_RUN = re.compile(r"[-+]?[\d(（][\d\s.+\-*/%^()×÷（）]*[\d)）]")
_OPERATOR_BETWEEN_NUMBERS = re.compile(r"\d\s*[)）]*\s*(?:\*\*|//|[-+*/%^×÷])\s*[(（]*\s*[-+]?\d")
_TIME = re.compile(r"\b(?:time|date|clock|today|timezone|what day)\b|几点|时间|日期|今天", re.I)
_ZONE = re.compile(r"\b(?:[A-Z][a-z]+/[A-Z][A-Za-z_]+(?:/[A-Z][A-Za-z_]+)?|UTC)\b")
_GREETING = re.compile(r"^\s*(?:hi|hello|hey|good (?:morning|afternoon|evening)|你好|您好)\b", re.I)
_HELP = re.compile(r"\b(?:what can you do|help|capabilities|who are you)\b", re.I)
_TRAILING = ".,;:!?)]}'\""
_NAMED_CALL = re.compile(r"\buse\s+([A-Za-z0-9_-]{1,64})\s+on\s+\"([^\"]*)\"", re.I)
_TOOL_LINE = re.compile(r"^- ([A-Za-z0-9_-]{1,64})\(([^)]*)\)", re.M)

PURPOSES = {
    "calculator": "evaluate {}",
    "clock": "get the current date and time",
    "read_doc": "read {}",
    "http_get": "fetch {}",
}


@dataclass(frozen=True)
class SubTask:
    position: int
    tool: str
    args: dict[str, Any]

    @property
    def purpose(self) -> str:
        target = next(iter(self.args.values()), "")
        return PURPOSES.get(self.tool, "call {} as asked").format(target)[:300]


def _balanced(expression: str) -> str:
    """Drop parentheses that do not pair up (a sentence bracket around a sum, e.g. "(2+3")."""
    text = expression.replace("（", "(").replace("）", ")")
    while text.count("(") > text.count(")") and "(" in text:
        text = text.replace("(", "", 1)
    while text.count(")") > text.count("(") and ")" in text:
        text = text[::-1].replace(")", "", 1)[::-1]
    return text.strip()


def _is_arithmetic(candidate: str) -> bool:
    text = candidate.replace("^", "**").replace("×", "*").replace("÷", "/")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError):
        return False
    return isinstance(tree.body, (ast.BinOp, ast.UnaryOp))


def find_subtasks(
    request: str, available: tuple[str, ...] | None = None, parameters: dict[str, tuple[str, ...]] | None = None
) -> list[SubTask]:
    """Sub-tasks of a request in order of appearance (only tools in ``available`` when given);
    ``parameters``: each offered tool's parameters, for calls the request names explicitly."""
    tasks: list[SubTask] = []
    masked = request
    for match in _NAMED_CALL.finditer(request):
        params = (parameters or {}).get(match.group(1))
        if params:  # an offered tool with a parameter to put the quoted text in
            tasks.append(SubTask(match.start(), match.group(1), {params[0]: match.group(2)}))
            masked = masked[: match.start()] + " " * (match.end() - match.start()) + masked[match.end() :]
    for pattern, tool, key in ((_URL, "http_get", "url"), (_URI, "read_doc", "uri")):
        for match in pattern.finditer(request):
            tasks.append(SubTask(match.start(), tool, {key: match.group(0).rstrip(_TRAILING)}))
            masked = masked[: match.start()] + " " * (match.end() - match.start()) + masked[match.end() :]
    for match in _EXPR_RUN.finditer(masked):
        candidate = _balanced(match.group(0))
        if _OPERATOR_BETWEEN_NUMBERS.search(candidate) and _is_arithmetic(candidate):
            tasks.append(SubTask(match.start(), "calculator", {"expression": candidate}))
    time_match = _TIME.search(masked)
    if time_match:
        zone = _ZONE.search(masked)
        args = {"timezone": zone.group(0)} if zone and zone.group(0) != "UTC" else {}
        tasks.append(SubTask(time_match.start(), "clock", args))
    tasks.sort(key=lambda task: task.position)
    if available is not None:
        tasks = [task for task in tasks if task.tool in available]
    return tasks


def _observations(request: OfflineRequest) -> list[dict[str, Any]]:
    records = []
    for line in request.block("observations").splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            records.append(value)
    return records


def _tool_names(request: OfflineRequest) -> tuple[str, ...]:
    names = tuple(_tool_parameters(request))
    return request.tool_names or names


def _tool_parameters(request: OfflineRequest) -> dict[str, tuple[str, ...]]:
    """Each listed tool's parameters, from the tools block (``- name(a, b): …``)."""
    return {name: tuple(p.strip() for p in params.split(",") if p.strip() and p.strip() != "no arguments")
            for name, params in _TOOL_LINE.findall(request.block("tools"))}


def _subtasks(request: OfflineRequest) -> list[SubTask]:
    return find_subtasks(request.block("request"), _tool_names(request) or None, _tool_parameters(request))


# ------------------------------------------------------------------------------------ responders


@responder("assistant.intent")
def classify(request: OfflineRequest) -> dict[str, Any]:
    tasks = _subtasks(request)
    if not tasks:
        return {"intent": "QA", "reason": "no arithmetic, time, document or URL in the request", "plan": None}
    if len(tasks) == 1:
        return {"intent": "SIMPLE_TOOL", "reason": f"one {tasks[0].tool} call answers it", "plan": None}
    steps = [{"id": i, "tool": t.tool, "purpose": t.purpose} for i, t in enumerate(tasks[:10], start=1)]
    return {
        "intent": "COMPLEX",
        "reason": f"{len(steps)} sub-tasks need tools",
        "plan": {"goal": f"answer the request in {len(steps)} tool steps", "steps": steps},
    }


@responder("assistant.step")
def next_step(request: OfflineRequest) -> AIMessage:
    tasks = _subtasks(request)
    if request.block("mode").strip() == "SIMPLE_TOOL":
        tasks = tasks[:1]
    done = [call_signature(str(r.get("tool")), r.get("args") or {}) for r in _observations(request)]
    for task in tasks:
        signature = call_signature(task.tool, task.args)
        if signature in done:
            done.remove(signature)
            continue
        call = {"name": task.tool, "args": task.args, "id": f"call_{len(_observations(request)) + 1}", "type": "tool_call"}
        return AIMessage(content="", tool_calls=[call])
    return AIMessage(content="Every sub-task of the request has an observation.")


def _describe(record: dict[str, Any]) -> str:
    tool, args, output = record.get("tool"), record.get("args") or {}, str(record.get("output", ""))
    if not record.get("ok"):
        return f"{tool} could not help: {output}"
    single_line = " ".join(output.split())
    if tool == "calculator":
        return f"{args.get('expression', '')} = {output}."
    if tool == "clock":
        return f"The current time is {output}."
    if tool == "read_doc":
        return f"{args.get('uri', 'The document')} begins: “{single_line[:300]}”"
    if tool == "http_get":
        return f"{args.get('url', 'The page')} returned: “{single_line[:300]}”"
    return f"{tool} returned {single_line[:200]}"


@responder("assistant.answer")
def answer(request: OfflineRequest) -> dict[str, Any]:
    records = _observations(request)
    if records:
        ok = [r for r in records if r.get("ok")]
        verdict = "success" if len(ok) == len(records) else ("partial" if ok else "failure")
        return {"summary": " ".join(_describe(r) for r in records)[:2000], "evidence": [], "verdict": verdict}
    text = request.block("request")
    if _GREETING.search(text) or _HELP.search(text):
        summary = (
            "Hello! I am Reins' offline assistant, a rule-based stand-in rather than a language model. I can "
            "calculate, tell the time, read docs:// resources and fetch allow-listed web pages; /help lists "
            "the pipeline commands."
        )
        return {"summary": summary, "evidence": [], "verdict": "success"}
    recollections = [line[2:] for line in request.block("recollections").splitlines() if line.startswith("- ")]
    summary = (
        "I am Reins' offline rule-based stand-in, so I answer only what the tools can establish: arithmetic, "
        "the current time, docs:// resources and allow-listed web pages. Configure REINS_MODEL for open questions."
    )
    if recollections:
        summary += f" From an earlier task: {recollections[0][:300]}"
    return {"summary": summary, "evidence": [], "verdict": "partial"}


@responder("assistant.reflection")
def reflection(request: OfflineRequest) -> dict[str, Any]:
    records = _observations(request)
    ok = [r for r in records if r.get("ok")]
    failed = [r for r in records if not r.get("ok")]
    sequence = " then ".join(dict.fromkeys(str(r.get("tool")) for r in records)) or "no tool"
    text = " ".join(request.block("request").split())
    return {
        "went_well": f"{len(ok)} of {len(records)} tool call(s) succeeded"[:300],
        "went_wrong": ("; ".join(f"{r.get('tool')}: {r.get('output')}" for r in failed) or "nothing")[:300],
        "next_time": f"For a request like \"{text[:120]}\", use {sequence}."[:300],
        "keywords": list(dict.fromkeys(k[:40] for k in keywords(text, 8))) or ["task"],
    }

"""Offline responders for the assistant contracts.

Rules, not a language model: the request is scanned for sub-tasks — arithmetic expressions
(→ calculator), time/date words (→ clock), resource URIs (→ read_doc), http(s) URLs (→ http_get) —
in the order they appear, and any other offered tool the message names explicitly
(``use notes__word_count on "a b c"``, ``use notes__tag with note="x" tag=work``: every required
parameter filled from the message and typed from the tool's schema, ``reins.runtime.standins.offline.tool_args``;
when they cannot all be filled the answer says which form works). A tool that takes no arguments is
called when the message names it (``use notes__tally``) or says what its name says (``current_time``
for "what time is it": every word of the name after its server's prefix, filler such as "get" or
"current" aside, as skills are found). None is QA, one is SIMPLE_TOOL, several are COMPLEX with one plan step
each. Tool turns call the first sub-task not yet observed; answers are composed from the
observations only. Every input is read from the call's structured inputs (its metadata,
``OfflineRequest.inputs``), never from the prompt's prose; answers are cut to their schema's bounds.

Skills: an offered skill whose name's words all appear in the request ("%" counts
as "percent") is loaded first (``load_skill``), then every file its instructions name
(``read_skill_file``). The stand-in knows the bundled skills' rules and follows them only once
their instructions are observed: ``percent`` turns "X% of Y" into the calculator's ``Y*X/100``;
a ``City: Zone`` table read from a skill gives the clock the zone of a city the request names. A
user's skill is followed when its instructions use the forms ``reins.runtime.standins.offline.skill_rules`` reads
(a reply template, a start or an end, the answer's case); otherwise the answer names those forms.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage

from reins.policies.tools.loop_guards import call_signature
from reins.policies.assistant.memory import keywords
from reins.runtime.standins.offline.bounds import limit
from reins.runtime.standins.offline.framework import OfflineRequest, responder
from reins.runtime.standins.offline.skill_rules import not_followed, read_rules, subject
from reins.runtime.standins.offline.tool_args import NAMED_CALL, fill_arguments, usage
from reins.schemas.assistant import AssistantAnswer, AssistantIntent, AssistantReflection, AssistantReplan, AssistantSummary
from reins.schemas.skills import SkillDraft

_URI = re.compile(r"\b(?:docs|demo|project)://[^\s,;'\"<>)\]]+")
_URL = re.compile(r"\bhttps?://[^\s,;'\"<>)\]]+")
_EXPR_RUN = re.compile(r"[-+]?[\d(（][\d\s.+\-*/%^()×÷（）]*[\d)）]")
_OPERATOR_BETWEEN_NUMBERS = re.compile(r"\d\s*[)）]*\s*(?:\*\*|//|[-+*/%^×÷])\s*[(（]*\s*[-+]?\d")
_TIME = re.compile(r"\b(?:time|date|clock|today|timezone|what day)\b|几点|时间|日期|今天", re.I)
_ZONE = re.compile(r"\b(?:[A-Z][a-z]+/[A-Z][A-Za-z_]+(?:/[A-Z][A-Za-z_]+)?|UTC)\b")
_GREETING = re.compile(r"^\s*(?:hi|hello|hey|good (?:morning|afternoon|evening)|你好|您好)\b", re.I)
_HELP = re.compile(r"\b(?:what can you do|help|capabilities|who are you)\b", re.I)
_TRAILING = ".,;:!?)]}'\""
_REMEMBER = re.compile(r"^\s*(?:please\s+)?remember(?:\s+that)?\s+(.+?)\s*[.!]?\s*$", re.I | re.S)
_FORGET = re.compile(r"^\s*(?:please\s+)?forget(?:\s+(?:that|about))?\s+(.+?)\s*[.!]?\s*$", re.I | re.S)
_PERCENT_OF = re.compile(r"(\d+(?:\.\d+)?)\s*(?:%|percent)\s+of\s+(\d+(?:\.\d+)?)", re.I)
_ZONE_ROW = re.compile(r"^-\s*([^:\n]{2,40}):\s*([A-Za-z_]+/[A-Za-z_/]+)\s*$", re.M)
_NAMED_FILES = re.compile(r"Files it names \(read_skill_file\): (.+)$", re.M)
_NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
# Words of a tool's name that say nothing about what it gives ("get_current_time" gives the time).
_NAME_FILLER = frozenset({"get", "current", "now", "show", "list", "fetch", "read", "the", "my"})

PURPOSES = {
    "calculator": "evaluate {}",
    "clock": "get the current date and time",
    "read_doc": "read {}",
    "http_get": "fetch {}",
    "load_skill": "load the {} skill",
    "read_skill_file": "read the skill file of {}",
    "remember": "remember: {}",
    "forget": "forget: {}",
}


@dataclass(frozen=True)
class SubTask:
    position: int
    tool: str
    args: dict[str, Any]

    @property
    def purpose(self) -> str:
        target = next(iter(self.args.values()), "")
        purpose = PURPOSES.get(self.tool, "call {} as asked" if self.args else "call {}").format(target or self.tool)
        return purpose[: limit(AssistantIntent, "plan", "steps", "purpose")]


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
    request: str, available: tuple[str, ...] | None = None, parameters: dict[str, Any] | None = None
) -> list[SubTask]:
    """Sub-tasks of a request in order of appearance (only tools in ``available`` when given);
    ``parameters``: each offered tool's parameters, for calls the request names explicitly."""
    tasks: list[SubTask] = []
    masked = request
    for match in NAMED_CALL.finditer(request):
        tool = (parameters or {}).get(match.group(1))
        # an offered tool whose required parameters the message fills; one without any takes nothing
        # from the rest of the line
        args = (fill_arguments(match.group(2), *tool) if tool[0] else {}) if tool else None
        if args is not None:
            tasks.append(SubTask(match.start(), match.group(1), args))
            end = match.end() if tool[0] else match.end(1)
            masked = masked[: match.start()] + " " * (end - match.start()) + masked[end:]
    for pattern, tool, key in ((_URL, "http_get", "url"), (_URI, "read_doc", "uri")):
        for match in pattern.finditer(request):
            tasks.append(SubTask(match.start(), tool, {key: match.group(0).rstrip(_TRAILING)}))
            masked = masked[: match.start()] + " " * (match.end() - match.start()) + masked[match.end() :]
    for name, (params, _, _) in (parameters or {}).items():
        position = None if params or any(t.tool == name for t in tasks) else _named_by_words(masked, name)
        if position is not None:  # a tool without arguments that says what the request asks for
            tasks.append(SubTask(position, name, {}))
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


def _named_by_words(text: str, tool: str) -> int | None:
    """Where ``text`` first says every word of ``tool``'s name (its server's prefix and filler aside);
    None when it does not."""
    words = [w.lower() for w in _NAME_WORD.findall(tool.split("__")[-1]) if w.lower() not in _NAME_FILLER]
    found = [re.search(rf"\b{re.escape(word)}\b", text, re.I) for word in words]
    if not words or not all(found):
        return None
    return min(m.start() for m in found if m)


def _observations(request: OfflineRequest) -> list[dict[str, Any]]:
    return [record for record in request.inputs.get("observations") or [] if isinstance(record, dict)]


def _tool_names(request: OfflineRequest) -> tuple[str, ...]:
    names = tuple(_tool_parameters(request))
    return request.tool_names or names


ToolShape = tuple[tuple[str, ...], tuple[str, ...], dict[str, str]]  # parameters, required ones, types


def _tool_parameters(request: OfflineRequest) -> dict[str, ToolShape]:
    """Each offered tool's parameters, its required ones and their types."""
    tools = request.inputs.get("tools") or []
    return {tool["name"]: (tuple(p.strip() for p in tool["parameters"] if p.strip()),
                           tuple(tool.get("required") or ()), dict(tool.get("types") or {})) for tool in tools}


def unfilled_call(request: OfflineRequest) -> str:
    """For a message naming an offered tool whose required parameters it does not fill: the form
    that works ("" otherwise)."""
    tools = _tool_parameters(request)
    for match in NAMED_CALL.finditer(request.inputs.get("request", "")):
        tool = tools.get(match.group(1))
        if tool and tool[0] and fill_arguments(match.group(2), *tool) is None:
            return (f"I could not fill every required parameter of {match.group(1)} from the message; "
                    f"the offline stand-in calls it when you write: {usage(match.group(1), *tool)}")
    return ""


def _skill_names(request: OfflineRequest) -> list[str]:
    lines = request.inputs.get("skills") or []  # "<name>: <description>" each
    found = (re.match(r"([a-z0-9]+(?:-[a-z0-9]+)*): ", line) for line in lines)
    return [match.group(1) for match in found if match]


def _wanted_skills(text: str, names: list[str]) -> list[str]:
    words = set(re.findall(r"[a-z0-9]+", text.lower().replace("%", " percent ")))
    return [name for name in names if all(part in words for part in name.split("-"))]


def _observed(records: list[dict[str, Any]], tool: str, **args: Any) -> list[str]:
    return [str(r.get("output", "")) for r in records
            if r.get("ok") and r.get("tool") == tool and all((r.get("args") or {}).get(k) == v for k, v in args.items())]


def _skill_tasks(text: str, names: list[str], records: list[dict[str, Any]]) -> list[SubTask]:
    """Load each wanted skill, read the files it names, and apply the rules it taught (once loaded)."""
    tasks: list[SubTask] = []
    for name in _wanted_skills(text, names):
        tasks.append(SubTask(-3, "load_skill", {"name": name}))
        for instructions in _observed(records, "load_skill", name=name)[:1]:
            files = _NAMED_FILES.search(instructions)
            for path in (files.group(1).split(", ") if files else []):
                tasks.append(SubTask(-2, "read_skill_file", {"name": name, "path": path.strip()}))
        if name == "percent":  # the bundled percent skill's rule; known here, used only when planned
            for match in _PERCENT_OF.finditer(text):
                tasks.append(SubTask(match.start(), "calculator", {"expression": f"{match[2]}*{match[1]}/100"}))
    return tasks


def _with_zone_tables(tasks: list[SubTask], text: str, records: list[dict[str, Any]]) -> list[SubTask]:
    """A clock call for a city named in the request gets its zone from a skill file's table."""
    zones = {city.strip().lower(): zone for output in _observed(records, "read_skill_file")
             for city, zone in _ZONE_ROW.findall(output)}
    city = next((zone for name, zone in zones.items() if re.search(rf"\b{re.escape(name)}\b", text.lower())), None)
    if city is None:
        return tasks
    return [SubTask(t.position, t.tool, {"timezone": city}) if t.tool == "clock" else t for t in tasks]


def plan_tasks(request: OfflineRequest) -> list[SubTask]:
    """Every sub-task of the request as far as the observations tell (skills first)."""
    text = request.inputs.get("request", "")
    available = _tool_names(request) or None
    records = _observations(request)
    for pattern, tool, key in ((_REMEMBER, "remember", "text"), (_FORGET, "forget", "about")):
        match = pattern.match(text)
        if match and (available is None or tool in available):  # the whole request is the note
            return [SubTask(0, tool, {key: match.group(1)[:300]})]
    tasks = [*_skill_tasks(text, _skill_names(request), records), *find_subtasks(text, available, _tool_parameters(request))]
    tasks = _with_zone_tables(sorted(tasks, key=lambda task: task.position), text, records)
    return [task for task in tasks if available is None or task.tool in available]


# ------------------------------------------------------------------------------------ responders


@responder("assistant.intent")
def classify(request: OfflineRequest) -> dict[str, Any]:
    tasks = plan_tasks(request)
    if not tasks:
        return {"intent": "QA", "reason": "no arithmetic, time, document or URL in the request", "plan": None}
    if len(tasks) == 1:
        return {"intent": "SIMPLE_TOOL", "reason": f"one {tasks[0].tool} call answers it", "plan": None}
    steps = [{"id": i, "tool": t.tool, "purpose": t.purpose}
             for i, t in enumerate(tasks[: limit(AssistantIntent, "plan", "steps")], start=1)]
    return {
        "intent": "COMPLEX",
        "reason": f"{len(steps)} sub-tasks need tools",
        "plan": {"goal": f"answer the request in {len(steps)} tool steps", "steps": steps},
    }


@responder("assistant.step")
def next_step(request: OfflineRequest) -> AIMessage:
    tasks = plan_tasks(request)
    if request.inputs.get("mode", "").strip() == "SIMPLE_TOOL":
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


# How the stand-in words each successful run: (arguments, output, output on one line) → text.
_DESCRIPTIONS = {
    "calculator": lambda args, output, line: f"{args.get('expression', '')} = {output}.",
    "clock": lambda args, output, line: f"The current time is {output}.",
    "read_doc": lambda args, output, line: f"{args.get('uri', 'The document')} begins: “{line[:300]}”",
    "http_get": lambda args, output, line: f"{args.get('url', 'The page')} returned: “{line[:300]}”",
    "remember": lambda args, output, line: f"I will remember that: {args.get('text', '')}",
    "forget": lambda args, output, line: f"Done: I {output}",
    "load_skill": lambda args, output, line: f"(Following the {args.get('name', '')} skill.)",
    "read_skill_file": lambda args, output, line: "",
}


def _describe(record: dict[str, Any]) -> str:
    tool, args, output = record.get("tool"), record.get("args") or {}, str(record.get("output", ""))
    if not record.get("ok"):
        return f"{tool} could not help: {output}"
    single_line = " ".join(output.split())
    describe = _DESCRIPTIONS.get(str(tool))
    if describe:
        return describe(args, output, single_line)
    said = single_line[:200]  # a sentence of its own: the answer check reads each sentence's claims apart
    return f"{tool} returned {said}" if said.endswith((".", "!", "?")) else f"{tool} returned {said}."


BUNDLED_SKILLS = ("percent", "world-clock")  # their rules are known here (above); a user's skill is read


def _followed_skills(text: str, records: list[dict[str, Any]]) -> tuple[str, str] | None:
    """For a turn that loaded a user's skill: (the answer with its instructions applied, the verdict it
    allows), or (the forms that work, partial) when its instructions are in none of them."""
    loaded = [(str(r["args"]["name"]), str(r.get("output", ""))) for r in records
              if r.get("ok") and r.get("tool") == "load_skill" and (r.get("args") or {}).get("name")
              and r["args"]["name"] not in BUNDLED_SKILLS]
    if not loaded:
        return None
    tool_records = [r for r in records if r.get("tool") not in ("load_skill", "read_skill_file")]
    reply = " ".join(filter(None, (_describe(r) for r in tool_records))) or subject(text, loaded[0][0])
    for name, observed in loaded:
        rules = read_rules(name, observed)
        if not rules.understood:
            return not_followed(name), "partial"
        reply = rules.apply(reply)
    return reply, "success"


@responder("assistant.answer")
def answer(request: OfflineRequest) -> dict[str, Any]:
    records = _observations(request)
    if records:
        ok = [r for r in records if r.get("ok")]
        verdict = "success" if len(ok) == len(records) else ("partial" if ok else "failure")
        summary = " ".join(filter(None, (_describe(r) for r in records)))
        if followed := _followed_skills(request.inputs.get("request", ""), records):
            summary = followed[0]
            verdict = "partial" if verdict == "success" and followed[1] == "partial" else verdict
        return {"summary": summary[: limit(AssistantAnswer, "summary")], "evidence": [], "verdict": verdict}
    text = request.inputs.get("request", "")
    if _GREETING.search(text) or _HELP.search(text):
        summary = (
            "Hello! I am Reins' offline assistant, a rule-based stand-in rather than a language model. I can "
            "calculate, tell the time, read docs:// resources and fetch allow-listed web pages; /help lists "
            "the pipeline commands."
        )
        return {"summary": summary, "evidence": [], "verdict": "success"}
    recollections = list(request.inputs.get("recollections") or [])
    told = [note for note in recollections if note.startswith("You told me: ")]
    if told:  # what the user asked to remember answers the question
        return {"summary": f"{told[0][:600]}", "evidence": [], "verdict": "success"}
    if form := unfilled_call(request):
        return {"summary": form[: limit(AssistantAnswer, "summary")], "evidence": [], "verdict": "partial"}
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
    text = " ".join(request.inputs.get("request", "").split())
    def bound(field: str) -> int:
        return limit(AssistantReflection, field)

    return {
        "went_well": f"{len(ok)} of {len(records)} tool call(s) succeeded"[: bound("went_well")],
        "went_wrong": ("; ".join(f"{r.get('tool')}: {r.get('output')}" for r in failed) or "nothing")[
            : bound("went_wrong")],
        "next_time": f"For a request like \"{text[:120]}\", use {sequence}."[: bound("next_time")],
        "keywords": list(dict.fromkeys(k[: limit(AssistantReflection, "keywords", "[]")]
                                       for k in keywords(text, bound("keywords")))) or ["task"],
    }


@responder("assistant.replan")
def replan(request: OfflineRequest) -> dict[str, Any]:
    """The steps still to do after the failing one, in order (the failing step once more if none is left)."""
    plan = request.inputs.get("plan") or {}
    failing_id = request.inputs.get("failed_step")
    done = {r.get("step") for r in _observations(request) if r.get("ok")}
    steps = plan.get("steps") or []
    left = [s for s in steps if s.get("id") not in done and s.get("id") != failing_id and s.get("id") not in (plan.get("skipped") or [])]
    if not left:
        left = [s for s in steps if s.get("id") == failing_id][:1]
    purpose = limit(AssistantReplan, "plan", "steps", "purpose")
    renumbered = [{"id": i, "tool": s["tool"], "purpose": str(s.get("purpose", ""))[:purpose] or "continue"}
                  for i, s in enumerate(left[: limit(AssistantReplan, "plan", "steps")], start=1)]
    if not renumbered:
        renumbered = [{"id": 1, "tool": "clock", "purpose": "nothing left to replan"}]
    goal = str(plan.get("goal") or "the request")[: limit(AssistantReplan, "plan", "goal")]
    return {"reason": "go on with the steps that have not failed", "plan": {"goal": goal, "steps": renumbered}}


@responder("assistant.summary")
def rolling_summary(request: OfflineRequest) -> dict[str, Any]:
    """The previous summary plus one line per dropped message, keeping the most recent characters the
    schema admits."""
    dropped = [f"{turn['role']}: {turn['text']}" for turn in request.inputs.get("conversation") or []]
    pieces = [request.inputs.get("summary", "").strip(), *(" ".join(line.split())[:160] for line in dropped)]
    text = " | ".join(piece for piece in pieces if piece)
    most = limit(AssistantSummary, "summary")
    if len(text) > most:
        text = "…" + text[-(most - 1):]
    return {"summary": text or "(nothing to keep)"}


@responder("assistant.skill_draft")
def skill_draft(request: OfflineRequest) -> dict[str, Any]:
    """A skill named after the topic whose instructions are the lessons learnt."""
    topic = re.findall(r"[a-z0-9]+", " ".join(request.inputs.get("topic") or []).lower())[:4] or ["learnt"]
    lessons = list(request.inputs.get("lessons") or [])
    steps = "\n".join(f"{i}. {lesson}" for i, lesson in enumerate(dict.fromkeys(lessons), start=1)) or "1. Plan the tool steps first."
    return {
        "name": "-".join(topic)[: limit(SkillDraft, "name")].strip("-") or "learnt",
        "description": f"Requests about {', '.join(topic)}: the steps that worked before."[
            : limit(SkillDraft, "description")],
        "instructions": f"Steps that worked for requests about {', '.join(topic)}:\n{steps}"[
            : limit(SkillDraft, "instructions")],
    }

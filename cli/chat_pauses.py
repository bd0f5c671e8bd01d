"""The assistant's pauses in the terminal: a side-effecting tool call waiting for approval, a
question from ``ask_user``, or a skill draft offered for approval. ``reins chat`` asks them; ``reins chat --once`` and ``reins resume``
print how to answer later (``reins resume <thread> --decision '<json>'``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from typing import Any

from reins.policies.text.redaction import redact
from reins.policies.text.terminal_text import printable



def pending(graph: Any, thread: str) -> list[Mapping[str, Any]]:
    """The assistant's open pauses on ``thread``: approvals, questions, and approved calls that may
    already have run (dispatched, no result recorded)."""
    from reins.nodes.assistant.approval import open_pauses

    return open_pauses(graph, {"configurable": {"thread_id": thread}})


def check(graph_tools: Any, payload: Mapping[str, Any], value: Any) -> str:
    if payload.get("kind") == "skill_draft":
        from reins.policies.assistant.skill_drafts import check_draft_decision

        return check_draft_decision(value).error or ""
    from reins.nodes.assistant.approval import resume_problem

    return resume_problem(payload, value, graph_tools)


def describe(payload: Mapping[str, Any]) -> str:
    """The pause as one or two lines a person reads (redacted, and printable: the question and the
    arguments are model-written, so no escape sequence reaches the terminal)."""
    return printable(_described(payload))


def _described(payload: Mapping[str, Any]) -> str:
    error = f"\n  ({redact(payload['error'], 200)})" if payload.get("error") else ""
    if payload.get("kind") == "question":
        options = payload.get("options") or []
        listed = "".join(f"\n  {i}. {redact(option, 120)}" for i, option in enumerate(options, start=1))
        return f"The assistant asks: {redact(payload.get('question', ''), 500)}{listed}{error}"
    if payload.get("kind") == "skill_draft":
        draft = payload.get("draft") or {}
        return (f"The assistant offers a skill from your recent tasks: {redact(draft.get('name', ''), 80)} — "
                f"{redact(draft.get('description', ''), 300)}\n  {redact(draft.get('instructions', ''), 1200)}{error}")
    args = redact(json.dumps(payload.get("args", {}), ensure_ascii=False), 600)
    call = f"[call {payload.get('fingerprint', '')}]"
    if payload.get("kind") == "running":  # nothing to decide: where it runs, and to wait
        return f"{redact(str(payload.get('status', '')), 400)} {call}."
    if payload.get("kind") == "possibly_ran":
        when = payload.get("dispatched_at") or "an unknown time"
        why = redact(str(payload.get("why") or "its result was not recorded"), 200)
        return (f"{payload.get('tool')} with {args} was dispatched at {when} "
                f"and may already have run ({why}) {call}. Run it again, mark it done, "
                f"or skip it?{error}")
    kind = "it only reads" if payload.get("read_only") else "it changes something"
    return f"The assistant wants to run {payload.get('tool')} with {args} ({kind}) {call}.{_sources(payload)}{error}"


def _sources(payload: Mapping[str, Any]) -> str:
    """Why the call pauses and where each of its sink values came from (argument, label — yours,
    tainted, unknown origin — source, excerpt)."""
    from reins.policies.tools.data_flow import THE_CALL  # here: the data-flow rules load a stemmer and schemas

    lines = [f"\n  It asks because {redact(str(reason), 300)}." for reason in payload.get("pause_reasons") or []]
    for origin in payload.get("provenance") or []:
        if not isinstance(origin, Mapping):
            continue
        label = f" [{redact(str(origin['label']), 40)}]" if origin.get("label") and origin.get("argument") != THE_CALL else ""
        line = (f"\n  - {origin.get('argument')} = {redact(str(origin.get('value', '')), 80)!r}{label} "
                f"comes from {origin.get('source')}")
        if origin.get("excerpt"):
            line += f': "{redact(str(origin["excerpt"]), 160)}"'
        lines.append(line)
    return "".join(lines)


def hint(thread: str, payload: Mapping[str, Any]) -> str:
    """How to answer later; an approval's example carries its fingerprint, so it answers this call only."""
    kind = payload.get("kind")
    if kind == "question":
        return f"resume with: reins resume {thread} --decision '\"<your answer>\"'"
    if kind == "running":
        return f"see where it stands with: reins resume {thread}"
    decision = {"type": "mark_done" if kind == "possibly_ran" else "approve"}
    if payload.get("fingerprint"):
        decision["fingerprint"] = str(payload["fingerprint"])
    more = " (or run_again, skip)" if kind == "possibly_ran" else ""
    return f"resume with: reins resume {thread} --decision '{json.dumps(decision)}'{more}"


_RECOVERY_WORDS = {"r": "run_again", "run": "run_again", "m": "mark_done", "mark": "mark_done",
                   "s": "skip", "skip": "skip"}


def _decision(line: str, payload: Mapping[str, Any], ask: Callable[[str], str]) -> Any:
    """A typed answer to an approval: y / a (yes, and allow the tool for the rest of the chat; the
    data-flow rules still pause) / n <reason> / e (the arguments, or the skill draft, in
    ``$VISUAL`` / ``$EDITOR``) / e <json> / a JSON decision; to a call that may have run: r(un
    again) / m(ark done) / s(kip). None when input ends in the editor."""
    from reins.cli.tasklist import edit_json

    kind = str(payload.get("kind"))
    text = line.strip()
    word, _, rest = text.partition(" ")
    if text.startswith("{"):
        return json.loads(text)
    if kind == "possibly_ran":
        return {"type": _RECOVERY_WORDS.get(word.lower(), text)}
    if word.lower() in ("y", "yes", "approve"):
        return {"type": "approve"}
    if word.lower() in ("a", "allow") and kind == "tool_approval":  # this tool, for the rest of the chat
        return {"type": "approve", "scope": "thread"}
    if word.lower() in ("n", "no", "reject"):
        return {"type": "reject", "reason": rest.strip() or "declined in the terminal"}
    if word.lower() in ("e", "edit"):
        field, what = ("draft", "skill draft") if payload.get("kind") == "skill_draft" else ("args", "arguments")
        edited = rest if rest.strip() else edit_json(payload.get(field) or {}, ask, what)
        return None if edited is None else {"type": "edit", field: json.loads(edited)}
    return {"type": text}


def ask_pause(payload: Mapping[str, Any], ask: Callable[[str], str]) -> Any:
    """Ask one pause in the terminal; None when input ends (or when the call runs elsewhere now:
    there is nothing to ask until it ends)."""
    from reins.cli.render import say

    say(describe(payload), sys.stderr)
    if payload.get("kind") == "running":
        return None
    prompt = {"question": "answer> ", "possibly_ran": "[r]un again / [m]ark done / [s]kip: ",
              "skill_draft": "keep this skill? [y]es / [n]o <reason> / [e]dit: "}.get(
        str(payload.get("kind")), "approve? [y]es / [a]llow in this chat / [n]o <reason> / [e]dit: ")
    while True:
        try:
            line = ask(prompt)
        except EOFError:
            return None
        if payload.get("kind") == "question":
            return line.strip()
        try:
            return _decision(line, payload, ask)
        except ValueError:
            sys.stderr.write("reins: that is not valid JSON\n")

"""Memory a user steers: ``remember`` and ``forget`` (scope ``chat``) on the user's own notes in the
LangGraph store (``reins.policies.assistant.memory.user_namespace``: shared by the user's threads; recalled in a
turn whose ``memory_scope`` is ``user``).

Neither is read-only. ``remember`` runs without approval (approval ``run``): it writes only the user's own
memory. ``forget`` deletes, so it pauses for approval like any side effect, and the notes it
deleted are named in its result and in the trace (``trace_result``).
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

from pydantic import BaseModel, ConfigDict, Field

from reins.policies.assistant.memory import MAX_RECOLLECTIONS, keywords, merge_recall, rank_recollections, user_namespace
from reins.policies.text.redaction import redact, truncate
from reins.runtime.tools.chat_tools import CHAT_SCOPE, ToolFailure
from reins.runtime.tools.registry import RegisteredTool
from reins.runtime.tools.registry import ToolRegistry
from reins.runtime.tools.run_scope import RunScope, current_run
from reins.schemas.assistant import MemoryNote

MAX_NOTES_SCANNED = 200
MAX_NOTE_KEYWORDS = 16


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class RememberArgs(_Args):
    text: str = Field(min_length=1, max_length=600, description="The fact to keep, in the user's words")


class ForgetArgs(_Args):
    about: str = Field(min_length=1, max_length=300, description="What the notes to delete are about")


def _store(run: RunScope):
    if run.store is None:
        raise ToolFailure("memory is not available in this run (no store)")
    return run.store


def remember(text: str) -> str:
    run = current_run()
    clean = redact(" ".join(text.split()), 600)  # a secret typed into a note is not kept
    note = MemoryNote(
        text=clean,
        keywords=[word[:40] for word in keywords(clean, MAX_NOTE_KEYWORDS)],
        kind="remembered",
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    _store(run).put(user_namespace(run.setting("user_id")), uuid.uuid4().hex, note.model_dump())
    return f"remembered: {note.text}"


def forget(about: str) -> str:
    run = current_run()
    store = _store(run)
    namespace = user_namespace(run.setting("user_id"))
    listed = {item.key: item for item in store.search(namespace, limit=MAX_NOTES_SCANNED)}
    close = store.search(namespace, query=about, limit=MAX_RECOLLECTIONS)
    notes = [{"key": key, **item.value} for key, item in sorted(listed.items(), key=lambda kv: kv[1].created_at)]
    ranked = [str(note["key"]) for note in rank_recollections(about, notes)]
    chosen = merge_recall([(item.key, getattr(item, "score", None)) for item in close], ranked)
    if not chosen:
        raise ToolFailure("forget: no note matches that")
    texts = []
    for key in chosen:
        texts.append(truncate(str((listed[key].value if key in listed else {}).get("text", "")), 120))
        store.delete(namespace, key)
    return f"forgot {len(chosen)} note(s): " + "; ".join(f"“{text}”" for text in texts)


def register(registry: ToolRegistry) -> None:
    scopes = frozenset({CHAT_SCOPE})
    # remember writes only the user's own notes: it runs without approval (not read-only);
    # forget deletes, so it asks first like any side effect.
    registry.register(RegisteredTool(
        name="remember",
        description="Keep a fact the user asks you to remember (argument text, in their words) in their "
        "long-term notes, shared by their conversations.",
        args_schema=RememberArgs, scopes=scopes, func=remember, approval="run",
        aliases=("remember", "noted", "i will remember", "记住"),
        help="remember    keeps a note in your long-term memory",
        sinks=("text",), actions=("remember", "note", "keep", "记住"),  # a note from a page would persist it
    ))
    registry.register(RegisteredTool(
        name="forget",
        description="Delete the user's long-term notes about something (argument about); returns what was "
        "deleted.",
        args_schema=ForgetArgs, scopes=scopes, func=forget, trace_result=True,
        aliases=("forget", "forgot", "deleted the note", "忘记"),
        help="forget      deletes your notes about something (the trace names what)",
        sinks=("about",), actions=("forget", "delete", "remove", "忘记"),
    ))

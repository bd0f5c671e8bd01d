"""Memory a user steers: ``remember`` and ``forget`` (scope ``chat``) on the user's own notes in the
LangGraph store (``policies.memory.user_namespace``: shared by the user's threads; recalled in a
turn whose ``memory_scope`` is ``user``).

Neither is read-only. ``remember`` needs no approval: it writes only the user's own memory.
``forget`` deletes, so the notes it deleted are named in its result and in the trace
(``trace_result``).
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

from pydantic import BaseModel, ConfigDict, Field

from policies.memory import MAX_RECOLLECTIONS, keywords, merge_recall, rank_recollections, user_namespace
from policies.redaction import redact, truncate
from runtime.chat_tools import ToolFailure, register_chat_tools
from runtime.registry import ToolRegistry
from runtime.run_scope import RunScope, current_run
from schemas.assistant import MemoryNote

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


remember.read_only = False  # type: ignore[attr-defined]
remember.needs_approval = False  # type: ignore[attr-defined]  # the user's own memory only
forget.read_only = False  # type: ignore[attr-defined]
forget.trace_result = True  # type: ignore[attr-defined]  # the trace names what was deleted


def register(registry: ToolRegistry) -> None:
    register_chat_tools(
        registry,
        ("remember", "Keep a fact the user asks you to remember (argument text, in their words) in their "
         "long-term notes, shared by their conversations.", RememberArgs, remember),
        ("forget", "Delete the user's long-term notes about something (argument about); returns what was "
         "deleted.", ForgetArgs, forget),
    )

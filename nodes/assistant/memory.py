"""Memory nodes: the turn starts with the short-term window and the recollections, and a COMPLEX
task ends with a reflection note in the long-term store."""

from __future__ import annotations

from reins.policies.audit.guard_coverage import declare

import uuid
from collections.abc import Generator, Iterable
from datetime import datetime, timezone
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, RemoveMessage
from langgraph.runtime import Runtime
from pydantic import ValidationError

from reins.nodes.assistant.context import AssistantContext
from reins.nodes.assistant.data_flow import replied_after_untrusted
from reins.nodes.assistant.deps import AssistantDeps, progress_for, thread_id_of
from reins.nodes.assistant.identity import identity_of
from reins.nodes.assistant.prompts import reflection_messages
from reins.nodes.assistant.skills import skills_index
from reins.nodes.assistant.summary import fold_dropped
from reins.nodes.assistant.state import AssistantState, NodeSteps, Turn, Update, fresh_turn, traced
from reins.policies.assistant.memory import (  # noqa: F401 - MEMORY_ROOT is where tests look
    MAX_KEYWORDS,
    MAX_RECOLLECTIONS,
    MEMORY_ROOT,
    check_lesson,
    cut_message,
    keywords,
    merge_recall,
    notes_namespace,
    rank_recollections,
    window_start,
)
from reins.policies.text.redaction import redact, was_redacted
from reins.policies.assistant.skill_drafts import topic_of
from reins.policies.assistant.slash_commands import parse_slash
from reins.policies.models.vision import NO_VISION_MODEL, image_blocks, image_route, text_blocks
from reins.runtime.execution.calls import Contract, OffLoop, StorePut, StoreSearch
from reins.runtime.llm.messages import message_text
from reins.runtime.config.persona import context_persona, persona_file
from reins.runtime.config.settings import VISION_ROLE
from reins.runtime.execution.steps import attempt, recorded_step
from reins.schemas.assistant import AssistantReflection, MemoryNote

MAX_NOTES_SCANNED = 200


def _role(message: AnyMessage) -> str:
    if isinstance(message, HumanMessage):
        return "user"
    if isinstance(message, AIMessage):
        return "assistant"
    return message.type


def _turn(message: AnyMessage) -> Turn:
    turn: Turn = {"role": _role(message), "text": cut_message(_text(message))}
    if replied_after_untrusted(message):
        turn["after_untrusted"] = True
    return turn


def _text(message: AnyMessage) -> str:
    return message_text(message, " ")


def memory_namespace(context: AssistantContext | None, thread_id: str | None) -> tuple[str, ...]:
    """Notes live per user and, by default, are shared by the user's threads; ``memory_scope="thread"``
    keeps them to one thread. Another user's notes are never in reach."""
    return notes_namespace(getattr(context, "user_id", None), getattr(context, "memory_scope", None), thread_id)


def _stored_notes(items: Iterable[Any]) -> list[dict[str, Any]]:
    notes = []
    for item in sorted(items, key=lambda i: i.created_at):
        try:  # a note that no longer satisfies the schema is ignored, not trusted
            notes.append(MemoryNote.model_validate(item.value).model_dump())
        except ValidationError:
            continue
    return notes


def recollection(note: dict[str, Any]) -> str:
    """How a note reads in the prompt: what the user asked to remember is marked as theirs."""
    return f"You told me: {note['text']}" if note.get("kind") == "remembered" else note["text"]


def recall(items: Iterable[Any], request: str, close: Iterable[Any] = ()) -> list[str]:
    """The stored notes related to the request, best first: ``close`` are the store's semantic hits
    (items with a score), ``items`` the notes ranked by keywords."""
    semantic = [(recollection(note), score) for note, score in _scored_notes(close)]
    ranked = [recollection(note) for note in rank_recollections(request, _stored_notes(items))]
    return merge_recall(semantic, ranked)


def _scored_notes(items: Iterable[Any]) -> list[tuple[dict[str, Any], float | None]]:
    scored = []
    for item in items:
        try:
            scored.append((MemoryNote.model_validate(item.value).model_dump(), getattr(item, "score", None)))
        except ValidationError:
            continue
    return scored


@declare(model=True, acts=("file_read",), guards=("slash_commands", "skills"))
def prepare_turn(
    state: AssistantState, runtime: Runtime[AssistantContext], *, deps: AssistantDeps
) -> Generator[Any, Any, Update]:
    """Reset the turn, trim the conversation to its window and recall related notes."""
    messages = list(state.get("messages", []))
    current = messages[-1] if messages and isinstance(messages[-1], HumanMessage) else None
    images = [dict(block) for block in image_blocks(current.content)] if current is not None else []
    text = (text_blocks(current.content) if images else _text(current)).strip() if current is not None else ""
    # Chat requests are cut like any message; a slash command goes whole to its pipeline, which
    # applies its own input rules.
    request = text if parse_slash(text) else cut_message(text)
    progress = progress_for(runtime)
    progress.start("Assistant turn")
    if image_route(len(images), deps.models_for(runtime).has_model(VISION_ROLE)) == "refuse":
        return {**fresh_turn(state), "input_refusal": NO_VISION_MODEL}  # before any model call
    yield from deps.load_tools(runtime)  # the MCP servers start here, off the event loop
    # Only a configured persona file is read off the event loop; the context alone needs no thread.
    path = persona_file()
    if path:
        persona = yield OffLoop(context_persona, (runtime.context, path))
    else:
        persona = context_persona(runtime.context, "")
    with recorded_step(progress, "memory", "Recall the conversation and related notes") as step:
        start = window_start([_role(m) for m in messages])
        removed = [RemoveMessage(id=m.id) for m in messages[:start] if m.id]
        window = messages[start:-1] if current is not None else messages[start:]
        conversation: list[Turn] = [_turn(m) for m in window]
        dropped: list[Turn] = [{"role": _role(m), "text": cut_message(_text(m))} for m in messages[:start]]
        summary, summary_note = yield from fold_dropped(
            state.get("conversation_summary", ""), dropped, runtime, deps)
        recollections: list[str] = []
        if request and runtime.store is not None:
            namespace = memory_namespace(runtime.context, thread_id_of(runtime))
            listed = yield StoreSearch(runtime.store, namespace, MAX_NOTES_SCANNED)
            close = yield StoreSearch(runtime.store, namespace, MAX_RECOLLECTIONS, query=request)
            recollections = recall(listed, request, close)
        skills, skills_note = (yield from skills_index(runtime, deps.tools_for(runtime).names)) if request else ([], "")
        step.summary = f"{len(conversation)} earlier message(s) in the window, {len(removed)} dropped"
        if recollections:
            step.summary += f"; {len(recollections)} recollection(s) injected"
        if was_redacted(text):  # the message was redacted before it was stored (runtime/execution/user_input.py)
            step.summary += "; a secret in the message was redacted before it was stored or sent to a model"
        if skills:
            step.summary += f"; {len(skills)} skill(s) listed" + (f" ({skills_note})" if skills_note else "")
        if summary_note:
            step.summary += f"; {summary_note}"
    return {**fresh_turn(state), "identity": identity_of(runtime.context), "messages": removed, "request": request,
            "images": images, "conversation": conversation, "persona": persona,
            "conversation_summary": summary, "recollections": recollections, "skills": skills,
            "trace": [step.trace()]}


@declare()
def empty_request(state: AssistantState, runtime: Runtime[AssistantContext]) -> Update:
    refusal = state.get("input_refusal")
    reply = refusal or "Please type a message, or /help to see the commands."
    progress = progress_for(runtime)
    with recorded_step(progress, "input", "Read the request") as step:
        step.summary = "refused: an image and no model that reads images" if refusal else "empty request"
    progress.end("completed", step.summary)
    return {
        "reply": reply,
        "answer": {"summary": reply, "evidence": [], "verdict": "failure"},
        "messages": [AIMessage(content=reply)],
        "trace": traced(state, step.trace()),
    }


def _note_text(reflection: AssistantReflection) -> str:
    text = f"Lesson: {reflection.next_time}"
    if reflection.went_wrong.strip().lower() not in ("nothing", "none", "n/a", "-"):
        text += f" Watch out: {reflection.went_wrong}"
    return redact(text, 600)


@declare(model=True, acts=("memory_write",), guards=("memory",))
def reflect(state: AssistantState, runtime: Runtime[AssistantContext], *, deps: AssistantDeps) -> NodeSteps:
    """After a COMPLEX task: one reflection note into the long-term store (failure is not fatal)."""
    answer = state.get("answer")
    outcome = {"verdict": answer["verdict"] if answer else None, "stop_reason": state.get("stop_reason")}
    progress = progress_for(runtime)
    topic: list[str] = []
    with recorded_step(progress, "reflect", "Reflect for long-term memory") as step:
        if runtime.store is None:
            step.skip("skipped, no store")
        else:
            reflection = yield from attempt(
                Contract(
                    "assistant.reflection",
                    AssistantReflection,
                    reflection_messages(state, outcome),
                    deps.models_for(runtime),
                    mode=deps.mode_for(runtime),
                )
            )
            lesson = check_lesson(_note_text(reflection.value)) if reflection.ok else None
            if lesson is not None and not lesson.allowed:  # the memory rules decide what a model may store
                step.skip(f"skipped ({lesson.code}: {lesson.reason})")
            elif reflection.ok:
                note = _note(reflection.value, state.get("request", ""), outcome["verdict"])
                yield StorePut(runtime.store, memory_namespace(runtime.context, thread_id_of(runtime)), uuid.uuid4().hex, note)
                step.summary = f"note stored ({len(note['keywords'])} keywords)"
                # A person can review a skill draft only in a run that pauses for review.
                offered = getattr(runtime.context, "human_review", False) or getattr(runtime.context, "review_skill_drafts", False)
                if outcome["verdict"] == "success" and offered:
                    topic = note["topic"]
            else:  # a lost lesson is not a failed turn
                step.skip(f"skipped ({reflection.reason()})")
    if not topic:  # otherwise the skill-draft steps end the turn
        progress.end("completed", f"verdict {outcome['verdict']}")
    return {"trace": traced(state, step.trace()), "draft_topic": topic}


def _note(reflection: AssistantReflection, request: str, verdict: str | None = None) -> dict[str, Any]:
    words = list(dict.fromkeys([*reflection.keywords, *keywords(request, MAX_KEYWORDS)]))[:16]
    note = MemoryNote(
        text=_note_text(reflection),
        keywords=[word[:40] for word in words],
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        verdict=verdict,
        topic=list(topic_of(reflection.keywords)),
    )
    return note.model_dump()

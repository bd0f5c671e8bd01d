"""Skills from experience: after a successful COMPLEX turn in a run that pauses for review, if the
turn's topic has succeeded often enough (``reins.policies.assistant.skill_drafts``), the model drafts a skill
(``assistant.skill_draft``) and a person approves, edits or rejects it through an interrupt. Only an
approved draft is listed (level 0) and loadable; it lives in the user's own store namespace, never
in the bundled folder."""

from __future__ import annotations

from reins.policies.audit.guard_coverage import declare

from datetime import datetime, timezone
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt
from pydantic import ValidationError

from reins.nodes.assistant.context import AssistantContext
from reins.nodes.assistant.deps import AssistantDeps, progress_for, thread_id_of
from reins.nodes.assistant.memory import memory_namespace
from reins.nodes.assistant.prompts import skill_draft_messages
from reins.nodes.assistant.state import AssistantState, NodeSteps, SkillDraftRecord, Update, traced
from reins.policies.assistant.memory import user_namespace
from reins.policies.assistant.skill_drafts import APPROVED, DECISIONS, MIN_SUCCESSES, PENDING, REJECTED, check_draft_decision, draft_due, topic_key
from reins.runtime.execution.calls import Contract, StorePut, StoreSearch
from reins.runtime.tools.skill_tools import MAX_DRAFTS_SCANNED
from reins.runtime.execution.steps import attempt, recorded_step
from reins.schemas.assistant import MemoryNote
from reins.schemas.skills import SkillDraft

MAX_NOTES_SCANNED = 200
MAX_LESSONS = 5


def _history(items: list[Any]) -> list[tuple[MemoryNote, str]]:
    notes = []
    for item in items:
        try:
            notes.append((MemoryNote.model_validate(item.value), item.key))
        except ValidationError:
            continue
    return notes


@declare(model=True, guards=("skill_drafts",))
def draft_skill(state: AssistantState, runtime: Runtime[AssistantContext], *, deps: AssistantDeps) -> NodeSteps:
    topic = list(state.get("draft_topic") or [])
    progress = progress_for(runtime)
    draft: SkillDraftRecord | None = None
    with recorded_step(progress, "skill-draft", "Weigh a skill draft") as step:
        notes = _history((yield StoreSearch(runtime.store, memory_namespace(runtime.context, thread_id_of(runtime)),
                                            MAX_NOTES_SCANNED)))
        drafts_area = user_namespace(getattr(runtime.context, "user_id", None), "skills")
        drafted = [item.value.get("topic") or [] for item in (yield StoreSearch(runtime.store, drafts_area, MAX_DRAFTS_SCANNED))]
        same = [note for note, _ in notes if note.kind == "reflection" and list(note.topic) == topic]
        if not draft_due(topic, [(note.verdict, note.topic) for note, _ in notes], drafted):
            successes = sum(1 for note in same if note.verdict == "success")
            step.skip(f"no draft ({successes} of {MIN_SUCCESSES} successes on this topic, or drafted before)")
        else:
            lessons = [note.text for note in sorted(same, key=lambda n: n.created_at)[-MAX_LESSONS:]]
            outcome = yield from attempt(
                Contract("assistant.skill_draft", SkillDraft, skill_draft_messages(topic, lessons, deps.tools_for(runtime)),
                         deps.models_for(runtime), mode=deps.mode_for(runtime))
            )
            if outcome.ok:
                draft = {**outcome.value.model_dump(), "key": topic_key(topic), "topic": topic}
                yield StorePut(runtime.store, drafts_area, draft["key"], _stored(draft, PENDING))
                step.summary = f"drafted skill {draft['name']}; waiting for a person's review"
            else:
                step.skip(f"no draft ({outcome.reason()})")
    if draft is None:
        progress.end("completed", "turn finished")
    return {"skill_draft": draft, "trace": traced(state, step.trace())}


def _stored(draft: SkillDraftRecord, status: str, reason: str = "") -> dict[str, Any]:
    value = {key: draft[key] for key in ("name", "description", "instructions", "topic")}  # type: ignore[literal-required]
    return {**value, "status": status, "reason": reason,
            "reviewed_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}


@declare(acts=("memory_write",), guards=("skill_drafts",))
def review_skill_draft(state: AssistantState, runtime: Runtime[AssistantContext]) -> Update:
    """Pause until a person approves, edits or rejects the draft; an invalid answer asks again."""
    draft: SkillDraftRecord = state["skill_draft"]  # type: ignore[assignment]  # routed here only with a draft
    request = {"kind": "skill_draft", "draft": {k: draft[k] for k in ("name", "description", "instructions")},  # type: ignore[literal-required]
               "allowed_decisions": list(DECISIONS), "error": None}
    progress = progress_for(runtime)
    with recorded_step(progress, "skill-review", "Review the skill draft") as step:
        decision = check_draft_decision(interrupt(request))
        while decision.error:
            decision = check_draft_decision(interrupt({**request, "error": decision.error}))
        area = user_namespace(getattr(runtime.context, "user_id", None), "skills")
        if decision.type == "reject":
            runtime.store.put(area, draft["key"], _stored(draft, REJECTED, decision.reason))
            step.summary = f"the reviewer rejected skill {draft['name']}; it is not listed"
        else:
            final: SkillDraftRecord = {**draft, **(decision.draft or {})}  # type: ignore[typeddict-item]
            runtime.store.put(area, draft["key"], _stored(final, APPROVED))
            edited = " (edited)" if decision.type == "edit" else ""
            step.summary = f"the reviewer approved skill {final['name']}{edited}; listed from the next turn"
    progress.end("completed", step.summary)
    return {"skill_draft": None, "trace": traced(state, step.trace())}


def route_after_reflect(state: AssistantState) -> str:
    return "draft_skill" if state.get("draft_topic") else "__end__"


def route_after_draft(state: AssistantState) -> str:
    return "review_skill_draft" if state.get("skill_draft") else "__end__"

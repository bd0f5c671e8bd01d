"""Skills from experience: when COMPLEX tasks on the same topic (the same reflection keywords) have
succeeded ``MIN_SUCCESSES`` times, reflection proposes a skill draft; a person approves, edits or
rejects it before it is ever listed. A topic is proposed once (a pending, approved or rejected draft
for it stops the next proposal).
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import ValidationError

from reins.schemas.skills import SkillDraft

MIN_SUCCESSES = 3
SkillDecision = Literal["approve", "edit", "reject"]
DECISIONS: tuple[str, ...] = get_args(SkillDecision)
PENDING, APPROVED, REJECTED = "pending", "approved", "rejected"


def topic_of(keywords: Iterable[str]) -> tuple[str, ...]:
    """A reflection's keywords as a topic: lower-case, unique, sorted (order does not matter)."""
    return tuple(sorted({k.strip().lower() for k in keywords if k.strip()}))


def topic_key(topic: Sequence[str]) -> str:
    """The store key of a topic's draft (stable, no dots, short)."""
    return "draft-" + hashlib.sha256("\x1f".join(topic).encode("utf-8")).hexdigest()[:24]


def draft_due(
    topic: Sequence[str],
    history: Iterable[tuple[str | None, Sequence[str]]],
    drafted: Collection[Sequence[str]],
    min_successes: int = MIN_SUCCESSES,
) -> bool:
    """``history``: (verdict, topic) of the stored reflections, this turn's included. Due when at
    least ``min_successes`` of them succeeded on exactly this topic and none was drafted for it."""
    wanted = topic_of(topic)
    if not wanted or wanted in {topic_of(t) for t in drafted}:
        return False
    return sum(1 for verdict, seen in history if verdict == "success" and topic_of(seen) == wanted) >= min_successes


@dataclass(frozen=True)
class DraftDecision:
    type: str | None = None  # approve | edit | reject, when valid
    draft: Mapping[str, Any] | None = None  # the edited draft (edit only)
    reason: str = ""
    error: str | None = None  # why the answer was refused (then the pause asks again)


def check_draft_decision(value: Any) -> DraftDecision:
    """A person's answer to the draft review: ``{"type": "approve"}``, ``{"type": "edit", "draft":
    {name, description, instructions}}`` or ``{"type": "reject", "reason"?}``."""
    if not isinstance(value, Mapping) or value.get("type") not in DECISIONS:
        return DraftDecision(error=f"answer with a type among {', '.join(DECISIONS)}")
    kind = value["type"]
    allowed = {"approve": {"type"}, "edit": {"type", "draft"}, "reject": {"type", "reason"}}[kind]
    if set(value) - allowed:
        return DraftDecision(error=f"{kind} takes only {', '.join(sorted(allowed))}")
    if kind == "edit":
        try:
            draft = SkillDraft.model_validate(value.get("draft"))
        except ValidationError as error:
            fields = ", ".join(sorted({".".join(map(str, e["loc"])) or "draft" for e in error.errors()}))
            return DraftDecision(error=f"the edited draft is invalid ({fields})")
        return DraftDecision("edit", draft.model_dump())
    reason = value.get("reason", "")
    if not isinstance(reason, str) or len(reason) > 500:
        return DraftDecision(error="reason must be text of at most 500 characters")
    return DraftDecision(kind, reason=reason.strip())

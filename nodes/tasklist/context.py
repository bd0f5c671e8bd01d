"""Per-run configuration of the tasklist agent (LangGraph runtime context)."""

from __future__ import annotations

from dataclasses import dataclass, field

from runtime.context import ReinsContext


@dataclass(kw_only=True)
class TasklistContext(ReinsContext):
    human_review: bool = field(
        default=False,
        metadata={"description": "Pause for a person at the strategy review and before the automatic revision."},
    )

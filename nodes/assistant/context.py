"""Per-run configuration of the assistant (LangGraph runtime context)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

from runtime.context import ReinsContext

MemoryScope = Literal["thread", "user"]  # a dropdown in Studio
MEMORY_SCOPES: tuple[str, ...] = get_args(MemoryScope)


@dataclass(kw_only=True)
class AssistantContext(ReinsContext):
    user_id: str = field(default="local", metadata={"description": "Whose long-term notes to read and write."})
    memory_scope: MemoryScope = field(
        default="thread",
        metadata={"description": "thread: notes stay in this conversation; user: shared by the user's threads."},
    )
    skills_root: str | None = field(
        default=None,
        metadata={"description": "A folder of your own skills (SKILL.md folders); defaults to REINS_SKILLS_ROOT."},
    )
    human_review: bool = field(
        default=False,
        metadata={"description": "Pause /tasklist runs for a person at their review points; resume on this thread."},
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.memory_scope not in MEMORY_SCOPES:
            raise ValueError(f"memory_scope must be one of {', '.join(MEMORY_SCOPES)}")
        if not self.user_id or not self.user_id.strip():
            raise ValueError("user_id must not be empty")

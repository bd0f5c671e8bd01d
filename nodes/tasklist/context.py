"""Per-run configuration of the tasklist agent (LangGraph runtime context)."""

from __future__ import annotations

from dataclasses import dataclass, field

from reins.runtime.config.context import ReinsContext, model_field


@dataclass(kw_only=True)
class TasklistContext(ReinsContext):
    """The tasklist agent's per-run settings (LangGraph's ``context=``; Studio shows them as a form).

    Example: ``build_tasklist_agent().invoke(inputs, context=TasklistContext(model="gpt-4o-mini"))``
    """

    model: str | None = model_field("planning_decision", "draft_v1", "revise_v2")
    human_review: bool = field(
        default=False,
        metadata={"description": "Pause for a person at the strategy review and before the automatic revision."},
    )

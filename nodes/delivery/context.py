"""Per-run configuration of the delivery chain (LangGraph runtime context)."""

from __future__ import annotations

from dataclasses import dataclass, field

from reins.policies.delivery.input import check_review_timeout
from reins.runtime.config.context import ReinsContext, model_field


@dataclass(kw_only=True)
class DeliveryContext(ReinsContext):
    """The delivery chain's per-run settings (LangGraph's ``context=``; Studio shows them as a form).

    Example: ``build_delivery_chain().invoke(inputs, context=DeliveryContext(review_timeout_s=30))``
    """

    model: str | None = model_field("supervisor_pre", "manager", "plan_worker", "task_worker", "reviewer",
                                    "supervisor_post", "revise_plan", "revise_tasks", "render_report")
    polish: bool | None = field(
        default=None,
        metadata={"description": "Let the polish model rewrite the report's narrative summary (off by default)."},
    )
    review_timeout_s: float | None = field(
        default=None, metadata={"description": "Wall-clock limit per reviewer, in seconds."}
    )
    governance_root: str | None = field(
        default=None,
        metadata={"description": "Directory with your own governance/*.md and rubrics/*.md (default: "
                  "REINS_GOVERNANCE_ROOT, else the bundled set)."},
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        self.review_timeout_s = check_review_timeout(self.review_timeout_s)

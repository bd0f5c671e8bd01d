"""The evaluation's contracts: the two simpler baselines (``evals/baselines.py``) make free-text
calls only, each under its own ``eval.`` name and served by the role named here."""

from __future__ import annotations

from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS
from reins.runtime.contracts import register_contracts


def fixed_review_contract(role: str) -> str:
    """The fixed pipeline's contract for one reviewer of the table."""
    return f"eval.fixed_{role}_review"


EVAL_CONTRACTS: dict[str, str] = {
    "eval.single_agent": "planner",
    "eval.fixed_plan": "planner",
    "eval.fixed_tasks": "planner",
    # each answered by its reviewer's model_role (``ModelSet.serving``)
    **{fixed_review_contract(spec.role): "reviewer" for spec in DEFAULT_REVIEWERS},
}

register_contracts(EVAL_CONTRACTS)

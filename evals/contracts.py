"""The evaluation's contracts: the two simpler baselines (``evals/baselines.py``) make free-text
calls only, each under its own ``eval.`` name and served by the role named here."""

from __future__ import annotations

from runtime.contracts import register_contracts

EVAL_CONTRACTS: dict[str, str] = {
    "eval.single_agent": "planner",
    "eval.fixed_plan": "planner",
    "eval.fixed_tasks": "planner",
    "eval.fixed_general_review": "reviewer",
    "eval.fixed_risk_review": "reviewer",
    "eval.fixed_boundary_review": "reviewer",
}

register_contracts(EVAL_CONTRACTS)

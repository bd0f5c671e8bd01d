"""Which role's model serves each contract, and the per-role views of a run's metrics.

The stable contracts of the three graphs are listed here; layers above the runtime add theirs with
``register_contracts`` (the evaluation's baselines do, from ``evals/``).
"""

from __future__ import annotations

from collections.abc import Mapping

from reins.runtime.llm.model_calls import SERVED_PREFIX

CONTRACT_ROLES: dict[str, str] = {
    "tasklist.planning_decision": "tasklist",
    "tasklist.strategy": "tasklist",
    "tasklist.draft": "tasklist",
    "tasklist.revision": "tasklist",
    "delivery.supervisor_pre": "supervisor",
    "delivery.manager": "manager",
    "delivery.plan": "planner",
    "delivery.tasks": "planner",
    "delivery.general_review": "reviewer",
    "delivery.risk_review": "reviewer",
    "delivery.boundary_review": "reviewer",
    "delivery.supervisor_post": "supervisor",
    "delivery.plan_revision": "planner",
    "delivery.task_revision": "planner",
    "delivery.report_polish": "polish",
    # The assistant's task roles (runtime.config.settings.TASK_ROLES): all served by the chat role's model
    # until REINS_MODEL_<ROLE> points one elsewhere — a small model for classifying, a strong one to answer.
    "assistant.intent": "classify",
    "assistant.step": "step",
    "assistant.replan": "step",
    "assistant.answer": "answer",
    "assistant.skill_draft": "answer",
    "assistant.summary": "classify",
    "assistant.reflection": "check",
}


def register_contracts(roles: Mapping[str, str]) -> None:
    """Add contracts (name → the role whose model serves them); registering the same pair again is a
    no-op, giving a known contract another role is an error."""
    clashes = sorted(name for name, role in roles.items() if CONTRACT_ROLES.get(name, role) != role)
    if clashes:
        raise ValueError(f"contract {clashes[0]!r} is already served by role {CONTRACT_ROLES[clashes[0]]!r}")
    CONTRACT_ROLES.update(roles)


def role_for(contract: str) -> str:
    try:
        return CONTRACT_ROLES[contract]
    except KeyError:
        raise KeyError(f"unknown contract {contract!r}") from None


def models_served(metrics: Mapping[str, Mapping[str, int]]) -> dict[str, list[str]]:
    """Role → the models that answered its calls (from the ``model:<label>`` counts), in label order."""
    roles: dict[str, set[str]] = {}
    for contract, values in metrics.items():
        labels = {key.removeprefix(SERVED_PREFIX) for key, count in values.items() if key.startswith(SERVED_PREFIX) and count}
        roles.setdefault(CONTRACT_ROLES.get(contract, "unknown"), set()).update(labels)
    return {role: sorted(labels) for role, labels in sorted(roles.items()) if labels}


def fallbacks_per_role(metrics: Mapping[str, Mapping[str, int]]) -> dict[str, int]:
    """Role → calls that moved to a fallback model."""
    roles: dict[str, int] = {}
    for contract, values in metrics.items():
        if values.get("fallbacks"):
            role = CONTRACT_ROLES.get(contract, "unknown")
            roles[role] = roles.get(role, 0) + int(values["fallbacks"])
    return roles

"""A graph's worst case under a model set and its options, what a run used, and the user's caps.

The arithmetic is ``reins.policies.audit.budget``; the stages are ``reins.policies.audit.run_budgets``. This module reads the
configuration those need — every role's policy and model chain, the delegation policy, the reviewer
table, the contract mode — and the metrics a run recorded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from reins.policies.audit.budget import (
    CAP_NAMES,
    Budget,
    CallLimits,
    Stage,
    budget,
    cap_value,
    most,
    over_caps,
    tool_time_s,
    widest,
)
from reins.policies.models.deadlines import contract_deadline_s
from reins.policies.delivery.delegation import DEFAULT_POLICY, DelegationPolicy
from reins.policies.delivery.reviewers import Reviewers, ReviewerSpec, reviewer_table
from reins.policies.audit.run_budgets import (
    ASSISTANT_ASKS,
    ESCALATION,
    TASKLIST_READS,
    assistant_stages,
    assistant_tool_calls,
    delivery_stages,
    pipeline_turn_stages,
    tasklist_stages,
)
from reins.runtime.contracts.roles import role_for
from reins.runtime.llm.models import ModelSet
from reins.runtime.config.settings import ALL_ROLES, TASK_ROLES, VISION_ROLE

# A built-in tool's deadline when none is given (``RegisteredTool.timeout_s``); the CLI passes every
# offered tool's own, an MCP server's ``timeout_s`` included.
BUILTIN_TOOL_DEADLINE_S = 30.0
# The assistant's paths through one turn: a chat turn, or a pipeline run inside it.
CHAT_TURN, TASKLIST_IN_CHAT, DELIVERY_IN_CHAT = "chat turn", "/tasklist in chat", "/delivery-chain in chat"

GRAPHS = ("tasklist_agent", "delivery_chain", "assistant")
CAP_VARIABLES: Mapping[str, str] = {
    "calls": "REINS_MAX_CALLS",
    "output_tokens": "REINS_MAX_OUTPUT_TOKENS",
    "tool_calls": "REINS_MAX_TOOL_CALLS",
    "seconds": "REINS_MAX_SECONDS",
}
assert set(CAP_VARIABLES) == set(CAP_NAMES)


class BudgetExceeded(ValueError):
    """The configuration's worst case does not fit the user's caps; ``str(error)`` is safe to show."""


def call_limits(models: ModelSet) -> dict[str, CallLimits]:
    """What one request of each role may cost under ``models``: its chain's length, its retries,
    output bounds and timeout — every role, the assistant's task roles and the vision role with
    their own chains, fallbacks and escalations included."""
    limits = {}
    for role in ALL_ROLES:
        if not models.has_model(role):  # the vision role when no model reads images
            continue
        policy = models.policy(role)
        attempts = 1 + max(policy.retries, 0)
        escalation = attempts if models.escalation(role) else 0
        limits[role] = CallLimits(
            models=len(models.chain(role)), attempts=attempts, max_tokens=policy.max_tokens,
            max_tokens_limit=policy.max_tokens_limit, timeout_s=float(policy.timeout_s),
            backoff_initial_s=policy.backoff_initial_s, escalation_attempts=escalation,
        )
        if escalation:  # the escalation model alone: no fallbacks, the role's policy
            limits[ESCALATION.format(role=role)] = replace(limits[role], models=1, escalation_attempts=0)
    return limits


def assistant_limits(models: ModelSet) -> dict[str, CallLimits]:
    """``call_limits`` for a chat turn: a turn with an image serves the task roles as the vision role
    is (``reins.nodes.assistant.deps``), so each task role may cost what either chain costs."""
    limits = call_limits(models)
    if VISION_ROLE in limits:
        for role in TASK_ROLES:
            limits[role] = widest(limits[role], limits[VISION_ROLE])
    return limits


def reviewer_deadline_s(models: ModelSet, role: str = "reviewer", review_timeout_s: float | None = None) -> float:
    """A reviewer's wall-clock limit: the one given, else what its model role's policy needs (as the
    delivery chain sets it)."""
    if review_timeout_s:
        return float(review_timeout_s)
    policy = models.policy(role)
    return contract_deadline_s(policy.timeout_s, policy.retries, policy.backoff_initial_s)


def worst_case(
    graph: str,
    models: ModelSet,
    *,
    contract_mode: str = "direct",
    policy: DelegationPolicy = DEFAULT_POLICY,
    reviewers: Reviewers | Iterable[ReviewerSpec] | None = None,
    polish: bool = False,
    review_timeout_s: float | None = None,
    human_review: bool = False,
    tool_deadlines_s: Iterable[float] = (BUILTIN_TOOL_DEADLINE_S,),
    pipelines: bool = True,
) -> Budget:
    """The most one run of ``graph`` may take under this configuration. For the assistant: the most
    of its paths (``assistant_paths``) — a chat turn, or a pipeline run inside one."""
    if graph == "assistant":
        return most(assistant_paths(models, contract_mode=contract_mode, tool_deadlines_s=tool_deadlines_s,
                                    pipelines=pipelines).values())
    two_step = contract_mode == "two_step"
    limits = call_limits(models)
    if graph == "delivery_chain":
        stages = delivery_stages_for(models, two_step, policy, reviewers, polish, review_timeout_s)
        # Sub-agents are the manager's tools; their model calls are the stages above.
        return budget(stages, limits, tool_calls=policy.max_tool_calls)
    if graph == "tasklist_agent":
        return budget(tasklist_stages(human_review=human_review, two_step=two_step), limits,
                      tool_calls=TASKLIST_READS)
    raise ValueError(f"unknown graph {graph!r}; one of {', '.join(GRAPHS)}")


def delivery_stages_for(models: ModelSet, two_step: bool = False, policy: DelegationPolicy = DEFAULT_POLICY,
                        reviewers: Reviewers | Iterable[ReviewerSpec] | None = None, polish: bool = False,
                        review_timeout_s: float | None = None) -> list[Stage]:
    """The delivery chain's longest path under ``models`` and its options (the reviewer table's
    roles, each review under its deadline, the manager's escalation when it has one)."""
    roles = [spec.model_role for spec in reviewer_table(reviewers)]
    return delivery_stages(roles, max_manager_reasks=policy.max_manager_reasks, two_step=two_step, polish=polish,
                           review_deadlines={r: reviewer_deadline_s(models, r, review_timeout_s) for r in roles},
                           manager_escalation=models.escalation("manager") is not None)


def assistant_roles() -> dict[str, str]:
    """Each ask of a chat turn and the role whose model serves it (the contracts' own table)."""
    return {ask: role_for(f"assistant.{ask}") for ask in ASSISTANT_ASKS}


def assistant_paths(models: ModelSet, *, contract_mode: str = "direct",
                    tool_deadlines_s: Iterable[float] = (BUILTIN_TOOL_DEADLINE_S,),
                    pipelines: bool = True) -> dict[str, Budget]:
    """The worst case of each path one assistant turn may take: a chat turn (its task roles, each
    with its chain, and the vision role's for a turn with an image; every tool call to the longest
    deadline offered), and a ``/tasklist`` or ``/delivery-chain`` turn — the pipeline whole, inside
    the turn (its review pause may be answered, so the tasklist is counted with its review)."""
    two_step = contract_mode == "two_step"
    roles = assistant_roles()
    calls = assistant_tool_calls()
    limits = assistant_limits(models)
    paths = {CHAT_TURN: budget(assistant_stages(roles, two_step=two_step), limits, tool_calls=calls,
                               tool_seconds=tool_time_s(calls, tool_deadlines_s))}
    if not pipelines:
        return paths
    # the pipelines as the assistant builds them: default reviewers, policy and polish
    delivery = delivery_stages_for(models, two_step)
    paths[TASKLIST_IN_CHAT] = budget(
        pipeline_turn_stages(roles, tasklist_stages(human_review=True, two_step=two_step), two_step=two_step),
        limits, tool_calls=TASKLIST_READS)
    paths[DELIVERY_IN_CHAT] = budget(pipeline_turn_stages(roles, delivery, two_step=two_step), limits,
                                     tool_calls=DEFAULT_POLICY.max_tool_calls)
    return paths


def used(metrics: Mapping[str, Mapping[str, int]], tool_calls: int = 0, seconds: float = 0.0) -> dict[str, float]:
    """What a run used, from its per-contract metrics: every request made (business, encoder and
    repair calls and their retries), output tokens, tool calls and wall time."""
    kinds = ("business_calls", "encoder_calls", "repair_calls", "escalations", "retries", "fallbacks")
    calls = sum(int(v.get(kind, 0)) for v in metrics.values() for kind in kinds)
    tokens = sum(int(v.get("output_tokens", 0)) for v in metrics.values())
    return {"calls": calls, "output_tokens": tokens, "tool_calls": tool_calls, "seconds": round(seconds, 1)}


def budget_line(used_now: Mapping[str, float], worst: Budget) -> str:
    """``calls 10/38 · output tokens 812/61440 · …``: what a run used beside its worst case."""
    bound = worst.as_dict()
    names = {"calls": "calls", "output_tokens": "output tokens", "tool_calls": "tool calls", "seconds": "seconds"}
    return " · ".join(f"{names[k]} {used_now.get(k, 0):g}/{bound[k]:g}" for k in CAP_NAMES)


def run_budget_of(worst: Budget, metrics: Mapping[str, Mapping[str, int]], tool_calls: int = 0,
                  seconds: float = 0.0) -> dict:
    """A report's budget entry: what the run used beside its worst case, and the line that says it."""
    spent = used(metrics, tool_calls, seconds)
    return {"used": spent, "worst_case": worst.as_dict(), "line": budget_line(spent, worst)}


def configured_budget(graph: str, values: Mapping[str, object], tool_calls: int, seconds: float,
                      **options: object) -> dict:
    """``run_budget_of`` for a run of ``graph`` under the environment's configuration (the CLI's)."""
    from reins.runtime.llm.models import model_set_from_settings
    from reins.runtime.config.settings import Settings

    settings = Settings.from_env()
    worst = worst_case(graph, model_set_from_settings(settings),
                       **{"contract_mode": settings.contract_mode, **options})  # type: ignore[arg-type]
    return run_budget_of(worst, values.get("contract_metrics") or {}, tool_calls, seconds)  # type: ignore[arg-type]


def caps_from_env(env: Mapping[str, str]) -> dict[str, float]:
    """The user's caps (``REINS_MAX_CALLS`` …): finite numbers above zero; a wrong value (``nan``,
    ``inf``, ``0``, ``-1``) is an error naming its variable (``reins.policies.audit.budget.cap_value``)."""
    caps = {}
    for name, key in CAP_VARIABLES.items():
        text = env.get(key, "").strip()
        if not text:
            continue
        try:
            caps[name] = cap_value(key, text)
        except ValueError as error:
            raise BudgetExceeded(str(error)) from None
    return caps


def check_caps(worst: Budget, caps: Mapping[str, float], graph: str) -> None:
    """Refuse a configuration whose worst case does not fit the caps, before anything runs."""
    over = over_caps(worst, caps)
    if over:
        raise BudgetExceeded(
            f"the {graph} worst case does not fit your caps ({'; '.join(over)}): lower retries, fallbacks, "
            "re-asks or output bounds, or raise the cap"
        )

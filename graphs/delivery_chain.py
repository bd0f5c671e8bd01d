"""The delivery chain: a requirement → plan, tasks, parallel reviews (three by default: one per row of
the reviewer table), at most one revision and a report whose verdict no model can override.

    START → load_context → supervisor_pre ─┬─ clarification_required / blocked ──────► render_report → END
                                           └─ execute (exact reviewer roles, else fail_closed) → manager
    manager [delegation policy] → plan_worker | task_worker | Send×3 reviewer | manager_refused
    plan_worker | task_worker → manager (a failed worker: fail_closed)
    manager_refused [re-ask budget] → manager (the identical turn again) | fail_closed
    reviewer×N (parallel, isolated) → synthesize → supervisor_post → revise_plan → revise_tasks → render_report
    fail_closed → render_report

Input ``{"requirement": "<text>"}`` or ``{"requirement_uri": "demo://scenarios/<id>/requirement.md"}``;
output: run_status, report, artifacts, review_bundle, post_review_decision, revision,
policy_violation, metrics, trace. Per-run settings come from ``DeliveryContext``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph

from reins.policies.delivery.delegation import DEFAULT_POLICY, MANAGER, DelegationPolicy, for_reviewers
from reins.policies.delivery.input import check_review_timeout
from reins.policies.delivery.reviewers import Reviewers, ReviewerSpec, reviewer_table
from reins.runtime.execution.calls import inline, node
from reins.runtime.contracts import register_contracts
from reins.runtime.config.context import model_set_of
from reins.runtime.llm.models import ModelSet
from reins.runtime.tools.registry import ToolRegistry
from reins.runtime.tools.toolbox import default_registry
from reins.runtime.execution.user_input import guard_input
from reins.runtime.resources import ResourceResolver
from reins.runtime.config.settings import ROLES
from reins.nodes.delivery import routing
from reins.nodes.delivery.common import DeliveryDeps
from reins.nodes.delivery.context import DeliveryContext
from reins.nodes.delivery.load import load_context
from reins.nodes.delivery.manager import manager
from reins.nodes.delivery.refusal import manager_refused
from reins.nodes.delivery.report import fail_closed, render_report
from reins.nodes.delivery.reviewers import reviewer
from reins.nodes.delivery.revision import revise_plan, revise_tasks
from reins.nodes.delivery.state import DeliveryInput, DeliveryOutput, DeliveryState, ReviewerTask
from reins.nodes.delivery.supervisor import supervisor_post, supervisor_pre
from reins.nodes.delivery.synthesis import synthesize
from reins.nodes.delivery.workers import plan_worker, task_worker

GRAPH_NAME = "delivery_chain"


def build_graph(
    models: ModelSet | BaseChatModel | None = None,
    checkpointer: Any = None,
    *,
    registry: ToolRegistry | None = None,
    policy: DelegationPolicy = DEFAULT_POLICY,
    resolver: ResourceResolver | None = None,
    polish: bool = False,
    review_timeout_s: float | None = None,
    reviewers: Reviewers | Iterable[ReviewerSpec] | None = None,
):
    """Compile the delivery chain. ``models``: a ``ModelSet``, one chat model for every role, or None
    to resolve models per run (context, then environment). ``reviewers``: the reviewer table
    (``reins.policies.delivery.reviewers``; default the general, risk and boundary reviewers); the delegation
    policy's review group and the sub-agent tools follow it. A wrong option is a TypeError or a
    ValueError naming it, here, before anything runs.

    Example: ``build_delivery_chain(models=OfflineModel()).invoke({"requirement": "Show a banner at the request limit."})``
    """
    if not isinstance(policy, DelegationPolicy):
        raise TypeError(f"policy must be a DelegationPolicy, not {type(policy).__name__}")
    table = reviewer_table(reviewers)
    unknown = [spec for spec in table if spec.model_role not in ROLES]
    if unknown:
        raise ValueError(f"reviewer {unknown[0].role!r}: model_role {unknown[0].model_role!r} is not one of "
                         f"the model roles ({', '.join(ROLES)})")
    register_contracts(dict.fromkeys((spec.contract for spec in table), "reviewer"))  # answered per model_role
    deps = DeliveryDeps(
        models=model_set_of(models, GRAPH_NAME),
        tools=(registry or default_registry(table)).for_scope(MANAGER),
        policy=for_reviewers(policy, table),
        resolver=resolver or ResourceResolver(),
        polish=polish,
        review_timeout_s=check_review_timeout(review_timeout_s),
        reviewers=table,
    )
    builder = StateGraph(
        DeliveryState, context_schema=DeliveryContext, input_schema=DeliveryInput, output_schema=DeliveryOutput
    )
    # Model-calling nodes run sync under invoke and async under ainvoke; quick rule-only nodes run on
    # the event loop under ainvoke instead of an executor thread (runtime/execution/calls.py).
    # Every deciding node routes with Command; ``destinations`` lets Studio draw its branches.
    builder.add_node("load_context", node(load_context, deps=deps), destinations=routing.AFTER_LOAD)
    builder.add_node("supervisor_pre", node(supervisor_pre, deps=deps), destinations=routing.AFTER_PRE)
    builder.add_node("manager", node(manager, deps=deps), destinations=routing.AFTER_MANAGER)
    builder.add_node("manager_refused", inline(manager_refused, deps=deps), destinations=routing.AFTER_REFUSAL)
    builder.add_node("plan_worker", node(plan_worker, deps=deps), destinations=routing.AFTER_WORKER)
    builder.add_node("task_worker", node(task_worker, deps=deps), destinations=routing.AFTER_WORKER)
    builder.add_node("reviewer", node(reviewer, deps=deps), input_schema=ReviewerTask)
    builder.add_node("synthesize", inline(synthesize, deps=deps), destinations=routing.AFTER_SYNTHESIS)
    builder.add_node("supervisor_post", node(supervisor_post, deps=deps), destinations=routing.AFTER_POST)
    builder.add_node("revise_plan", node(revise_plan, deps=deps), destinations=routing.AFTER_PLAN_REVISION)
    builder.add_node("revise_tasks", node(revise_tasks, deps=deps))
    builder.add_node("render_report", node(render_report, deps=deps))
    builder.add_node("fail_closed", inline(fail_closed))

    builder.add_edge(START, "load_context")
    builder.add_edge("reviewer", "synthesize")
    builder.add_edge("revise_tasks", "render_report")
    builder.add_edge("fail_closed", "render_report")
    builder.add_edge("render_report", END)
    # The input is checked and its secrets redacted before LangGraph stores any of it.
    return guard_input(builder.compile(checkpointer=checkpointer, name=GRAPH_NAME), ("requirement", "requirement_uri"))


graph = build_graph()

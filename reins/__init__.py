"""Reins: controlled multi-agent pipelines on LangGraph — the model proposes, the runtime decides.

This module is the public API: everything a notebook or a script needs, importable as
``from reins import …``. Names not listed in ``__all__`` (the packages ``reins.graphs``,
``reins.runtime`` …) are internal and may move between releases.

Quick start, on the offline stand-in model (no network, no key)::

    from reins import OfflineModel, build_delivery_chain

    graph = build_delivery_chain(models=OfflineModel())
    result = graph.invoke({"requirement": "Show a banner when a user hits the request limit."})
    print(result["run_status"])

Sections:

- graphs: ``build_delivery_chain``, ``build_tasklist_agent``, ``build_assistant``
- models: ``ModelSet``, ``RolePolicy``, ``OfflineModel``, ``ScriptedModel``
- per-run context: ``ReinsContext``, ``DeliveryContext``, ``TasklistContext``, ``AssistantContext``
- persistence and pauses: ``open_checkpointer``, ``open_async_checkpointer``, ``pending_review``,
  ``resume_command``, ``open_pauses``
- tools and resources: ``RegisteredTool``, ``default_registry``, ``ResourceResolver``
- customising the delivery chain: ``DEFAULT_POLICY``, ``DelegationPolicy``, ``DEFAULT_REVIEWERS``,
  ``ReviewerSpec``, and for a reviewer's schema ``Strict``, ``bounded_text``, ``ReviewFinding``
- auditing: ``replay_thread``, ``parse_overrides``
- evaluation: ``run_evaluation``, ``SCENARIOS``, ``scenario_by_id``, ``summary_table``,
  ``markdown_report``, ``write_report``, ``perturb_data``, ``diagram``

Constants:

- ``DEFAULT_POLICY``: the delivery chain's delegation rules as shipped (a ``DelegationPolicy``);
  ``build_delivery_chain(policy=replace(DEFAULT_POLICY, max_manager_reasks=0))``
- ``DEFAULT_REVIEWERS``: the reviewer table as shipped (general, risk, boundary);
  ``build_delivery_chain(reviewers=(*DEFAULT_REVIEWERS, privacy))``
- ``SCENARIOS``: the evaluation's scenarios, each with its expected status;
  ``run_evaluation(repeats=1, scenarios=SCENARIOS[:3])``

Names load on first use, so ``import reins`` (and the ``reins`` command) stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Public name -> "module:attribute". Declared once: ``__all__``, ``dir(reins)`` and the lazy loader
# all read this table.
_EXPORTS: dict[str, str] = {
    # graphs
    "build_delivery_chain": "reins.graphs.delivery_chain:build_graph",
    "build_tasklist_agent": "reins.graphs.tasklist_agent:build_graph",
    "build_assistant": "reins.graphs.assistant:build_graph",
    # models
    "ModelSet": "reins.runtime.llm.models:ModelSet",
    "RolePolicy": "reins.runtime.llm.models:RolePolicy",
    "OfflineModel": "reins.runtime.standins.offline:OfflineModel",
    "ScriptedModel": "reins.runtime.standins.scripted:ScriptedModel",
    # per-run context (LangGraph's context=)
    "ReinsContext": "reins.runtime.config.context:ReinsContext",
    "DeliveryContext": "reins.nodes.delivery.context:DeliveryContext",
    "TasklistContext": "reins.nodes.tasklist.context:TasklistContext",
    "AssistantContext": "reins.nodes.assistant.context:AssistantContext",
    # persistence and pauses
    "open_checkpointer": "reins.runtime.persistence.checkpoint:open_checkpointer",
    "open_async_checkpointer": "reins.runtime.persistence.checkpoint:open_async_checkpointer",
    "pending_review": "reins.graphs.tasklist_agent:pending_review",
    "resume_command": "reins.graphs.tasklist_agent:resume_command",
    "open_pauses": "reins.nodes.assistant.approval:open_pauses",
    # tools and resources
    "RegisteredTool": "reins.runtime.tools.registry:RegisteredTool",
    "default_registry": "reins.runtime.tools.toolbox:default_registry",
    "ResourceResolver": "reins.runtime.resources:ResourceResolver",
    # customising the delivery chain
    "DEFAULT_POLICY": "reins.policies.delivery.delegation:DEFAULT_POLICY",
    "DelegationPolicy": "reins.policies.delivery.delegation:DelegationPolicy",
    "DEFAULT_REVIEWERS": "reins.policies.delivery.reviewers:DEFAULT_REVIEWERS",
    "ReviewerSpec": "reins.policies.delivery.reviewers:ReviewerSpec",
    "Strict": "reins.schemas.strict:Strict",
    "bounded_text": "reins.schemas.strict:bounded_text",
    "ReviewFinding": "reins.schemas.delivery:ReviewFinding",
    # auditing
    "replay_thread": "reins.nodes.replay:replay_thread",
    "parse_overrides": "reins.policies.audit.replay:parse_overrides",
    # evaluation
    "run_evaluation": "reins.evals.run:run_evaluation",
    "SCENARIOS": "reins.evals.scenarios:SCENARIOS",
    "scenario_by_id": "reins.evals.scenarios:scenario_by_id",
    "summary_table": "reins.evals.report:summary_table",
    "markdown_report": "reins.evals.report:markdown_report",
    "write_report": "reins.evals.report:write_report",
    "perturb_data": "reins.evals.perturbed:perturb_data",
    "diagram": "reins.cli.diagrams:diagram",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module 'reins' has no attribute {name!r}")
    module, _, attribute = target.partition(":")
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value  # loaded once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:  # for type checkers and IDEs: the same names, imported eagerly
    from reins.cli.diagrams import diagram
    from reins.evals.perturbed import perturb_data
    from reins.evals.report import markdown_report, summary_table, write_report
    from reins.evals.run import run_evaluation
    from reins.evals.scenarios import SCENARIOS, scenario_by_id
    from reins.graphs.assistant import build_graph as build_assistant
    from reins.graphs.delivery_chain import build_graph as build_delivery_chain
    from reins.graphs.tasklist_agent import build_graph as build_tasklist_agent
    from reins.graphs.tasklist_agent import pending_review, resume_command
    from reins.nodes.assistant.approval import open_pauses
    from reins.nodes.assistant.context import AssistantContext
    from reins.nodes.delivery.context import DeliveryContext
    from reins.nodes.tasklist.context import TasklistContext
    from reins.policies.delivery.delegation import DEFAULT_POLICY, DelegationPolicy
    from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS, ReviewerSpec
    from reins.runtime.config.context import ReinsContext
    from reins.runtime.llm.models import ModelSet, RolePolicy
    from reins.runtime.persistence.checkpoint import open_async_checkpointer, open_checkpointer
    from reins.runtime.resources import ResourceResolver
    from reins.runtime.standins.offline import OfflineModel
    from reins.runtime.standins.scripted import ScriptedModel
    from reins.runtime.tools.registry import RegisteredTool
    from reins.runtime.tools.toolbox import default_registry
    from reins.nodes.replay import replay_thread
    from reins.policies.audit.replay import parse_overrides
    from reins.schemas.delivery import ReviewFinding
    from reins.schemas.strict import Strict, bounded_text

"""One checkpointed thread re-decided by its graph's replay: delivery runs by the delegation policy,
the reviewer table and the revision rule (``reins.nodes.delivery.replay``), tasklist runs by the machine's
guard (``reins.policies.audit.tasklist_replay``), assistant turns by the approval and data-flow policies
(``reins.policies.audit.flow_replay``); each run's kept contract outputs by their strict schemas
(``reins.policies.audit.contract_replay``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reins.nodes.delivery.replay import replay_values
from reins.nodes.assistant.state import kept_answer
from reins.policies.audit.contract_replay import recorded_label
from reins.policies.audit.flow_replay import flow_turn, replay_flow_turns
from reins.policies.audit.replay import DEFAULT_OVERRIDES, Overrides, Replay
from reins.policies.audit.tasklist_replay import replay_guard_log


def replay_thread(graph: str, values: Mapping[str, Any], thread_id: str, status: str | None,
                  overrides: Overrides = DEFAULT_OVERRIDES) -> Replay:
    """``values``: the thread's latest checkpointed state; ``status``: its run's recorded status (an
    assistant thread's latest turn's; its earlier turns keep their own, ``flow_turns``).

    Example: ``replay_thread("delivery_chain", result, "t1", result["run_status"], parse_overrides(["max_manager_reasks=0"])).first_flip``
    """
    if graph == "delivery_chain":
        return replay_values(values, thread_id, overrides=overrides)
    if graph == "tasklist_agent":
        log = values.get("guard_log") or []
        return replay_guard_log(log, status, thread_id, overrides, tasklist_contract_outputs(values, log))
    if graph == "assistant":
        kept = list(values.get("flow_turns") or [])
        latest = flow_turn((kept[-1]["turn"] if kept else 0) + 1, status or "incomplete", values.get("flow_log") or [],
                           kept_answer(values))
        return replay_flow_turns([*kept, latest], thread_id, overrides)
    raise ValueError(f"no replay for the {graph} graph")


def tasklist_contract_outputs(values: Mapping[str, Any], log: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The tasklist run's kept contract outputs, each at the guard question of the step that made it:
    the planning decision, and the strategy when the strategy contract wrote it (a proceed decision's
    own strategy is part of the decision). Only the latest of each is kept: a regenerated strategy
    replaces the first."""
    metrics = values.get("contract_metrics") or {}

    def entry(contract: str, action: str, value: Any) -> list[dict[str, Any]]:
        places = [position for position, record in enumerate(log) if record["action"] == action]
        return [{"contract": contract, "at": places[-1], "recorded": recorded_label(metrics, contract),
                 "value": value}] if places else []

    decision, strategy = values.get("decision"), values.get("strategy")
    outputs = entry("tasklist.planning_decision", "planning_decision", decision) if decision else []
    written = int((metrics.get("tasklist.strategy") or {}).get("business_calls") or 0) > 0
    if strategy and written and strategy != (decision or {}).get("strategy"):
        outputs += entry("tasklist.strategy", "decide_strategy", strategy)
    return outputs

"""One checkpointed thread re-decided by its graph's replay: delivery runs by the delegation policy,
the reviewer table and the revision rule (``nodes.delivery.replay``), tasklist runs by the machine's
guard (``policies.tasklist_replay``), assistant turns by the approval and data-flow policies
(``policies.flow_replay``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nodes.delivery.replay import replay_values
from policies.flow_replay import replay_flow_log
from policies.replay import DEFAULT_OVERRIDES, Overrides, Replay
from policies.tasklist_replay import replay_guard_log


def replay_thread(graph: str, values: Mapping[str, Any], thread_id: str, status: str | None,
                  overrides: Overrides = DEFAULT_OVERRIDES) -> Replay:
    """``values``: the thread's latest checkpointed state; ``status``: its run's recorded status."""
    if graph == "delivery_chain":
        return replay_values(values, thread_id, overrides=overrides)
    if graph == "tasklist_agent":
        return replay_guard_log(values.get("guard_log") or [], status, thread_id, overrides)
    if graph == "assistant":
        return replay_flow_log(values.get("flow_log") or [], status, thread_id, overrides)
    raise ValueError(f"no replay for the {graph} graph")

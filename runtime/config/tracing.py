"""Run configuration for tracing. Standard LangSmith variables (LANGSMITH_TRACING, LANGSMITH_API_KEY,
LANGSMITH_PROJECT) work unchanged; Reins adds only allowlisted metadata (policies/audit/tracing.py)."""

from __future__ import annotations

import uuid
from typing import Any

from reins.policies.audit.tracing import allowlisted_metadata


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


def run_config(graph: str, *, thread_id: str | None = None, run_id: str | None = None, **metadata: Any) -> dict[str, Any]:
    """A RunnableConfig naming the run, its thread and its allowlisted metadata."""
    thread_id = thread_id or run_id or new_run_id()
    offered = {"reins_graph": graph, "reins_thread_id": thread_id, "reins_run_id": run_id or thread_id}
    offered.update({f"reins_{k}" if not k.startswith("reins_") else k: v for k, v in metadata.items()})
    return {
        "run_name": graph,
        "tags": [f"reins:{graph}"],
        "metadata": allowlisted_metadata(offered),
        "configurable": {"thread_id": thread_id},
    }

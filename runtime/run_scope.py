"""What a tool may know about the run it serves: the run's context, its store and its thread.

Tools are called by the graph's executor inside a node, so LangGraph's run config is in reach
(``get_config``); called anywhere else (a notebook, a test of the tool alone) there is no run and
each value is ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any



@dataclass(frozen=True)
class RunScope:
    context: Any = None
    store: Any = None
    thread_id: str | None = None

    def setting(self, name: str) -> Any:
        return getattr(self.context, name, None)


def current_run() -> RunScope:
    # Imported here: declaring the tools (reins chat --help, reins doctor) loads no LangGraph.
    from langgraph.config import get_config
    from langgraph.runtime import get_runtime

    try:
        config = get_config()
        runtime = get_runtime()
    except (RuntimeError, KeyError):  # not inside a graph run
        return RunScope()
    thread = (config.get("configurable") or {}).get("thread_id")
    return RunScope(getattr(runtime, "context", None), getattr(runtime, "store", None), thread)

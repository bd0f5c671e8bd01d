"""What a tool may know about the run it serves: the run's context, its store and its thread.

Tools are called by the graph's executor inside a node, so LangGraph's run config is in reach
(``get_config``); called anywhere else (a notebook, a test of the tool alone) there is no run and
each value is ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any



# Where a node that acts for another user than its run's context (a turn resumed from elsewhere acts
# for the user who started it) hands that context to the tools it runs: a key of the run config.
TURN_CONTEXT_KEY = "reins_turn_context"


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
    configurable = config.get("configurable") or {}
    context = configurable.get(TURN_CONTEXT_KEY) or getattr(runtime, "context", None)
    return RunScope(context, getattr(runtime, "store", None), configurable.get("thread_id"))

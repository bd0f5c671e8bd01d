"""What a run remembers about its fallbacks: the models found not there (skipped by its later calls)
and the live progress event that shows a switch to a fallback model (``reins.runtime.llm.model_calls``)."""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict

from reins.runtime.llm.langchain_private import current_config

from reins.policies.text.redaction import redact
from reins.runtime.llm.models import ModelSet


class MissingModels:
    """Models found not there (connection refused, model not found), per model set and run (its
    thread; without one, for ``UNTHREADED_FOR_S``): later calls of the run skip them."""

    UNTHREADED_FOR_S = 600.0
    MAX_RUNS = 256

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (id of the model set, run) → the set (weakly: an id is reused once a set is freed, and a
        # new set must not inherit a freed one's missing models) and its (role, label) → when marked.
        self._runs: OrderedDict[tuple[int, str | None], tuple[weakref.ref, dict[tuple[str, str], float]]] = OrderedDict()

    @staticmethod
    def _run() -> str | None:
        config = current_config()
        thread = (config.get("configurable") or {}).get("thread_id")
        return None if thread is None else str(thread)

    def mark(self, models: ModelSet, role: str, label: str) -> None:
        with self._lock:
            key = (id(models), self._run())
            held = self._runs.get(key)
            if held is None or held[0]() is not models:
                held = self._runs[key] = (weakref.ref(models), {})
            held[1][(role, label)] = time.monotonic()
            while len(self._runs) > self.MAX_RUNS:
                self._runs.popitem(last=False)

    def missing(self, models: ModelSet, role: str, label: str) -> bool:
        run = self._run()
        with self._lock:
            held = self._runs.get((id(models), run))
            marked = held[1].get((role, label)) if held is not None and held[0]() is models else None
        return marked is not None and (run is not None or time.monotonic() - marked < self.UNTHREADED_FOR_S)


MISSING_MODELS = MissingModels()
FALLBACK_STEP = "model-fallback"  # the live progress event a fallback shows as


def announce_fallback(role: str, failed: str, cause: str, next_label: str) -> None:
    """A progress event for the live view (the CLI's, chat's): which model failed, why, which answers."""
    try:
        from langgraph.config import get_stream_writer

        writer = get_stream_writer()
    except (RuntimeError, KeyError):  # not inside a graph run: nobody is watching
        return
    writer({"type": "workflow-progress", "workflow": "", "run_id": "", "step": FALLBACK_STEP, "status": "skipped",
            "title": f"Fallback model for {role}",
            "summary": redact(f"{failed} failed ({cause}); using {next_label}", 200), "duration_ms": 0})

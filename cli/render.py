"""Running a graph from the terminal: live progress, coloured statuses, JSON for machines.

On a terminal the current step shows as a spinner line that is replaced when the step ends; when
output is piped every event is one plain line. Progress goes to stderr so ``--json`` stdout stays
machine-readable.
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from policies.redaction import redact
from policies.terminal_text import printable
from runtime.progress import EVENT_TYPE

_COLOURS = {
    "pass": "32", "final": "32", "completed": "32",
    "needs_review": "33", "needs_changes": "33", "clarification_required": "33",
    "final_with_manual_review_items": "33", "paused": "36", "skipped": "2",
    "blocked": "31", "stopped": "31", "failed": "31",
}


def colour(text: str, status: str, stream: TextIO | None = None) -> str:
    """``text`` in the status' colour on a terminal; unchanged when piped or NO_COLOR is set."""
    import os

    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR") or not getattr(stream, "isatty", lambda: False)():
        return text
    code = _COLOURS.get(status)
    return f"\033[{code}m{text}\033[0m" if code else text


@dataclass
class ProgressView:
    """Renders workflow-progress events; a spinner on a TTY, plain lines otherwise."""

    stream: TextIO = field(default_factory=lambda: sys.stderr)
    _spinner: threading.Thread | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _current: str = ""

    @property
    def interactive(self) -> bool:
        return bool(getattr(self.stream, "isatty", lambda: False)())

    def __call__(self, event: Mapping[str, Any]) -> None:
        if event.get("type") != EVENT_TYPE:
            return
        status, title = event.get("status", ""), printable(redact(event.get("title", ""), 80))
        summary = printable(redact(event.get("summary", ""), 200))
        if self.interactive and status == "running" and event.get("step") not in ("start", "end"):
            self._start_spinner(title)
            return
        self._stop_spinner()
        duration = f" ({event['duration_ms']} ms)" if event.get("duration_ms") else ""
        mark = {"running": "…", "completed": "✓", "failed": "✗", "skipped": "–"}.get(status, "·")
        line = f"{mark} {title}{duration}" + (f" — {summary}" if summary else "")
        self.stream.write(colour(line, status, self.stream) + "\n")
        self.stream.flush()

    def _start_spinner(self, title: str) -> None:
        self._stop_spinner()
        self._current, self._stop = title, threading.Event()

        def spin() -> None:
            for frame in itertools.cycle("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"):
                if self._stop.wait(0.1):
                    break
                self.stream.write(f"\r{frame} {self._current}")
                self.stream.flush()

        self._spinner = threading.Thread(target=spin, daemon=True)
        self._spinner.start()

    def _stop_spinner(self) -> None:
        if self._spinner is not None:
            self._stop.set()
            self._spinner.join()
            self._spinner = None
            self.stream.write("\r\033[K")

    def close(self) -> None:
        self._stop_spinner()


@dataclass
class RunOutcome:
    values: dict[str, Any]
    interrupts: list[Any]


def stream_run(
    graph: Any,
    inputs: Any,
    config: Mapping[str, Any] | None = None,
    context: Any = None,
    view: ProgressView | None = None,
    durability: str | None = None,
    on_reply: Callable[[str], None] | None = None,
) -> RunOutcome:
    """Run ``graph`` to its end or its next interrupt, rendering progress; return state and interrupts.

    ``durability`` is LangGraph's checkpoint persistence mode (``sync``, ``async`` or ``exit``); None
    keeps LangGraph's default. ``on_reply`` gets each piece of a streamed reply's text as it is written.
    """
    view = view or ProgressView()
    values: dict[str, Any] = {}
    interrupts: list[Any] = []
    modes = ["custom", "values", "updates"] + (["messages"] if on_reply else [])
    if on_reply is not None:
        from runtime.reply_stream import REPLY_KEY
    try:
        chunks = graph.stream(
            inputs, config=dict(config or {}), context=context, stream_mode=modes, durability=durability,
        )
        for mode, chunk in chunks:
            if mode == "messages" and on_reply is not None:
                message, metadata = chunk
                if (metadata or {}).get(REPLY_KEY) and isinstance(message.content, str):
                    on_reply(message.content)
            elif mode == "custom" and isinstance(chunk, Mapping):
                view(chunk)
            elif mode == "values" and isinstance(chunk, Mapping):
                values = dict(chunk)
            elif mode == "updates" and isinstance(chunk, Mapping) and "__interrupt__" in chunk:
                interrupts.extend(chunk["__interrupt__"])
    finally:
        view.close()
    return RunOutcome(values=values, interrupts=interrupts)


def print_json(payload: Any, stream: TextIO | None = None) -> None:
    (stream or sys.stdout).write(json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n")

"""Running a graph from the terminal: live progress, coloured statuses, Markdown, tables, JSON.

On a terminal the current step shows as a spinner line that is replaced when the step ends, each
line fitted to the terminal's width; Markdown reports are rendered and tables sized by ``rich``.
When output is piped, or ``NO_COLOR`` is set, everything is plain text (Markdown as written, one
line per event). Progress goes to stderr so ``--json`` stdout stays machine-readable.

Text reaches the terminal through ``write`` (plain text and Markdown) and ``table`` only.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from rich.console import Console

from reins.policies.text.redaction import redact
from reins.policies.text.terminal_text import printable, wrapped
from reins.runtime.execution.progress import EVENT_TYPE

_COLOURS = {
    "pass": "32", "final": "32", "completed": "32",
    "needs_review": "33", "needs_changes": "33", "clarification_required": "33",
    "final_with_manual_review_items": "33", "paused": "36", "skipped": "2",
    "blocked": "31", "stopped": "31", "failed": "31",
}
_RICH_STYLES = {"32": "green", "33": "yellow", "36": "cyan", "2": "dim", "31": "red"}


def styled(stream: TextIO | None = None) -> bool:
    """A terminal that may be styled: a TTY, and ``NO_COLOR`` is not set."""
    stream = stream or sys.stdout
    return not os.environ.get("NO_COLOR") and bool(getattr(stream, "isatty", lambda: False)())


def console_for(stream: TextIO) -> Console:
    """A ``rich`` console on ``stream`` (its width is the terminal's). Text is never read as rich
    markup: a ``[red]`` in a thread id or a model's words prints as written."""
    from rich.console import Console

    return Console(file=stream, highlight=False, emoji=False, markup=False, soft_wrap=False)


def write(text: str, stream: TextIO | None = None, *, markdown: bool = False) -> None:
    """Print ``text`` and a newline; ``markdown=True`` renders it with ``rich`` on a styled terminal.
    Model-written text is made ``printable`` by the caller (our own colours pass through here)."""
    stream = stream or sys.stdout
    if markdown and styled(stream):
        from rich.markdown import Markdown

        console_for(stream).print(Markdown(text))
        return
    stream.write(text + "\n")
    stream.flush()


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], statuses: Sequence[str] = (),
          stream: TextIO | None = None, *, folded: Sequence[str] = ()) -> None:
    """Rows under headers: a ``rich`` table that fits the terminal's width (the ``statuses``, one per
    row, colour it; only the ``folded`` columns wrap, the others stay whole), or one plain line per
    row when piped."""
    stream = stream or sys.stdout
    if not styled(stream):
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
        for line in (headers, *rows):
            write("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip(), stream)
        return
    from rich.table import Table

    grid = Table(box=None, header_style="bold", pad_edge=False)
    for index, header in enumerate(headers):
        whole = header not in folded
        widest = max([len(header), *(len(row[index]) for row in rows)])
        grid.add_column(header, overflow="fold", no_wrap=whole, min_width=widest if whole else None)
    for index, row in enumerate(rows):
        grid.add_row(*row, style=rich_style(statuses[index] if index < len(statuses) else ""))
    console_for(stream).print(grid)


def terminal_width() -> int:
    """The terminal's columns (``COLUMNS`` when set, else what the terminal says, else 80)."""
    import shutil

    return max(20, shutil.get_terminal_size((80, 24)).columns)


def say(text: str, stream: TextIO | None = None) -> None:
    """Our own words and a newline: on a terminal, broken at word boundaries to its width (the
    terminal itself would break mid-word); as written anywhere else."""
    stream = stream or sys.stderr
    if getattr(stream, "isatty", lambda: False)():
        text = wrapped(text, terminal_width())
    stream.write(text + "\n")
    stream.flush()


def write_lines(lines: Sequence[str], statuses: Sequence[str] = (), stream: TextIO | None = None) -> None:
    """Each line as it is, never folded (a command to copy stays one line however narrow the
    terminal), in its status' colour on a styled terminal."""
    stream = stream or sys.stdout
    if not styled(stream):
        for line in lines:
            write(line, stream)
        return
    from rich.text import Text

    console = console_for(stream)
    for index, line in enumerate(lines):
        console.print(Text(line, style=rich_style(statuses[index] if index < len(statuses) else "") or ""),
                      soft_wrap=True)


def fit(line: str, stream: TextIO, reserve: int = 0) -> str:
    """``line`` cut at a word to the terminal's width less ``reserve`` (the cut marked): it never wraps."""
    width = max(20, console_for(stream).width - 1 - reserve)
    return line if len(line) <= width else textwrap.shorten(line, width, placeholder=" …")


@contextmanager
def progress_bar(total: int, stream: TextIO | None = None, console: Console | None = None
                 ) -> Iterator[Callable[[str], None]]:
    """Yield ``advance(line)``, called once per finished item of ``total``: on a styled terminal a
    ``rich`` progress bar with the count, the elapsed time and the ETA (the line as its caption);
    otherwise the line, printed plain."""
    stream = stream or sys.stderr
    if console is None and not styled(stream):
        yield lambda line: write(line, stream)
        return
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)
    from rich.table import Column

    caption = TextColumn("{task.description}", markup=False,
                         table_column=Column(no_wrap=True, overflow="ellipsis", ratio=1))
    columns = (caption, BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("ETA"),
               TimeRemainingColumn())
    with Progress(*columns, console=console or console_for(stream), expand=True) as bar:
        task = bar.add_task("", total=total)
        yield lambda line: bar.update(task, advance=1, description=" ".join(line.split()))


def rich_style(status: str) -> str | None:
    """The ``rich`` style of a status' colour (None: uncoloured)."""
    return _RICH_STYLES.get(_COLOURS.get(status, ""))


def colour(text: str, status: str, stream: TextIO | None = None) -> str:
    """``text`` in the status' colour on a terminal; unchanged when piped or NO_COLOR is set."""
    if not styled(stream):
        return text
    code = _COLOURS.get(status)
    return f"\033[{code}m{text}\033[0m" if code else text


def step_line(event: Mapping[str, Any]) -> str:
    """One progress event as the line a person reads (redacted, printable)."""
    status, title = event.get("status", ""), printable(redact(event.get("title", ""), 200))
    summary = printable(redact(event.get("summary", ""), 200))
    duration = f" ({event['duration_ms']} ms)" if event.get("duration_ms") else ""
    mark = {"running": "…", "completed": "✓", "failed": "✗", "skipped": "–"}.get(status, "·")
    return f"{mark} {title}{duration}" + (f" — {summary}" if summary else "")


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
        status, title = event.get("status", ""), printable(redact(event.get("title", ""), 200))
        if self.interactive and status == "running" and event.get("step") not in ("start", "end"):
            self._start_spinner(title)
            return
        self._stop_spinner()
        line = step_line(event)
        write(colour(fit(line, self.stream) if self.interactive else line, status, self.stream), self.stream)

    def _start_spinner(self, title: str) -> None:
        self._stop_spinner()
        self._current, self._stop = fit(title, self.stream, reserve=2), threading.Event()

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


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run. ``saved``: its checkpoint outlives this process; ``resume``: the command
    that continues it, when there is one."""

    def __init__(self, thread_id: str, saved: bool, resume: str | None):
        super().__init__(thread_id)
        self.thread_id, self.saved, self.resume = thread_id, saved, resume

    def __str__(self) -> str:
        if not self.saved:
            return f"thread {self.thread_id} was checkpointed in memory (REINS_CHECKPOINT=memory) and is gone"
        how = f"; resume with: {self.resume}" if self.resume else ""
        return f"the run is saved as thread {self.thread_id}{how}"


def _interrupted(graph: Any, config: Mapping[str, Any]) -> RunInterrupted:
    """What Ctrl-C left behind, read back from the checkpointer."""
    from langgraph.checkpoint.memory import InMemorySaver

    from reins.runtime.persistence.runs import summarise

    thread_id = str(config.get("configurable", {}).get("thread_id", ""))
    saver = getattr(graph, "checkpointer", None)
    if not thread_id or saver is None or isinstance(saver, InMemorySaver):
        return RunInterrupted(thread_id or "-", saved=False, resume=None)
    summary = summarise(saver, thread_id)
    return RunInterrupted(thread_id, saved=summary is not None, resume=summary.resume if summary else None)


@contextmanager
def _ctrl_c_cancels() -> Iterator[None]:
    """Ctrl-C first cancels every model call the run waits for (``reins.runtime.execution.deadline``), so nodes stop
    at once and LangGraph saves the run, then interrupts as usual."""
    import signal

    from reins.runtime.execution.deadline import cancel, cancellable

    def interrupt(signum: int, frame: Any) -> None:
        cancel()
        raise KeyboardInterrupt

    in_main = threading.current_thread() is threading.main_thread()  # only it may set signal handlers
    previous = signal.signal(signal.SIGINT, interrupt) if in_main else None
    try:
        with cancellable():
            yield
    finally:
        if in_main:
            signal.signal(signal.SIGINT, previous)


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
    Ctrl-C stops the run within moments even while a model call hangs and raises ``RunInterrupted``
    (saying where the run was saved and how to resume it).
    """
    view = view or ProgressView()
    values: dict[str, Any] = {}
    interrupts: list[Any] = []
    modes = ["custom", "values", "updates"] + (["messages"] if on_reply else [])
    if on_reply is not None:
        from reins.runtime.llm.reply_stream import REPLY_KEY
    try:
        with _ctrl_c_cancels():
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
    except KeyboardInterrupt:
        view.close()
        raise _interrupted(graph, config or {}) from None
    finally:
        view.close()
    return RunOutcome(values=values, interrupts=interrupts)


def print_json(payload: Any, stream: TextIO | None = None) -> None:
    (stream or sys.stdout).write(json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n")

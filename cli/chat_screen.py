"""One chat turn on a terminal, as the chat CLIs people use show it: the steps as live progress until
the reply starts, then the reply rendered as Markdown with ``rich`` while it is written, and kept.

The reply is a ``rich`` live region at the bottom of the screen; a step that ends while it is shown
is printed above it, so no progress line ever lands on the reply. A second draft (the check sent the
turn back to its tools) replaces the first in place, and ``finish`` replaces the draft with the
checked reply, so what stays on screen is always the checked text.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from typing import Any, TextIO

from reins.policies.text.terminal_text import printable, wrapped
from reins.cli.render import ProgressView, console_for, fit, rich_style, step_line
from reins.runtime.execution.progress import EVENT_TYPE

REFRESH_SECONDS = 0.05  # a long reply is re-rendered at most this often while it streams
PROMPT = "assistant>"
_REJECTED_STEP = "error; rejected by the user"  # how a tool step the user declined ends


def as_decision(event: Mapping[str, Any]) -> Mapping[str, Any]:
    """A tool step the user declined is the user's decision, shown as such: not a red failure."""
    summary = str(event.get("summary", ""))
    if event.get("status") == "failed" and summary.endswith(_REJECTED_STEP):
        return {**event, "status": "skipped", "summary": summary[: -len(_REJECTED_STEP)] + "declined by you"}
    return event


def declined(records: Any) -> list[str]:
    """The tools of this turn's calls the user declined (their observation is the rejection's)."""
    from reins.policies.tools.calls import rejection_observation

    prefix = rejection_observation("")
    return [str(r.get("tool")) for r in records or () if not r.get("ok") and str(r.get("output", "")).startswith(prefix)]


class ChatProgress(ProgressView):
    """The plain progress view of a chat turn (a pipe, ``NO_COLOR``), a declined call shown as such."""

    def __call__(self, event: Mapping[str, Any]) -> None:
        super().__call__(as_decision(event))


class ChatScreen:
    """Progress events (``stream_run``'s view) and reply pieces (its ``on_reply``) of one turn."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None):
        self.out, self.err = out or sys.stdout, err or sys.stderr
        self.view = ChatProgress(self.err)
        self.console = console_for(self.out)
        self.text = ""
        self._live: Any = None
        self._sealed = False  # a step ended after the last piece: the next piece starts a new draft
        self._shown_at = 0.0
        self._kept = ""  # the reply text a stopped live region left on screen

    def rendered(self, text: str, plain: bool = False) -> Any:
        """The reply beside the prompt, as Markdown; ``plain`` (a command's output: help, a task
        list) as the lines it is, at the full width, each broken at words with its continuation under
        its own text, so no column or ``<placeholder>`` is lost to Markdown."""
        from rich.markdown import Markdown
        from rich.table import Table
        from rich.text import Text

        if plain:
            return Text(wrapped(f"{PROMPT} {text}", self.console.width))
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True, style="bold")
        grid.add_column(ratio=1)
        grid.add_row(PROMPT, Markdown(text or "…"))
        return grid

    # --- progress events (stream_run calls the view, then close at the end of every run)
    def __call__(self, event: Mapping[str, Any]) -> None:
        shared = bool(getattr(self.err, "isatty", lambda: False)())  # stderr on the same screen
        event = as_decision(event)
        if self._live is None or not shared:
            self.view(event)
            return
        if event.get("type") != EVENT_TYPE or event.get("status") == "running":
            return
        self._sealed = True
        from rich.text import Text

        style = rich_style(str(event.get("status", "")))
        self._live.console.print(Text(fit(step_line(event), self.out), style=style or ""))

    def close(self) -> None:
        self.view.close()

    # --- the reply
    def reply(self, piece: str) -> None:
        if self._sealed:
            self.text, self._sealed = "", False
        self.text += printable(piece)  # model-written: no escape sequence reaches the terminal
        if self._live is None:
            from rich.live import Live

            self.view.close()  # the spinner's line is cleared before the reply starts
            self._live = Live(self.rendered(self.text), console=self.console, auto_refresh=False,
                              vertical_overflow="visible")
            self._live.start()
        now = time.monotonic()
        due = now - self._shown_at >= REFRESH_SECONDS
        self._live.update(self.rendered(self.text), refresh=due)
        if due:
            self._shown_at = now

    def finish(self, checked: str, plain: bool = False) -> None:
        """Show the checked reply: in place of the streamed draft, or printed when none streamed."""
        self.view.close()
        if self._live is None:
            if checked != self._kept:  # not already on screen (the turn paused after its reply)
                self.console.print(self.rendered(checked, plain))
            return
        self._live.update(self.rendered(checked, plain), refresh=True)
        self.stop()

    def stop(self) -> None:
        """End the live region; what it shows stays on screen (a cancelled turn's draft too)."""
        self.view.close()
        if self._live is not None:
            self._live.stop()
            self._live, self._kept = None, self.text

    def __enter__(self) -> ChatScreen:
        return self

    def __exit__(self, *_: Any) -> None:
        self.stop()

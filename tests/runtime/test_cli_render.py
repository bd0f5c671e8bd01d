"""Terminal rendering: a spinner and colours on a terminal, plain lines when piped; reins --version."""

from __future__ import annotations

import io
import re
import time

import pytest

from reins.cli import main
from reins.cli.render import ProgressView, colour
from reins.runtime.execution.progress import EVENT_TYPE

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
SECRET = "sk-abcdefghijklmnopqrstuvwx"


class Terminal(io.StringIO):
    """A stream that says it is a TTY."""

    def isatty(self) -> bool:
        return True


def event(step: str, status: str, title: str, summary: str = "", duration_ms: int = 0) -> dict:
    return {
        "type": EVENT_TYPE, "workflow": "tasklist_agent", "run_id": "r", "step": step, "status": status,
        "title": title, "summary": summary, "duration_ms": duration_ms,
    }


RUN = [
    event("start", "running", "Tasklist agent"),
    event("read-plan", "running", "Read the version plan"),
    event("read-plan", "completed", "Read the version plan", "docs://versions/v1.md (900 chars)", 3),
    event("revise-v2", "skipped", "Revise to v2", "nothing to fix now"),
    event("draft-v1", "failed", "Draft task list v1", "ContractError"),
    event("end", "completed", "Run finished", "final"),
]


@pytest.fixture
def colours_allowed(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)


def test_piped_output_is_one_plain_line_per_event(colours_allowed):
    piped = io.StringIO()
    view = ProgressView(stream=piped)
    for item in RUN:
        view(item)
    view.close()

    out = piped.getvalue()
    assert not ANSI.search(out) and "\r" not in out
    assert out.splitlines() == [
        "… Tasklist agent",
        "… Read the version plan",
        "✓ Read the version plan (3 ms) — docs://versions/v1.md (900 chars)",
        "– Revise to v2 — nothing to fix now",
        "✗ Draft task list v1 — ContractError",
        "✓ Run finished — final",
    ]


def test_a_terminal_gets_a_spinner_that_the_finished_step_replaces(colours_allowed):
    tty = Terminal()
    view = ProgressView(stream=tty)
    view(event("read-plan", "running", "Read the version plan"))
    deadline = time.monotonic() + 5
    while "\r" not in tty.getvalue() and time.monotonic() < deadline:  # the spinner ticks every 0.1 s
        time.sleep(0.02)
    view(event("read-plan", "completed", "Read the version plan", "ok", 3))
    view.close()

    out = tty.getvalue()
    spinning, _, finished = out.partition("\r\x1b[K")
    assert re.search(r"\r[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Read the version plan", spinning)
    assert "… Read the version plan" not in out  # a running step is a spinner, not a line
    assert finished == "\x1b[32m✓ Read the version plan (3 ms) — ok\x1b[0m\n"


@pytest.mark.parametrize(
    ("status", "code"),
    [("final", "32"), ("pass", "32"), ("final_with_manual_review_items", "33"), ("needs_review", "33"),
     ("paused", "36"), ("blocked", "31"), ("stopped", "31"), ("failed", "31")],
)
def test_statuses_are_coloured_on_a_terminal_only(colours_allowed, monkeypatch, status, code):
    assert colour("Final decision", status, Terminal()) == f"\x1b[{code}mFinal decision\x1b[0m"
    assert colour("Final decision", status, io.StringIO()) == "Final decision"
    monkeypatch.setenv("NO_COLOR", "1")
    assert colour("Final decision", status, Terminal()) == "Final decision"


def test_progress_lines_are_redacted_and_other_stream_items_ignored(colours_allowed):
    piped = io.StringIO()
    view = ProgressView(stream=piped)
    view({"type": "something-else", "title": SECRET})
    view(event("draft-v1", "failed", f"Draft with {SECRET}", f"failed reading /home/alice/{SECRET}"))
    out = piped.getvalue()
    assert SECRET not in out and "/home/alice" not in out
    assert out.count("\n") == 1 and out.startswith("✗ Draft with")


def test_reins_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert re.fullmatch(r"reins \d+\.\d+\.\d+\S*\n", capsys.readouterr().out)

"""Terminal output through ``rich``: Markdown rendered and tables fitted on a terminal; plain text when
piped, with ``NO_COLOR`` or with ``--json``; a progress bar with count and ETA for eval and bench."""

from __future__ import annotations

import io
import json
import sys

import pytest
from rich.console import Console

from reins.cli import main, render
from reins.cli.render import ProgressView, progress_bar
from reins.runtime.execution.progress import EVENT_TYPE


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def terminal(monkeypatch):
    """stdout and stderr are terminals; everything rich draws is recorded on one 80-column console."""
    monkeypatch.delenv("NO_COLOR", raising=False)
    for name in ("REINS_MODEL", "REINS_CHECKPOINT_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("REINS_CHECKPOINT", "sqlite")
    console = Console(file=io.StringIO(), record=True, force_terminal=True, width=80, color_system="standard")
    monkeypatch.setattr(render, "console_for", lambda stream: console)
    return console


@pytest.fixture
def ttys(monkeypatch):
    """Make stdout and stderr terminals (in the test itself: pytest re-captures them after setup)."""
    def make() -> None:
        monkeypatch.setattr(sys, "stdout", Terminal())
        monkeypatch.setattr(sys, "stderr", Terminal())
    return make


def test_a_report_is_rendered_markdown_on_a_terminal(terminal, ttys):
    ttys()
    assert main(["deliver", "--scenario", "sso-security-blocker"]) == 3
    shown = terminal.export_text(clear=False)
    assert "Delivery report" in shown and "Status: blocked" in shown
    assert "**Status" not in shown and "# Delivery report" not in shown and "|---" not in shown
    assert all(len(line) <= 80 for line in shown.splitlines())
    assert "\x1b[1m" in terminal.export_text(styles=True)  # bold, for real
    assert sys.stdout.getvalue() == ""  # the report went through rich, not printed raw


@pytest.mark.parametrize("how", ["NO_COLOR", "--json", "piped"])
def test_plain_markdown_with_no_color_json_or_a_pipe(terminal, ttys, monkeypatch, how):
    ttys()
    argv = ["deliver", "--scenario", "sso-security-blocker"]
    if how == "NO_COLOR":
        monkeypatch.setenv("NO_COLOR", "1")
    elif how == "--json":
        argv.append("--json")
    else:
        monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert main(argv) == 3
    out = sys.stdout.getvalue()
    report = json.loads(out)["report"] if how == "--json" else out
    assert report.startswith("# Delivery report") and "**Status: blocked**" in report and "\x1b[" not in out
    assert terminal.export_text() == ""


def test_the_runs_table_fits_the_terminal(terminal, ttys):
    ttys()
    threads = []
    for _ in range(2):
        sys.stdout = Terminal()
        assert main(["deliver", "--scenario", "request-limit-banner", "--json"]) == 0
        threads.append(json.loads(sys.stdout.getvalue())["thread_id"])
    assert main(["runs"]) == 0
    shown = terminal.export_text()
    lines = shown.splitlines()
    assert all(len(line) <= 80 for line in lines) and len(lines) >= 3
    assert lines[0].split()[:3] == ["thread", "graph", "status"]
    assert all(any(thread in line for line in lines) for thread in threads)  # ids stay whole


def test_table_cells_and_markdown_are_never_read_as_markup(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    tty = Terminal()  # the real console on a terminal stream
    render.table(("thread", "status"), [("chat-[red]x[/red]", "pass")], ["pass"], tty)
    render.write("Use [bold]this[/bold] as written.", tty, markdown=True)
    assert "chat-[red]x[/red]" in tty.getvalue() and "[bold]this[/bold]" in tty.getvalue()


def test_step_lines_are_cut_at_a_word_to_the_terminal_width(terminal):
    tty = Terminal()
    view = ProgressView(stream=tty)
    title = "Review the delivery against the engineering rules, the boundaries document and the rubrics"
    view({"type": EVENT_TYPE, "step": "review", "status": "completed", "title": title, "summary": "", "duration_ms": 5})
    (line,) = tty.getvalue().splitlines()
    text = line.replace("\x1b[32m", "").replace("\x1b[0m", "")
    assert len(text) <= 79 and text.endswith(" …") and len(f"✓ {title} (5 ms)") > 80
    assert text.removesuffix(" …").split()[-1] in title.split()  # whole words only
    piped = io.StringIO()
    ProgressView(stream=piped)({"type": EVENT_TYPE, "step": "review", "status": "completed", "title": title,
                                "summary": "", "duration_ms": 5})
    assert piped.getvalue() == f"✓ {title} (5 ms)\n"  # piped: the whole line


def test_a_progress_bar_with_count_and_eta_on_a_terminal_plain_lines_otherwise():
    console = Console(file=io.StringIO(), record=True, force_terminal=True, width=100)
    with progress_bar(4, console=console) as advance:
        for index in range(3):
            advance(f"run {index}")
    shown = console.export_text()
    assert "3/4" in shown and "ETA" in shown and "run 2" in shown

    piped = io.StringIO()
    with progress_bar(2, piped) as advance:
        advance("first line")
        advance("second line")
    assert piped.getvalue() == "first line\nsecond line\n"


def test_reins_eval_shows_its_progress_bar_on_a_terminal(terminal, ttys, tmp_path):
    ttys()
    assert main(["eval", "--repeats", "1", "--scenario", "direct-pass", "--out", str(tmp_path)]) == 0
    shown = terminal.export_text()
    # five baselines (the chain with fallbacks, and with escalation too), one scenario, one repeat
    assert "5/5" in shown and "ETA" in shown
    table = shown[shown.index("━━ 5/5"):].split("\n", 1)[1]
    assert "single" in table and "chain" in table and "|---" not in table  # the results, a rendered table
    assert all(len(line) <= 80 for line in table.splitlines())


def _many_runs(count: int) -> list[str]:
    """``count`` finished and unfinished runs of the three graphs, written as the CLI writes them."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    from reins.runtime.persistence.checkpoint import checkpointer_from_settings
    from reins.runtime.config.settings import Settings
    from reins.runtime.config.tracing import run_config

    class State(TypedDict, total=False):
        run_status: str

    builder = StateGraph(State)
    builder.add_node("work", lambda state: {})
    builder.add_edge(START, "work")
    builder.add_edge("work", END)
    graphs = ("delivery_chain", "tasklist_agent", "assistant")
    statuses = ("final_with_manual_review_items", "needs_review", "pass")
    threads = []
    with checkpointer_from_settings(Settings.from_env()) as saver:
        graph = builder.compile(checkpointer=saver)
        for index in range(count):
            thread = f"{graphs[index % 3].split('_')[0]}-{index:02d}0123456789ab"
            config = run_config(graphs[index % 3], thread_id=thread)
            if index % 4 == 0:  # stopped before its end: incomplete, with the command that continues it
                graph.update_state(config, {"run_status": ""}, as_node="__start__")
            else:
                graph.invoke({"run_status": statuses[index % 3]}, config)
            threads.append(thread)
    return threads


def test_runs_are_one_line_each_at_80_columns_and_wide_shows_the_resume_commands(terminal, ttys, reins_home):
    ttys()
    threads = _many_runs(21)
    assert main(["runs", "--limit", "50"]) == 0
    lines = terminal.export_text().splitlines()
    assert lines[0].split() == ["thread", "graph", "status", "age"]
    assert len(lines) == 1 + 21
    assert sys.stdout.getvalue() == "reins runs --wide: the command that continues each run\n"
    assert all(len(line) <= 80 for line in lines)
    for thread in threads:  # one line per run, its id whole
        (line,) = [line for line in lines if thread in line]
        assert line.rstrip().endswith(("now", "m ago"))
    assert "final_with_manual_r…" in "\n".join(lines)  # a long status is cut, never wrapped

    terminal.export_text()  # (clears what was recorded)
    assert main(["runs", "--limit", "50", "--wide"]) == 0  # still 80 columns: every command whole, on its own line
    wide = terminal.export_text().splitlines()
    assert wide[0].split() == ["thread", "graph", "status", "updated", "(UTC)"]
    assert "  reins deliver --resume delivery-000123456789ab" in wide
    commands = 0
    for thread in threads:  # its line, and under it the command that continues it (when there is one)
        (at,) = [index for index, line in enumerate(wide) if line.startswith(thread)]
        if at + 1 < len(wide) and wide[at + 1].startswith("  "):
            assert wide[at + 1].startswith("  reins ") and thread in wide[at + 1]
            commands += 1
    assert commands == len(wide) - 1 - len(threads) >= 7  # the chats and the incomplete runs at least


@pytest.mark.parametrize(
    ("seconds", "label"), [(0, "now"), (59, "now"), (60, "1m ago"), (7200, "2h ago"), (3 * 86400 + 5, "3d ago")]
)
def test_run_age_is_the_largest_whole_unit(seconds, label):
    from datetime import datetime, timedelta, timezone

    from reins.cli.runs import age

    now = datetime(2026, 1, 2, tzinfo=timezone.utc)
    assert age((now - timedelta(seconds=seconds)).isoformat(), now) == label
    assert age("not a time", now) == "-"

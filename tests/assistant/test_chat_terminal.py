"""``reins chat`` on a real terminal: a pseudo-terminal of 80 columns, its output fed to a terminal
emulator (``pyte``) so a line that is overwritten or erased is caught as a person would see it."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pexpect
import pyte
import pytest

from tests.wire.behaviours import cooperative, schema_name
from tests.wire.conftest import KEY, stub  # noqa: F401  # the stub provider fixture

ROOT = Path(__file__).resolve().parents[2]
COLUMNS, ROWS = 80, 40
WAIT_S = 120  # only a bound on a broken run: every wait below ends on what the program writes or asks
PROMPT = "you>"  # the line editor draws the prompt, then moves the cursor past its space


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REINS_", "OPENAI_", "NO_COLOR"))}
    env.update(REINS_HOME=str(home), PYTHONPATH=str(ROOT), TERM="xterm-256color", COLUMNS=str(COLUMNS),
               LINES=str(ROWS),
               PROMPT_TOOLKIT_NO_CPR="1")  # pexpect answers no cursor-position request
    env.update(extra)
    return env


class Screen:
    """What a terminal of COLUMNS × ROWS shows after everything the program wrote."""

    def __init__(self, rows: int = ROWS) -> None:
        self.screen = pyte.Screen(COLUMNS, rows)
        self.stream = pyte.Stream(self.screen)

    def feed(self, data: str) -> None:
        self.stream.feed(data)

    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]


def _ctrl_c_as_on_a_terminal() -> None:
    """Ctrl-C reaches the program as in a terminal's shell even when the suite itself was started in
    the background (where SIGINT is inherited ignored, and Python then keeps it ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _spawn(args: list[str], env: dict[str, str], cwd: Path, rows: int = ROWS) -> pexpect.spawn:
    """The command on a pseudo-terminal; everything it writes is kept in ``child.logfile_read``."""
    child = pexpect.spawn(sys.executable, ["-m", "reins.cli", *args], env=env, cwd=str(cwd), encoding="utf-8",
                          dimensions=(rows, COLUMNS), timeout=WAIT_S, preexec_fn=_ctrl_c_as_on_a_terminal)
    child.logfile_read = io.StringIO()
    return child


def _reading_the_prompt(child: pexpect.spawn) -> None:
    """Wait until the program blocks in its prompt's read (Linux: its main thread's kernel wait, a
    terminal read or readline's select). ``input()`` looks for a signal only when that wait is
    interrupted, so a Ctrl-C that lands between the prompt being written and the wait starting is
    not seen until the next key."""
    wchan = Path(f"/proc/{child.pid}/wchan")
    if not wchan.exists():  # no /proc: nothing to wait on
        return
    deadline = time.monotonic() + WAIT_S  # only a bound on a broken run
    while not any(word in wchan.read_text() for word in ("wait_woken", "n_tty_read", "poll", "select")):
        assert child.isalive() and time.monotonic() < deadline
        time.sleep(0.01)


def test_chat_once_leaves_the_answer_on_the_final_screen(tmp_path):
    child = _spawn(["chat", "--once", "what is 2+2?"], _env(tmp_path / "home"), tmp_path)
    child.expect(pexpect.EOF)
    child.close()
    screen = Screen()
    screen.feed(child.logfile_read.getvalue())
    lines = screen.lines()
    assert child.exitstatus == 0, "\n".join(lines)
    answer = [line for line in lines if line.startswith("assistant>")]
    assert answer == ["assistant> 2+2 = 4."], "\n".join(lines)
    shown = "\n".join(lines)
    # The steps that end after the reply started are printed above it, never over it.
    assert shown.index("Write the answer") < shown.index("assistant> 2+2 = 4.") < shown.index("[success]")
    assert all(len(line) <= COLUMNS for line in lines)


def test_ctrl_c_cancels_the_turn_returns_to_the_prompt_and_the_thread_resumes(stub, tmp_path):  # noqa: F811
    asked, released = threading.Event(), threading.Event()

    def answer(body):
        if schema_name(body) == "AssistantIntent" and not released.is_set():
            asked.set()
            released.wait()  # the provider hangs until the test lets it answer: only Ctrl-C can end the turn
        return cooperative(body)

    provider = stub(answer)
    home = tmp_path / "home"
    env = _env(home, REINS_MODEL="stub-model", OPENAI_BASE_URL=provider.base_url, OPENAI_API_KEY=KEY)
    child = _spawn(["chat", "--new-thread", "mine"], env, tmp_path)
    screen = Screen()
    try:
        child.expect(PROMPT)
        child.sendline("what is (17+25)*3?")
        assert asked.wait(WAIT_S) and child.isalive()
        child.sendintr()
        child.expect(r"turn cancelled: (.*)Ctrl-C\s+again\s+quits\.")  # while the provider still hangs
        assert "saved as thread mine" in " ".join(child.match.group(1).split())  # (broken at words to 80 columns)
        child.expect(PROMPT)  # back at the prompt: the chat goes on

        # The cancelled thread is listed as the assistant's, with the command that continues it.
        listed = subprocess.run([sys.executable, "-m", "reins.cli", "runs", "--json"], env=env, cwd=tmp_path,
                                capture_output=True, text=True, timeout=WAIT_S)
        (run,) = json.loads(listed.stdout)["runs"]
        assert run["thread_id"] == "mine" and run["graph"] == "assistant"
        assert run["status"] == "incomplete" and run["resume"] == "reins chat --thread mine"

        released.set()
        child.sendline("/retry")  # runs the cancelled turn again: finished from where it stopped
        child.expect("finishing the interrupted turn")
        child.expect(r"\[success\]")
        child.expect(PROMPT)
        _reading_the_prompt(child)
        child.sendintr()  # Ctrl-C at the prompt: a hint first …
        child.expect("Ctrl-C again")
        child.expect(PROMPT)
        _reading_the_prompt(child)
        child.sendintr()  # … and a second one quits
        child.expect(pexpect.EOF)
    finally:
        released.set()
        if child.isalive():
            child.terminate(force=True)
    child.close()
    assert child.exitstatus == 130
    screen.feed(child.logfile_read.getvalue())
    shown = "\n".join(screen.lines())
    assert "assistant> (17+25)*3 = 126." in shown and "Traceback" not in shown

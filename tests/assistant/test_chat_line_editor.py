"""``reins chat``'s line editor on a terminal of 80 × 24 (a pseudo-terminal read back through
``pyte``): history recalled across sessions, a bracketed paste sent as one message, slash-command
completion, ``reins chat -c`` continuing the last chat; and plain ``input()`` when standard input
is not a terminal."""

from __future__ import annotations

import subprocess
import sys

import pexpect

from cli.chat_input import HISTORY_FILE, ChatInput, slash_completions
from tests.assistant.test_chat_terminal import PROMPT, WAIT_S, Screen, _env, _spawn

ROWS = 24
UP, ENTER = "\x1b[A", "\r"
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"


def _chat(home, cwd, *args):
    """``reins chat`` on the terminal, waiting at its first prompt."""
    child = _spawn(["chat", *args], _env(home, LINES=str(ROWS)), cwd, rows=ROWS)
    child.expect(PROMPT)
    return child


def _ended(child: pexpect.spawn) -> list[str]:
    """Ctrl-D at the prompt ends the chat (exit 0); the screen it leaves."""
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    screen = Screen(ROWS)
    screen.feed(child.logfile_read.getvalue())
    assert child.exitstatus == 0, "\n".join(screen.lines())
    return screen.lines()


def _turn(child: pexpect.spawn, keys: str) -> tuple[str, str]:
    """Type ``keys`` at the prompt: what the turn wrote up to the next prompt, and the screen then."""
    child.send(keys)
    child.expect(r"\[(success|partial|failure)\]")
    written = child.before + child.after
    child.expect(PROMPT)
    screen = Screen(ROWS)
    screen.feed(child.logfile_read.getvalue())
    return written, "\n".join(screen.lines())


def test_up_recalls_the_last_session_and_a_paste_is_one_message(tmp_path):
    home = tmp_path / "home"
    first = _chat(home, tmp_path)
    assert "2+2 = 4." in _turn(first, "what is 2+2?" + ENTER)[0]
    _ended(first)
    assert (home / HISTORY_FILE).stat().st_mode & 0o077 == 0  # what was typed is its owner's only

    second = _chat(home, tmp_path, "-c")  # the last chat, continued
    recalled, shown = _turn(second, UP + ENTER)  # a new session: Up brings back the last one's message
    assert "2+2 = 4." in recalled and "you> what is 2+2?" in shown
    assert "2 earlier message(s)" in recalled  # the first session's question and answer
    pasted, shown = _turn(second, PASTE_START + "what is 3+3?\nsecond line\nthird line" + PASTE_END + ENTER)
    assert pasted.count("Assistant turn") == 1 and "3+3 = 6." in pasted  # three lines, one turn
    assert "you> what is 3+3?\n.... second line\n.... third line\n" in shown
    _ended(second)


def test_tab_completes_a_slash_command_and_help_is_answered(tmp_path):
    child = _chat(tmp_path / "home", tmp_path)
    helped, _ = _turn(child, "/he\t" + ENTER)
    assert "Commands:" in helped
    _ended(child)


def test_slash_completion_only_completes_a_first_slash_word():
    commands = [("/help", "list"), ("/tasklist", "plan"), ("/multi", "mode")]
    assert slash_completions("/", commands) == commands
    assert slash_completions("/t", commands) == [("/tasklist", "plan")]
    assert slash_completions("/HE", commands) == [("/help", "list")]
    assert slash_completions("/help", commands) == []  # already whole
    assert slash_completions("/tasklist docs", commands) == []
    assert slash_completions("what /h", commands) == []


def test_multi_line_mode_switches_and_says_what_enter_does():
    reader = ChatInput(None, interactive=False)
    assert reader.toggle_multi_line().startswith("multi-line mode") and reader.multi_line
    assert reader.toggle_multi_line().startswith("single-line mode") and not reader.multi_line


def test_piped_input_is_one_message_per_line(tmp_path):
    env = _env(tmp_path / "home")
    done = subprocess.run([sys.executable, "-m", "cli", "chat"], input="what is 2+2?\nwhat is 3+3?\n", env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=WAIT_S)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("[success]") == 2 and "3+3 = 6." in done.stdout
    assert not (tmp_path / "home" / HISTORY_FILE).exists()  # no line editor, no history kept

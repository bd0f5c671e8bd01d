"""``reins chat``'s line editor on a terminal of 80 × 24 (a pseudo-terminal read back through
``pyte``): history recalled across sessions, a bracketed paste sent as one message, slash-command
completion, ``reins chat -c`` continuing the last chat; and plain ``input()`` when standard input
is not a terminal."""

from __future__ import annotations

import subprocess
import sys

import pexpect
import pyte

from reins.cli.chat_input import HISTORY_FILE, ChatInput, slash_completions
from tests.assistant.test_chat_terminal import COLUMNS, PROMPT, WAIT_S, _env, _spawn

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
    lines = _scrolled(child)
    assert child.exitstatus == 0, "\n".join(lines)
    return lines


def _turn(child: pexpect.spawn, keys: str) -> tuple[str, str]:
    """Type ``keys`` at the prompt: what the turn wrote up to the next prompt, and the screen then."""
    child.send(keys)
    child.expect(r"\[(success|partial|failure)\]")
    written = child.before + child.after
    child.expect(PROMPT)
    return written, "\n".join(_scrolled(child))


def _scrolled(child: pexpect.spawn) -> list[str]:
    """Every line the terminal showed so far: those scrolled off the top, then the screen."""
    screen = pyte.HistoryScreen(COLUMNS, ROWS, history=2000)
    pyte.Stream(screen).feed(child.logfile_read.getvalue())
    above = ["".join(line[x].data for x in range(COLUMNS)).rstrip() for line in screen.history.top]
    return above + [line.rstrip() for line in screen.display]


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


def _broken_mid_word(lines: list[str]) -> list[str]:
    """Lines the terminal itself broke inside a word: full to the last column, the next one going on."""
    return [f"{line}|{after}" for line, after in zip(lines, lines[1:])
            if len(line) == COLUMNS and line[-1] != " " and after[:1] not in ("", " ")]


def test_help_is_one_command_a_line_and_nothing_breaks_mid_word(tmp_path):
    child = _chat(tmp_path / "home", tmp_path)
    helped, shown = _turn(child, "/he\t" + ENTER)  # Tab completes the command
    lines = shown.splitlines()
    assert "you> /help" in lines
    starts = [line.split("  ")[1] for line in lines if line.startswith("  /")]
    assert starts == ["/help", "/tasklist docs://versions/<plan>.md", "/delivery-chain <requirement>",
                      "/retry", "/multi", "/image", "/exit"]  # the assistant's, then the terminal's own
    _, shown = _turn(child, "what is 2+2?" + ENTER)
    assert "  budget (used/worst case): calls" in shown
    lines = _ended(child)
    assert _broken_mid_word(lines) == []
    assert any(line.startswith("Reins assistant") for line in lines)


def test_a_line_the_terminal_broke_is_told_from_one_wrapped_at_a_word():
    assert _broken_mid_word(["x" * (COLUMNS - 1) + "l", "eave."]) == ["x" * (COLUMNS - 1) + "l|eave."]
    assert _broken_mid_word(["x" * (COLUMNS - 1), "leave."]) == []


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
    done = subprocess.run([sys.executable, "-m", "reins.cli", "chat"], input="what is 2+2?\nwhat is 3+3?\n", env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=WAIT_S)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("[success]") == 2 and "3+3 = 6." in done.stdout
    assert not (tmp_path / "home" / HISTORY_FILE).exists()  # no line editor, no history kept

"""Cancel means cancel (``reins chat`` on a pseudo-terminal, a stub provider that hangs until the
test lets it answer): after Ctrl-C the next message is a new turn and ``/retry`` runs the cancelled
one again; a cancelled turn is never finished on other models than it started on."""

from __future__ import annotations

import re
import subprocess
import sys
import threading

import pexpect
import pytest

from tests.assistant.test_chat_terminal import PROMPT, WAIT_S, _env, _reading_the_prompt, _spawn
from tests.wire.behaviours import cooperative, schema_name
from tests.wire.conftest import KEY, stub  # noqa: F401  # the stub provider fixture

CANCELLED = "what is (17+25)*3?"
NEXT = "and what is 2+2?"


def _messages(home, thread: str) -> list[tuple[str, str]]:
    """(type, text) of the thread's checkpointed conversation."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(str(home / "checkpoints.db")) as saver:
        item = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
    return [(m.type, str(m.content)) for m in item.checkpoint["channel_values"]["messages"]]


@pytest.fixture
def hanging(stub):  # noqa: F811
    """A provider whose first intent request hangs until ``released`` is set."""
    asked, released = threading.Event(), threading.Event()

    def answer(body):
        if schema_name(body) == "AssistantIntent" and not released.is_set():
            asked.set()
            released.wait()
        return cooperative(body)

    yield stub(answer), asked, released
    released.set()


def _cancel_first_turn(child, asked) -> None:
    child.expect(PROMPT)
    child.sendline(CANCELLED)
    assert asked.wait(WAIT_S) and child.isalive()
    child.sendintr()
    child.expect(r"turn cancelled: .*/retry\s+runs\s+it\s+again;\s+your\s+next\s+message\s+starts\s+a\s+new\s+turn")
    child.expect(PROMPT)


def test_after_ctrl_c_the_next_message_is_a_new_turn_and_retry_runs_the_cancelled_one(hanging, tmp_path):
    provider, asked, released = hanging
    home = tmp_path / "home"
    env = _env(home, REINS_MODEL="stub-model", OPENAI_BASE_URL=provider.base_url, OPENAI_API_KEY=KEY)
    child = _spawn(["chat", "--new-thread", "mine"], env, tmp_path)
    try:
        _cancel_first_turn(child, asked)
        released.set()
        child.sendline(NEXT)  # a new turn: the cancelled one is not run first, the message not dropped
        child.expect(r"\[success\]")
        assert "finishing" not in child.before
        child.expect(PROMPT)
        assert [kind for kind, _ in _messages(home, "mine")] == ["human", "human", "ai"]
        child.sendline("/retry")
        child.expect(r"\[success\]")
        child.expect(PROMPT)
        _reading_the_prompt(child)
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
    finally:
        released.set()
        if child.isalive():
            child.terminate(force=True)
    child.close()
    assert child.exitstatus == 0
    asked_in_order = [text for kind, text in _messages(home, "mine") if kind == "human"]
    assert asked_in_order == [CANCELLED, NEXT, CANCELLED]  # cancelled, the next message, the retry
    assert [kind for kind, _ in _messages(home, "mine")] == ["human", "human", "ai", "human", "ai"]


def test_a_cancelled_turn_is_not_finished_on_other_models(hanging, tmp_path):
    provider, asked, released = hanging
    home = tmp_path / "home"
    env = _env(home, REINS_MODEL="stub-model", OPENAI_BASE_URL=provider.base_url, OPENAI_API_KEY=KEY)
    child = _spawn(["chat", "--new-thread", "mine"], env, tmp_path)
    try:
        _cancel_first_turn(child, asked)
        _reading_the_prompt(child)
        child.sendintr()  # right after a cancel, Ctrl-C quits
        child.expect(pexpect.EOF)
    finally:
        released.set()
        if child.isalive():
            child.terminate(force=True)
    child.close()
    # The chat continued on the offline stand-in: the stub's turn is not finished there.
    done = subprocess.run([sys.executable, "-m", "reins.cli", "chat", "-c", "--once", NEXT], env=_env(home),
                          cwd=tmp_path, capture_output=True, text=True, timeout=WAIT_S)
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stderr.split())
    assert "the interrupted turn of thread mine is not finished on other models than it started on" in said
    assert re.search(r"chat: started on \S*stub-model\S*, now offline", said) and "finishing" not in said
    assert [text for kind, text in _messages(home, "mine") if kind == "human"] == [CANCELLED, NEXT]

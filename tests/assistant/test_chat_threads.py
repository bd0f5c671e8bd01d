"""Which conversation ``reins chat`` talks in: ``-c`` the latest chat of the home, ``--thread`` only
one that exists (a mistyped id is refused with the closest ones), ``--new-thread`` a new one by name."""

from __future__ import annotations

import builtins
import json

import pytest

from reins.cli import main


def _said(capsys) -> str:
    return capsys.readouterr().err.strip()


def test_a_mistyped_thread_is_refused_with_the_closest_chats(sqlite_cli, capsys):
    assert main(["chat", "--new-thread", "chat-groceries", "--once", "what is 2+2?"]) == 0
    assert main(["chat", "--new-thread", "chat-taxes", "--once", "what is 3+3?"]) == 0
    capsys.readouterr()
    assert main(["chat", "--thread", "chat-grocerie", "--once", "and 4+4?"]) == 2
    assert _said(capsys) == (
        "reins: error: no chat thread chat-grocerie in this home; did you mean chat-groceries? "
        "(reins chat -c continues the latest; reins chat --new-thread chat-grocerie starts one by that name)")
    assert not (sqlite_cli / "chat_history").exists()
    assert main(["runs", "--json"]) == 0  # nothing was started under the mistyped id
    assert sorted(run["thread_id"] for run in json.loads(capsys.readouterr().out)["runs"]) == [
        "chat-groceries", "chat-taxes"]


def test_new_thread_refuses_an_id_in_use_and_thread_refuses_another_graph_s_run(sqlite_cli, capsys):
    assert main(["chat", "--new-thread", "mine", "--once", "what is 2+2?"]) == 0
    capsys.readouterr()
    assert main(["chat", "--new-thread", "mine", "--once", "what is 2+2?"]) == 2
    assert _said(capsys) == "reins: error: thread mine exists; continue it with: reins chat --thread mine"
    assert main(["deliver", "--scenario", "request-limit-banner", "--json"]) in (0, 1)
    delivery = json.loads(capsys.readouterr().out)["thread_id"]
    assert main(["chat", "--thread", delivery, "--once", "hi"]) == 2
    assert _said(capsys).startswith(f"reins: error: thread {delivery} is a delivery_chain run, not a chat")


def test_continue_takes_the_latest_chat_and_refuses_when_there_is_none(sqlite_cli, capsys, monkeypatch):
    assert main(["chat", "-c", "--once", "hi"]) == 2
    assert _said(capsys) == "reins: error: there is no earlier chat to continue in this home; start one with: reins chat"
    assert main(["chat", "--new-thread", "older", "--once", "what is 2+2?"]) == 0
    assert main(["chat", "--new-thread", "newer", "--once", "what is 3+3?"]) == 0
    capsys.readouterr()
    assert main(["chat", "--continue", "--once", "what is 5+5?", "--json"]) == 0
    turn = json.loads(capsys.readouterr().out)
    assert turn["thread"] == "newer"
    lines = iter(["what is 6+6?", "exit"])
    monkeypatch.setattr(builtins, "input", lambda prompt="": next(lines))
    assert main(["chat", "-c"]) == 0
    out, err = capsys.readouterr()
    assert "continuing thread newer" in err and "6+6 = 12." in out


@pytest.mark.parametrize("args", [["-c", "--thread", "x"], ["--thread", "x", "--new-thread", "y"]])
def test_one_way_to_choose_the_thread(args, sqlite_cli, capsys):
    assert main(["chat", *args]) == 2
    assert "not allowed with argument" in _said(capsys)

"""Approvals in ``reins chat``: ``e`` alone opens ``$EDITOR`` on the arguments, a declined call is
shown as the user's decision (not a failure), and skill drafts are offered for approval."""

from __future__ import annotations

import builtins
import json
import sys

import pytest

from reins.cli import main
from reins.cli.errors import EXIT_OK
from tests.assistant.mcp.servers import config, executions, stdio_server


@pytest.fixture
def notes_env(monkeypatch, tmp_path):
    record = tmp_path / "executions.jsonl"
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config(notes=stdio_server(record))))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REINS_MCP_CONFIG", str(path))
    monkeypatch.setenv("REINS_CHECKPOINT", "memory")
    for name in ("REINS_MODEL", "REINS_MODEL_CHAT", "OPENAI_BASE_URL", "VISUAL", "EDITOR"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path, record


def _chat(monkeypatch, capsys, *lines: str) -> tuple[str, str]:
    answers = iter([*lines, "exit"])
    prompts: list[str] = []

    def ask(prompt: str = "") -> str:
        prompts.append(prompt)
        return next(answers)

    monkeypatch.setattr(builtins, "input", ask)
    assert main(["chat"]) == EXIT_OK
    out, err = capsys.readouterr()
    return out, err + "\n".join(prompts)


def test_e_alone_opens_the_editor_on_the_arguments_and_runs_the_edited_call(notes_env, monkeypatch, capsys):
    tmp_path, record = notes_env
    editor = tmp_path / "editor.py"
    seen = tmp_path / "seen.json"
    editor.write_text(
        "import json, sys, pathlib\n"
        f"pathlib.Path({str(seen)!r}).write_text(pathlib.Path(sys.argv[1]).read_text())\n"
        "json.dump({'text': 'edited in the editor'}, open(sys.argv[1], 'w'))\n"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    out, err = _chat(monkeypatch, capsys, 'use notes__add_note on "buy milk"', "e")
    assert json.loads(seen.read_text()) == {"text": "buy milk"}  # the editor got the proposed arguments
    assert executions(record) == [json.dumps({"tool": "add_note", "text": "edited in the editor"})]
    assert "stored: edited in the editor" in out and "[success]" in out


def test_without_an_editor_the_edited_arguments_are_read_over_several_lines(notes_env, monkeypatch, capsys):
    _, record = notes_env
    out, err = _chat(monkeypatch, capsys, 'use notes__add_note on "buy milk"', "e", '{"text":', '"pasted"}', ".")
    assert "The arguments under review (edit it as JSON):" in err
    assert executions(record) == [json.dumps({"tool": "add_note", "text": "pasted"})]


def test_a_declined_call_is_the_users_decision_not_a_failure(notes_env, monkeypatch, capsys):
    _, record = notes_env
    out, err = _chat(monkeypatch, capsys, 'use notes__add_note on "buy milk"', "n not now")
    assert executions(record) == []
    assert "[not run: you declined notes__add_note]" in out
    assert "[failure]" not in out and "[partial]" not in out
    step = [line for line in err.splitlines() if "Tool step 1" in line][-1]  # the step as it ended
    assert step.startswith("– ") and step.endswith("declined by you")  # not "✗ … error"


def test_reins_chat_offers_a_skill_draft_and_keeps_the_approved_one(runner, monkeypatch, capsys):
    from reins.cli.chat import _send, answer_pauses
    from reins.policies.assistant.memory import user_namespace
    from reins.runtime.tools import skill_tools
    from tests.assistant.helpers import chat_registry
    from tests.assistant.test_skill_drafts import DRAFT, _script

    registry = chat_registry()
    skill_tools.register(registry)
    run = runner(_script(), registry=registry)
    for thread in ("monday", "tuesday", "wednesday"):  # three sessions: the notes are the user's
        values = _send(run.graph, "convert 10 EUR at rate 1.1", thread, "local", asks=True)
    assert run.model.count("assistant.skill_draft") == 1
    answered = answer_pauses(run.graph, values, "wednesday", "local", ask=lambda prompt: "y")
    assert answered is not None and answered["reply"] == "10*1.1 = 11."
    err = capsys.readouterr().err
    assert f"The assistant offers a skill from your recent tasks: {DRAFT['name']}" in err
    (kept,) = run.store.search(user_namespace("local", "skills"))
    assert kept.value["status"] == "approved" and kept.value["name"] == DRAFT["name"]

    # --once never offers one: nobody is there to answer.
    again = runner(_script(), registry=registry)
    for thread in ("monday", "tuesday", "wednesday"):
        _send(again.graph, "convert 10 EUR at rate 1.1", thread, "local")
    assert again.model.count("assistant.skill_draft") == 0

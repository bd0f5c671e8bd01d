"""An MCP server's question mid-call (elicitation) becomes the assistant's ask_user pause, with a real
stdio server (tests/assistant/mcp/notes_server.py ``filed_note``): the person's answer goes back to
the server, and the approved call runs exactly once (checked on the server's own record)."""

from __future__ import annotations

import json

import pytest
from langgraph.types import Command

from reins.runtime.standins.scripted import ScriptedModel
from tests.assistant.helpers import Runner, answer, chat_registry, simple, tool_call
from tests.assistant.mcp.servers import config, executions, stdio_server

THREAD = {"configurable": {"thread_id": "t1"}}


@pytest.fixture
def notes(tmp_path):
    record = tmp_path / "executions.jsonl"
    return config(notes=stdio_server(record)), record


def _runner(mcp):
    script = {"assistant.intent": [simple()], "assistant.step": [tool_call("notes__filed_note", text="buy milk")],
              "assistant.answer": [answer("Filed.")]}
    return Runner(ScriptedModel(script), chat_registry(), mcp_config=mcp)


def _pending(run):
    return [i.value for i in run.graph.get_state(THREAD).interrupts]


def test_the_servers_question_is_an_ask_user_pause_and_the_approved_call_runs_once(notes):
    mcp, record = notes
    run = _runner(mcp)
    run.ask("file buy milk")
    (approval,) = _pending(run)
    assert approval["kind"] == "tool_approval" and executions(record) == []
    run.graph.invoke(Command(resume={"type": "approve"}), THREAD)
    (question,) = _pending(run)
    assert question["kind"] == "question" and question["server"] == "notes"
    assert "Which folder should 'buy milk' go in?" in question["question"]
    assert executions(record) == []  # the server waits for the answer before it writes
    result = run.graph.invoke(Command(resume="groceries"), THREAD)
    assert executions(record) == [json.dumps({"tool": "filed_note", "text": "buy milk", "folder": "groceries"})]
    assert result["records"][0]["ok"] and result["records"][0]["output"] == "stored 'buy milk' in groceries"
    assert not _pending(run)


def test_a_declined_question_reaches_the_server_and_nothing_is_written(notes):
    mcp, record = notes
    run = _runner(mcp)
    run.ask("file buy milk")
    run.graph.invoke(Command(resume={"type": "approve"}), THREAD)
    result = run.graph.invoke(Command(resume="decline"), THREAD)
    assert result["records"][0]["output"] == "not stored (decline)" and executions(record) == []
    assert not _pending(run)


def test_an_answer_that_does_not_fit_the_servers_field_asks_again_and_a_read_only_call_asks_unapproved(notes):
    mcp, _ = notes
    script = {"assistant.intent": [simple()], "assistant.step": [tool_call("notes__repeat_word", word="hip")],
              "assistant.answer": [answer("Repeated.")]}
    run = Runner(ScriptedModel(script), chat_registry(), mcp_config=mcp)
    run.ask("repeat hip")
    (question,) = _pending(run)  # no approval first: the call is read-only
    assert question["kind"] == "question" and "your answer is its n (integer)" in question["question"]
    run.graph.invoke(Command(resume="twice"), THREAD)
    (again,) = _pending(run)
    assert again["error"] == "n needs an integer"
    result = run.graph.invoke(Command(resume="3"), THREAD)
    assert result["records"][0]["output"] == "hip hip hip"
    assert [c.contract for c in run.model.calls].count("assistant.step") == 1  # one proposal, one call


def test_reins_chat_asks_the_servers_question_at_the_prompt(notes, monkeypatch, capsys, tmp_path):
    import builtins

    from reins.cli import main
    from reins.cli.errors import EXIT_OK

    mcp, record = notes
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(mcp))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REINS_MCP_CONFIG", str(path))
    monkeypatch.setenv("REINS_CHECKPOINT", "memory")
    for name in ("REINS_MODEL", "REINS_MODEL_CHAT", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    answers = iter(['use notes__filed_note on "buy milk"', "y", "groceries", "exit"])
    prompts: list[str] = []
    monkeypatch.setattr(builtins, "input", lambda prompt="": prompts.append(prompt) or next(answers))
    assert main(["chat"]) == EXIT_OK
    out, err = capsys.readouterr()
    assert executions(record) == [json.dumps({"tool": "filed_note", "text": "buy milk", "folder": "groceries"})]
    assert "Which folder should 'buy milk' go in?" in out + err + "\n".join(prompts)
    assert "stored 'buy milk' in groceries" in out


def test_two_racing_answers_reach_the_server_once_and_the_other_is_refused(notes):
    import threading

    from reins.runtime.execution.user_input import ResumeRefused

    mcp, record = notes
    run = _runner(mcp)
    run.ask("file buy milk")
    run.graph.invoke(Command(resume={"type": "approve"}), THREAD)
    barrier, outcomes = threading.Barrier(2), []

    def resume(folder: str) -> None:
        barrier.wait()
        try:
            outcomes.append(run.graph.invoke(Command(resume=folder), THREAD)["records"][0]["output"])
        except ResumeRefused as error:  # DecisionTaken is one
            outcomes.append(error)

    workers = [threading.Thread(target=resume, args=(folder,)) for folder in ("groceries", "errands")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert len(executions(record)) == 1, executions(record)
    refused = [o for o in outcomes if isinstance(o, ResumeRefused)]
    (folder,) = [json.loads(line)["folder"] for line in executions(record)]
    answered = [o for o in outcomes if not isinstance(o, ResumeRefused)]
    assert len(outcomes) == 2, outcomes
    # Racing, the loser is refused as taken; on a loaded machine the second may only start once the
    # first has finished, and then finds the turn over and reads its result: the write still ran once.
    stored = f"stored 'buy milk' in {folder}"
    assert (len(refused), answered) in [(1, [stored]), (0, [stored, stored])], outcomes


def test_a_second_answer_that_arrives_after_the_first_finished_the_call_is_refused_as_taken(notes):
    # The losing side of a race, made deterministic: a resume that read the paused checkpoint before the
    # first answer finished the call, and runs only after it. It is refused as taken (not as a call lost
    # to a restart), the server is not asked again, and the node itself refuses it too.
    from reins.nodes.assistant.approval import resume_refusal
    from reins.runtime.execution.user_input import DecisionTaken, ResumeRefused

    mcp, record = notes
    run = _runner(mcp)
    run.ask("file buy milk")
    run.graph.invoke(Command(resume={"type": "approve"}), THREAD)
    paused = run.graph.get_state(THREAD)
    run.graph.invoke(Command(resume="groceries"), THREAD)
    assert resume_refusal(paused.interrupts, {}, "errands") == "the question of the MCP server 'notes' was answered already (by another resume)"
    with pytest.raises(ResumeRefused, match="answered already"):
        run.graph.invoke(Command(resume="errands"), paused.config)  # the check, against the paused checkpoint
    node = run.graph.__class__.__mro__[1]  # the graph without its resume check: the node's own refusal
    # Its approval's claim refuses it: taken, or (its holder, this process, still inside its lease) running.
    with pytest.raises(DecisionTaken, match="already taken|is still running in process"):
        list(node.stream(run.graph, Command(resume="errands"), paused.config))
    assert executions(record) == [json.dumps({"tool": "filed_note", "text": "buy milk", "folder": "groceries"})]


def test_an_answer_the_call_can_no_longer_receive_is_refused_and_nothing_is_sent_again(notes):
    from reins.runtime.tools.mcp_tools import SESSIONS
    from reins.runtime.execution.user_input import ResumeRefused

    mcp, record = notes
    run = _runner(mcp)
    run.ask("file buy milk")
    run.graph.invoke(Command(resume={"type": "approve"}), THREAD)
    SESSIONS.close_scope("t1")  # as after a restart: the call that asked is gone
    with pytest.raises(ResumeRefused, match="not running here any more .* send a new message to go on"):
        run.graph.invoke(Command(resume="groceries"), THREAD)
    assert executions(record) == []

"""The user's own tools through MCP, with a real server (tests/assistant/mcp/notes_server.py) over
stdio and over streamable HTTP on 127.0.0.1: read-only results reach the answer, a side effect
runs only after an approval (checked on the server's own record), and no server can crash the
assistant."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from langgraph.types import Command

from reins.runtime.standins.scripted import ScriptedModel
from reins.runtime.execution.user_input import ResumeRefused
from tests.assistant.helpers import Runner, answer, chat_registry, simple, tool_call
from reins.runtime.tools.mcp_config import neutral, shown_description
from tests.assistant.mcp.servers import config, executions, http_server, stdio_server

THREAD = {"configurable": {"thread_id": "t1"}}


@pytest.fixture(params=["stdio", "http"])
def notes(request, tmp_path):
    """A ``notes`` server config (both transports) and the file recording its side effects."""
    record = tmp_path / "executions.jsonl"
    if request.param == "stdio":
        yield config(notes=stdio_server(record)), record
        return
    with http_server(record) as url:
        yield config(notes={"url": url, "trust_annotations": True}), record


def _runner(mcp, steps, answers=("Done.",), intent=None):
    script = {"assistant.intent": [intent or simple()], "assistant.step": list(steps),
              "assistant.answer": [answer(text) for text in answers]}
    return Runner(ScriptedModel(script), chat_registry(), mcp_config=mcp)


def _pending(run):
    return [i.value for i in run.graph.get_state(THREAD).interrupts]


def test_a_read_only_result_reaches_the_answer(notes):
    mcp, record = notes
    run = _runner(mcp, [tool_call("notes__word_count", text="a b c")], ["There are 3 words."])
    result = run.ask("how many words in a b c?")
    assert result["records"][0] == {"n": 1, "step": None, "tool": "notes__word_count", "args": {"text": "a b c"},
                                    "ok": True, "output": "3 words"}
    assert result["answer"]["verdict"] == "success" and "3 words" in " ".join(result["answer"]["evidence"])
    bound = [c.tool_names for c in run.model.calls if c.contract == "assistant.step"][0]
    assert {"notes__word_count", "notes__add_note", "calculator"} <= set(bound)
    assert not _pending(run) and executions(record) == []


def test_a_side_effect_pauses_before_it_runs_and_runs_once_when_approved(notes):
    mcp, record = notes
    run = _runner(mcp, [tool_call("notes__add_note", text="buy milk")], ["Stored."])
    paused = run.ask("note: buy milk")
    assert "answer" not in paused or not paused.get("answer")
    (payload,) = _pending(run)
    assert payload["kind"] == "tool_approval" and payload["tool"] == "notes__add_note"
    assert payload["args"] == {"text": "buy milk"}
    assert {"type": "approve"} in payload["allowed_decisions"]
    assert executions(record) == []  # nothing ran before the approval
    result = run.graph.invoke(Command(resume={"type": "approve"}), THREAD)
    assert executions(record) == [json.dumps({"tool": "add_note", "text": "buy milk"})]
    assert result["records"][0]["ok"] is True and result["records"][0]["output"] == "stored: buy milk"
    assert any("approved" in r["summary"] for r in result["trace"] if r["step"] == "tool-1")
    assert not _pending(run)


def test_a_rejected_call_never_runs_and_the_model_hears_why(notes):
    mcp, record = notes
    run = _runner(mcp, [tool_call("notes__add_note", text="spam")], ["Not stored."])
    run.ask("note: spam")
    result = run.graph.invoke(Command(resume={"type": "reject", "reason": "not that note"}), THREAD)
    assert executions(record) == []
    assert result["records"][0]["ok"] is False
    assert result["records"][0]["output"] == "rejected by the user: not that note"


def test_an_edit_with_bad_arguments_stays_paused_and_a_good_edit_runs_the_edited_call(notes):
    mcp, record = notes
    run = _runner(mcp, [tool_call("notes__add_note", text="draft")], ["Stored."])
    run.ask("note: draft")
    run.graph.invoke(Command(resume={"type": "edit", "args": {"txt": "x"}}), THREAD)
    (payload,) = _pending(run)
    assert payload["error"].startswith("edited args do not fit the tool's schema: args.text missing")
    with pytest.raises(ResumeRefused, match="decision type must be approve, reject or edit"):
        run.graph.invoke(Command(resume={"type": "maybe"}), THREAD)  # refused before it is stored
    assert _pending(run)[0]["error"].startswith("edited args do not fit")  # the pause is as it was
    assert executions(record) == []
    result = run.graph.invoke(Command(resume={"type": "edit", "args": {"text": "final"}}), THREAD)
    assert executions(record) == [json.dumps({"tool": "add_note", "text": "final"})]
    assert result["records"][0]["args"] == {"text": "final"}


def test_three_read_only_calls_in_one_step_run_concurrently(notes):
    mcp, _ = notes
    turn = tool_call("notes__wait_ms", ms=800, label="a")
    turn.tool_calls += [tool_call("notes__wait_ms", ms=800, label=label).tool_calls[0] for label in ("b", "c")]
    run = _runner(mcp, [turn, tool_call("calculator", expression="1+1")], ["All waited."],
                  intent={"intent": "COMPLEX", "reason": "three waits",
                          "plan": {"goal": "wait", "steps": [{"id": 1, "tool": "notes__wait_ms", "purpose": "wait"}]}})
    result = run.ask("wait three times")
    spans = [(r["started_at"], r["started_at"] + r["duration_ms"] / 1000) for r in result["trace"]
             if r.get("tool") == "notes__wait_ms"]
    assert len(spans) == 3 and all(end - start >= 0.8 for start, end in spans)
    assert max(start for start, _ in spans) < min(end for _, end in spans)  # every span overlaps the others
    assert [r["output"] for r in result["records"][:3]] == ["waited 800 ms a", "waited 800 ms b", "waited 800 ms c"]
    assert run.graph.get_state(THREAD).values["steps_taken"] == 4  # the budget counts every call
    assert [r["tool"] for r in result["records"]] == ["notes__wait_ms"] * 3 + ["calculator"]


# ------------------------------------------------------------------------------------ hostile servers


def test_a_server_that_cannot_start_leaves_the_assistant_answering_with_the_others(tmp_path):
    record = tmp_path / "executions.jsonl"
    mcp = config(broken=stdio_server(record, "crash", env={"TOKEN": "sk-live-secret-123456"}),
                 notes=stdio_server(record))
    run = _runner(mcp, [tool_call("notes__word_count", text="one two")], ["Two words."])
    result = run.ask("count one two")
    assert result["records"][0]["output"] == "2 words" and result["answer"]["verdict"] == "success"
    bound = [c.tool_names for c in run.model.calls if c.contract == "assistant.step"][0]
    assert not any(name.startswith("broken__") for name in bound)


def test_a_server_that_dies_during_a_call_is_an_observation_and_the_call_is_tried_once_more(tmp_path):
    mcp = config(notes=stdio_server(tmp_path / "r", timeout_s=10))
    run = _runner(mcp, [tool_call("notes__crash_now")], ["The notes server crashed."])
    result = run.ask("crash it")
    record = result["records"][0]
    assert record["ok"] is False and record["output"].startswith("notes__crash_now failed:")
    (trace,) = [r for r in result["trace"] if r.get("tool")]
    assert trace["outcome"] == "connection" and trace["summary"].endswith("dispatched 2 times")
    assert result["reply"]


def test_a_hanging_tool_meets_its_deadline_as_an_observation(tmp_path):
    mcp = config(notes=stdio_server(tmp_path / "r", timeout_s=1))
    run = _runner(mcp, [tool_call("notes__wait_ms", ms=20_000)], ["The tool did not answer in time."])
    result = run.ask("wait very long")
    record = result["records"][0]
    assert record["ok"] is False and record["output"] == "notes__wait_ms gave no result within 1 s (deadline)"
    assert [r["outcome"] for r in result["trace"] if r.get("tool")] == ["deadline"]  # a hang is not retried
    assert result["reply"]


def test_a_hostile_server_cannot_rename_flood_or_instruct(tmp_path):
    record = tmp_path / "r"
    mcp = config(evil=stdio_server(record, "hostile"))
    run = _runner(mcp, [tool_call("evil__big")], ["The output was long."])
    result = run.ask("run big")
    bound = [c.tool_names for c in run.model.calls if c.contract == "assistant.step"][0]
    assert "evil__big" in bound and not any("/" in name for name in bound)  # bad/name is left out
    assert result["records"][0]["ok"] is True and len(result["records"][0]["output"]) <= 4000  # 1 MB capped
    prompt = "\n".join(str(m.content) for m in run.model.calls[1].messages)
    line = next(line for line in prompt.splitlines() if line.startswith("- evil__big"))
    assert "</tools>" not in line and "<request>" not in line and len(line) < 450  # inert and capped
    assert "untrusted description" in line
    assert prompt.count("</tools>") == 1 and prompt.count("<request>") == 1
    assert executions(record) == []  # the injected instruction ran nothing
    assert result["answer"]["verdict"] in ("success", "partial")


# ------------------------------------------------------------------------------------ scope


def test_mcp_tools_never_reach_the_delivery_manager_or_the_tasklist_agent(tmp_path, monkeypatch):
    from tests.delivery.delivery_builders import run as run_delivery
    from tests.delivery.delivery_builders import script as delivery_script

    record = tmp_path / "r"
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config(notes=stdio_server(record))))
    monkeypatch.setenv("REINS_MCP_CONFIG", str(path))
    loads = []
    import reins.runtime.tools.mcp_tools as mcp_tools

    real = mcp_tools._load_server
    monkeypatch.setattr(mcp_tools, "_load_server", lambda spec, *a: loads.append(spec.name) or real(spec, *a))
    model = ScriptedModel(delivery_script())
    out = run_delivery(model)
    assert out["run_status"] == "pass"
    offered = {name for call in model.calls for name in call.tool_names}
    assert offered and not any("__" in name for name in offered)
    from reins.graphs.tasklist_agent import build_graph as build_tasklist
    from reins.runtime.standins.offline import OfflineModel

    listed = build_tasklist(models=OfflineModel()).invoke({"request": "/tasklist docs://versions/v0.2.0-ready.md"})
    assert listed["final_decision"].startswith("final")
    assert loads == [] and executions(record) == []  # neither pipeline even loads the servers
    from reins.graphs.assistant import build_graph as build_assistant

    build_assistant(store=None)  # as LangGraph Server imports it: REINS_MCP_CONFIG loads at run time
    assert loads == []
    # The same configuration does reach the assistant.
    from reins.runtime.tools.toolbox import chat_toolset

    assert "notes__add_note" in chat_toolset().names and loads == ["notes"]


def test_a_run_brings_its_own_servers_through_the_context(tmp_path):
    mcp = config(notes=stdio_server(tmp_path / "r"))
    run = _runner(None, [tool_call("notes__word_count", text="x y")], ["Two words."])
    result = run.ask("count x y", mcp_config=mcp)  # as LangGraph Server passes it
    assert result["records"][0]["output"] == "2 words"
    plain = run.ask("/help", thread="t2")  # another run without them: not offered
    assert "notes__word_count" not in plain["reply"] and "ask_user" in plain["reply"]
    listed = run.ask("/help", thread="t3", mcp_config=mcp)["reply"]
    assert "notes__add_note  Store a note (changes the notebook). (asks first)" in listed


def test_under_ainvoke_a_read_only_call_runs_and_a_side_effect_pauses(notes):
    asyncio.run(_under_ainvoke(notes))


async def _under_ainvoke(notes):
    from langchain_core.messages import HumanMessage

    mcp, record = notes
    run = _runner(mcp, [tool_call("notes__word_count", text="a b"), tool_call("notes__add_note", text="async")],
                  ["Counted and stored."], intent={"intent": "COMPLEX", "reason": "two", "plan": {
                      "goal": "count, store", "steps": [{"id": 1, "tool": "notes__word_count", "purpose": "count"},
                                                        {"id": 2, "tool": "notes__add_note", "purpose": "store"}]}})
    await run.graph.ainvoke({"messages": [HumanMessage(content="count and store")]}, THREAD)
    state = await run.graph.aget_state(THREAD)
    assert [i.value["tool"] for i in state.interrupts] == ["notes__add_note"] and executions(record) == []
    assert state.values["records"][0]["output"] == "2 words"
    result = await run.graph.ainvoke(Command(resume={"type": "approve"}), THREAD)
    assert executions(record) == [json.dumps({"tool": "add_note", "text": "async"})]
    assert [r["ok"] for r in result["records"]] == [True, True]


# ------------------------------------------------------------------------------------ sessions


def test_a_stateful_server_keeps_its_session_across_the_calls_and_turns_of_one_chat(notes):
    from reins.runtime.tools.mcp_tools import SESSIONS

    mcp, _ = notes
    mcp["mcpServers"]["notes"]["trust"] = ["tally"]
    turns = 3
    model = ScriptedModel({"assistant.intent": [simple()] * turns, "assistant.step": [tool_call("notes__tally")] * turns,
                           "assistant.answer": [answer("Counted.")] * turns})
    run = Runner(model, chat_registry(), mcp_config=mcp)
    opened = SESSIONS.opened
    first = run.ask("tally", thread="chat-a")["records"][-1]["output"]
    second = run.ask("tally again", thread="chat-a")["records"][-1]["output"]
    other = run.ask("tally", thread="chat-b")["records"][-1]["output"]
    assert (first, second, other) == ("call 1 of this session", "call 2 of this session", "call 1 of this session")
    assert SESSIONS.opened - opened == 2  # one session per chat, reused by its second call
    open_now = SESSIONS.open_sessions()
    assert open_now[("chat-a", "notes")] == 2 and open_now[("chat-b", "notes")] == 1
    assert SESSIONS.close_scope("chat-a") == 1 and ("chat-a", "notes") not in SESSIONS.open_sessions()
    model = ScriptedModel({"assistant.intent": [simple()], "assistant.step": [tool_call("notes__tally")],
                           "assistant.answer": [answer("Counted.")]})
    again = Runner(model, chat_registry(), mcp_config=mcp).ask("tally", thread="chat-a")["records"][-1]["output"]
    assert again == "call 1 of this session"  # a closed chat's next call starts a new session
    SESSIONS.close_scope("chat-a"), SESSIONS.close_scope("chat-b")


def test_a_tool_an_unvouched_server_marks_read_only_still_asks_and_never_runs_unasked(tmp_path):
    record = tmp_path / "r"
    mcp = config(evil=stdio_server(record, "hostile", trust_annotations=False))  # the default: no trust
    run = _runner(mcp, [tool_call("evil__sneaky_write", text="x")], ["Not run."])
    run.ask("look up x")
    (payload,) = _pending(run)
    assert payload["kind"] == "tool_approval" and payload["tool"] == "evil__sneaky_write"
    assert payload["read_only"] is False and executions(record) == []  # the claim is not believed
    result = run.graph.invoke(Command(resume={"type": "reject", "reason": "no"}), THREAD)
    assert executions(record) == [] and result["records"][0]["output"] == "rejected by the user: no"
    listed = run.ask("/help", thread="t9")["reply"]
    assert "evil__sneaky_write  Look something up (it writes). (asks first)" in listed


def test_a_server_too_slow_to_start_is_reported_by_its_startup_deadline_not_its_call_deadline(tmp_path):
    from reins.runtime.tools.mcp_tools import load_mcp_tools

    silent = {"command": sys.executable, "args": ["-c", "import time; time.sleep(5)"], "timeout_s": 30,
              "startup_timeout_s": 0.5}
    loaded = load_mcp_tools(config(silent=silent, notes=stdio_server(tmp_path / "r", timeout_s=0.01)))
    reports = {report.name: report for report in loaded.servers}
    assert reports["silent"].problem == "did not start within 0.5 s" and reports["silent"].tools == ()
    assert "notes__word_count" in dict(reports["notes"].tools) and not reports["notes"].problem  # a 0.01 s call limit


def test_an_approved_call_carries_its_idempotency_key_to_its_mcp_server(tmp_path):
    from reins.policies.tools.approvals import call_fingerprint, idempotency_key

    record = tmp_path / "r"
    mcp = config(notes=stdio_server(record))
    run = _runner(mcp, [tool_call("notes__add_note", text="buy milk")])
    run.ask("note: buy milk")
    run.graph.invoke(Command(resume={"type": "approve"}), THREAD)
    keys = (tmp_path / "r.keys").read_text().splitlines()
    # the server saw the key derived from the thread, the call and its fingerprint: one it can deduplicate on
    assert keys == [idempotency_key("t1", 1, call_fingerprint("notes__add_note", {"text": "buy milk"}))]
    assert idempotency_key("t1", 1, "f") != idempotency_key("t2", 1, "f") != idempotency_key("t1", 2, "f")


def test_help_shows_a_tool_description_with_a_path_as_written(tmp_path):
    mcp = config(files=stdio_server(tmp_path / "r", "files"))
    listed = _runner(None, []).ask("/help", mcp_config=mcp)["reply"]
    line = next(line for line in listed.splitlines() if "files__read_file" in line)
    assert line.strip() == "files__read_file  Read the note at /srv/notes/<name>; path: the note's name."
    assert "[path]" not in listed and "‹" not in listed
    prompt_line = neutral(shown_description("files", "Read the note at /srv/notes/<name>"), 200)
    assert "<name>" not in prompt_line  # what a model reads stays inert


def test_help_still_removes_a_secret_from_a_tool_description(tmp_path):
    from reins.nodes.assistant.slash import reply_update

    update = reply_update({}, "files__x  key sk-abcdefghijklmnopqrstuvwx at /srv/<name>", "success",
                          {"command": "help", "status": "help"}, [], None, keep_paths=True)
    assert "sk-abcdefghijklmnopqrstuvwx" not in update["reply"] and "/srv/<name>" in update["reply"]


def test_under_a_langgraph_server_a_refused_decision_keeps_the_call_paused_with_the_refusal(notes):
    mcp, record = notes
    run = _runner(mcp, [tool_call("notes__add_note", text="x")], ["Not stored."])
    run.ask("store x")
    served = {**THREAD, "metadata": {"langgraph_api_version": "0.16"}}  # as LangGraph Server runs it

    async def resume(value):
        return [chunk async for chunk in run.graph.astream(Command(resume=value), served)]

    asyncio.run(resume({"type": "maybe"}))  # not an error: Studio's thread stays "interrupted"
    (payload,) = _pending(run)
    assert payload["kind"] == "tool_approval" and payload["tool"] == "notes__add_note"
    assert payload["error"].startswith("decision type must be approve, reject or edit")
    assert executions(record) == []
    asyncio.run(resume({"type": "reject", "reason": "no"}))
    assert not _pending(run) and executions(record) == []

"""Approvals through the real LangGraph dev server: racing resumes run an approved write once (checked
on the recording MCP server's own record) and the other run fails with a clear refusal; a bad resume
value leaves the call paused and answerable; a run cancelled inside the call releases its claim, so
the call may already have run and an explicit choice is taken at once."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from tests.assistant.mcp.servers import config, executions, stdio_server
from tests.integration.services import running_langgraph_dev

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def client():
    # The MCP servers a run brings in its context start inside the run (a file and a process), which
    # the dev server's blocking-call detector refuses on its event loop: allowed here, where the
    # approval path, not the start-up of a server, is under test.
    env = {"LANGSMITH_TRACING": "false", "REINS_MODEL": "", "LANGGRAPH_STRICT_MSGPACK": "true"}
    with running_langgraph_dev(ROOT, env=env, extra_args=("--allow-blocking",)) as url:
        yield get_sync_client(url=url)


def _paused_write(client, tmp_path) -> tuple[str, dict, Path]:
    """A chat thread paused before the recording MCP server's ``slow_note``: (thread, context, record)."""
    record = tmp_path / "executions.jsonl"
    context = {"mcp_config": config(notes=stdio_server(record, slow_s=1.5))}
    thread_id = client.threads.create()["thread_id"]
    client.runs.wait(thread_id, "assistant", context=context,
                     input={"messages": [{"role": "user", "content": 'use notes__slow_note on "buy milk"'}]})
    (pending,) = client.threads.get_state(thread_id)["interrupts"]
    assert pending["value"]["kind"] == "tool_approval" and pending["value"]["fingerprint"]
    return thread_id, context, record


def _error_of(client, thread_id: str, run: dict) -> str:
    """A finished run's error ("" when it succeeded)."""
    joined = client.runs.join(thread_id, run["run_id"])
    status = client.runs.get(thread_id, run["run_id"])["status"]
    return "" if status == "success" else json.dumps(joined)


def test_two_racing_resumes_run_the_write_once_and_refuse_the_other(client, tmp_path):
    thread_id, context, record = _paused_write(client, tmp_path)
    runs = [client.runs.create(thread_id, "assistant", command={"resume": {"type": "approve"}}, context=context,
                               multitask_strategy="enqueue") for _ in range(2)]
    errors = [_error_of(client, thread_id, run) for run in runs]
    assert executions(record) == [json.dumps({"tool": "slow_note", "text": "buy milk"})]
    assert errors[0] == "", errors
    assert "resume refused" in errors[1] and ("already taken" in errors[1] or "not waiting" in errors[1]), errors


def test_a_value_that_does_not_fit_keeps_the_thread_paused_with_the_refusal_and_an_approve_runs_it_once(
        client, tmp_path):
    # Under the server a decision that does not fit the pause is answered by the paused node itself: it
    # asks again with the refusal, so the run ends and Studio shows the thread interrupted, not in error.
    thread_id, context, record = _paused_write(client, tmp_path)
    (before,) = client.threads.get_state(thread_id)["interrupts"]
    refused = client.runs.create(thread_id, "assistant", command={"resume": {"type": ["approve"]}}, context=context)
    assert _error_of(client, thread_id, refused) == ""
    (again,) = client.threads.get_state(thread_id)["interrupts"]
    assert again["value"]["kind"] == before["value"]["kind"] and again["value"]["error"].startswith("decision type must be")
    assert executions(record) == []
    final = client.runs.wait(thread_id, "assistant", command={"resume": {"type": "approve"}}, context=context)
    assert final["records"][0]["output"] == "stored slowly: buy milk"
    assert executions(record) == [json.dumps({"tool": "slow_note", "text": "buy milk"})]


def test_an_oversized_value_fails_its_run_and_leaves_the_call_paused(client, tmp_path):
    thread_id, context, record = _paused_write(client, tmp_path)
    before = client.threads.get_state(thread_id)["interrupts"]
    refused = client.runs.create(thread_id, "assistant", command={"resume": {"type": "approve", "note": "x" * 2_000_000}},
                                 context=context)
    assert "resume refused" in _error_of(client, thread_id, refused)
    assert client.threads.get_state(thread_id)["interrupts"] == before and executions(record) == []
    final = client.runs.wait(thread_id, "assistant", command={"resume": {"type": "approve"}}, context=context)
    assert final["records"][0]["output"] == "stored slowly: buy milk"
    assert executions(record) == [json.dumps({"tool": "slow_note", "text": "buy milk"})]


def test_a_servers_question_is_answered_through_the_sdk_and_the_write_runs_once(client, tmp_path):
    record = tmp_path / "executions.jsonl"
    context = {"mcp_config": config(notes=stdio_server(record))}
    thread_id = client.threads.create()["thread_id"]
    client.runs.wait(thread_id, "assistant", context=context,
                     input={"messages": [{"role": "user", "content": 'use notes__filed_note on "buy milk"'}]})
    client.runs.wait(thread_id, "assistant", command={"resume": {"type": "approve"}}, context=context)
    (pending,) = client.threads.get_state(thread_id)["interrupts"]
    assert pending["value"]["kind"] == "question" and "Which folder" in pending["value"]["question"]
    assert executions(record) == []  # the server waits for the answer before it writes
    final = client.runs.wait(thread_id, "assistant", command={"resume": "groceries"}, context=context)
    assert final["records"][0]["output"] == "stored 'buy milk' in groceries"
    assert executions(record) == [json.dumps({"tool": "filed_note", "text": "buy milk", "folder": "groceries"})]
    assert client.threads.get_state(thread_id)["interrupts"] == []


def test_a_run_cancelled_inside_the_call_releases_its_claim_and_the_call_may_already_have_run(client, tmp_path):
    record, gate = tmp_path / "executions.jsonl", tmp_path / "gate"
    context = {"mcp_config": config(notes=stdio_server(record, gate=gate, timeout_s=600))}
    thread_id = client.threads.create()["thread_id"]
    client.runs.wait(thread_id, "assistant", context=context,
                     input={"messages": [{"role": "user", "content": 'use notes__gated_note on "buy milk"'}]})
    first = client.runs.create(thread_id, "assistant", command={"resume": {"type": "approve"}}, context=context)
    deadline = time.monotonic() + 90
    while not executions(record):  # the server's own record: the write is in flight, held at the gate
        assert time.monotonic() < deadline, "the approved write never started"
        time.sleep(0.05)
    try:
        client.runs.cancel(thread_id, first["run_id"], wait=True)
    finally:
        gate.touch()
    again = client.runs.create(thread_id, "assistant", command={"resume": {"type": "approve"}}, context=context)
    refusal = _error_of(client, thread_id, again)
    assert "may already have run (its dispatch in process" in refusal and "ended before its result" in refusal, refusal
    final = client.runs.wait(thread_id, "assistant", command={"resume": {"type": "mark_done"}}, context=context)
    assert final["records"][0]["output"].startswith("marked done by the user: the call was dispatched at 20")
    assert executions(record) == [json.dumps({"tool": "gated_note", "text": "buy milk"})]

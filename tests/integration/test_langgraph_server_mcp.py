"""The assistant with MCP servers under the real ``langgraph dev`` server, its blocking-call detector
on (the default): a stdio server from REINS_MCP_CONFIG and a streamable-HTTP server from the run's
context, a read-only call and an approval round trip through langgraph-sdk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from tests.assistant.mcp.servers import config, executions, http_server, stdio_server
from tests.integration.services import running_langgraph_dev

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    work = tmp_path_factory.mktemp("mcp-dev")
    record = work / "executions.jsonl"
    path = work / "mcp.json"
    path.write_text(json.dumps(config(local=stdio_server(record, trust_annotations=False))))
    env = {"LANGSMITH_TRACING": "false", "REINS_MODEL": "", "REINS_MCP_CONFIG": str(path),
           "REINS_HOME": str(work / "home")}
    with http_server(record) as url, running_langgraph_dev(ROOT, env=env) as server:
        yield get_sync_client(url=server), config(remote={"url": url, "trust_annotations": True}), record, server


def _say(client, thread_id: str, text: str, remote: dict) -> dict:
    return client.runs.wait(thread_id, "assistant", input={"messages": [{"role": "user", "content": text}]},
                            context={"mcp_config": remote})


def test_an_assistant_turn_with_stdio_and_http_servers_and_an_approval_round_trip(served):
    client, remote, record, _ = served
    thread_id = client.threads.create()["thread_id"]
    hello = _say(client, thread_id, "hello", remote)  # failed with BlockingError before any tool ran
    assert hello.get("reply") and "BlockingError" not in json.dumps(hello)

    counted = _say(client, thread_id, 'use remote__word_count on "one two three"', remote)
    assert "3 words" in counted["reply"], counted

    _say(client, thread_id, 'use local__add_note on "from studio"', remote)
    (pending,) = client.threads.get_state(thread_id)["interrupts"]
    assert pending["value"]["kind"] == "tool_approval" and pending["value"]["tool"] == "local__add_note"
    assert executions(record) == []  # nothing ran before the approval
    done = client.runs.wait(thread_id, "assistant", command={"resume": {"type": "approve"}},
                            context={"mcp_config": remote})
    assert "stored: from studio" in json.dumps(done["records"])
    assert executions(record) == [json.dumps({"tool": "add_note", "text": "from studio"})]
    assert client.threads.get_state(thread_id)["interrupts"] == []

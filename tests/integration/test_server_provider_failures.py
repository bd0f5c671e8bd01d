"""Under the real LangGraph dev server a provider failure ends the run with a named cause: the
thread stays usable (``idle``, not ``error``) and the output says which stage failed and why."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from tests.integration.services import running_langgraph_dev
from tests.wire.behaviours import cooperative
from tests.wire.provider_stub import StubProvider, closed_port

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
CAUSES = {"refused": "connection refused", "no_version": "HTTP 404: the base URL has no version path such as /v1"}


@pytest.fixture(scope="module", params=sorted(CAUSES))
def server(request):
    with StubProvider(cooperative) as stub:
        base_url = f"http://127.0.0.1:{closed_port()}/v1" if request.param == "refused" else stub.base_url.removesuffix("/v1")
        env = {"LANGSMITH_TRACING": "false", "REINS_MODEL": "stub-model", "OPENAI_BASE_URL": base_url,
               "OPENAI_API_KEY": "sk-server-TESTKEY-0123456789", "LANGGRAPH_STRICT_MSGPACK": "true"}
        with running_langgraph_dev(ROOT, env=env) as url:
            yield get_sync_client(url=url), CAUSES[request.param]


def test_tasklist_thread_ends_failed_with_the_cause(server):
    client, cause = server
    thread_id = client.threads.create()["thread_id"]
    out = client.runs.wait(thread_id, "tasklist_agent", input={"request": "/tasklist docs://versions/v0.2.0-ready.md"})
    assert out["final_decision"] == "failed"
    assert out["message"] == f"The run failed: planning_decision failed: {cause}."
    assert client.threads.get(thread_id)["status"] == "idle"


def test_assistant_thread_ends_the_turn_with_the_cause(server):
    client, cause = server
    thread_id = client.threads.create()["thread_id"]
    out = client.runs.wait(thread_id, "assistant", input={"messages": [{"role": "user", "content": "what is 17*3?"}]})
    assert out["failure"] == f"classify_intent failed: {cause}"
    assert out["answer"]["verdict"] == "failure"
    assert client.threads.get(thread_id)["status"] == "idle"

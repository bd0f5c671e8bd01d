"""The real LangGraph dev server, headless on loopback, driven through langgraph-sdk."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from tests.integration.services import running_langgraph_dev

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def client():
    env = {"LANGSMITH_TRACING": "false", "REINS_MODEL": "", "LANGGRAPH_STRICT_MSGPACK": "true"}
    with running_langgraph_dev(ROOT, env=env) as url:
        yield get_sync_client(url=url)


def test_server_exports_the_three_graphs(client):
    assert sorted(a["graph_id"] for a in client.assistants.search()) == ["assistant", "delivery_chain", "tasklist_agent"]


def test_delivery_run_streams_custom_progress_events(client):
    thread = client.threads.create()
    events, final = [], None
    for part in client.runs.stream(
        thread["thread_id"],
        "delivery_chain",
        input={"requirement_uri": "demo://scenarios/request-limit-banner/requirement.md"},
        stream_mode=["custom", "values"],
    ):
        if part.event.startswith("custom"):
            events.append(part.data)
        elif part.event.startswith("values"):
            final = part.data
    assert final["run_status"] == "pass"
    assert all(event["type"] == "workflow-progress" for event in events)
    steps = [event["step"] for event in events if event["status"] == "completed"]
    assert steps.index("delegate-plan") < steps.index("delegate-task") < steps.index("delegate-review-group")
    assert events[0]["step"] == "start" and events[-1]["step"] == "end"
    assert not any("#" in event["summary"] for event in events), "progress never carries markdown"


def test_tasklist_review_pauses_on_the_interrupt_and_resumes_through_the_sdk(client):
    thread_id = client.threads.create()["thread_id"]
    client.runs.wait(
        thread_id,
        "tasklist_agent",
        input={"request": "/tasklist docs://versions/v0.2.0-ready.md"},
        context={"human_review": True},
    )
    state = client.threads.get_state(thread_id)
    assert state["next"] == ["review_strategy"]
    (pending,) = state["interrupts"]
    assert pending["value"]["kind"] == "strategy_review"
    assert "approve" in pending["value"]["allowed_decisions"]

    # A decision that is not allowed is refused and the run stays paused at the same review.
    client.runs.wait(thread_id, "tasklist_agent", command={"resume": {"type": "ship-it"}}, raise_error=False)
    still = client.threads.get_state(thread_id)
    assert still["next"] == ["review_strategy"]
    assert still["values"].get("artifact") is None

    result = client.runs.wait(thread_id, "tasklist_agent", command={"resume": {"type": "approve"}})
    assert result["final_decision"] == "final"
    assert result["artifact"]["metadata"]["validated"] is True
    assert client.threads.get_state(thread_id)["next"] == []

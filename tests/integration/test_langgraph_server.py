"""The real LangGraph dev server, headless on loopback, driven through langgraph-sdk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from tests.integration.services import running_langgraph_dev

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


SERVER_KEY = "plainvalue123456"  # no shape any pattern knows


@pytest.fixture(scope="module")
def client():
    env = {"LANGSMITH_TRACING": "false", "REINS_MODEL": "", "LANGGRAPH_STRICT_MSGPACK": "true",
           "OPENAI_API_KEY": SERVER_KEY}  # unused by the offline model; redacted wherever it appears
    with running_langgraph_dev(ROOT, env=env) as url:
        yield get_sync_client(url=url)


GRAPHS = ["assistant", "delivery_chain", "tasklist_agent"]
READY = "/tasklist docs://versions/v0.2.0-ready.md"
NEEDS_REVISION = "/tasklist docs://versions/v0.2.2-needs-revision.md"


def test_server_exports_the_three_graphs(client):
    # langgraph.json names ./.env ("env"): the server also starts when there is none (a fresh checkout).
    assert sorted(a["graph_id"] for a in client.assistants.search()) == GRAPHS


@pytest.mark.parametrize("graph_id", GRAPHS)
def test_every_assistant_publishes_input_output_and_context_schemas(client, graph_id):
    (assistant,) = [a for a in client.assistants.search(graph_id=graph_id) if a["graph_id"] == graph_id]
    schemas = client.assistants.get_schemas(assistant["assistant_id"])
    for kind in ("input_schema", "output_schema", "state_schema", "context_schema"):
        assert schemas[kind] and schemas[kind]["properties"], f"{graph_id}: no {kind}"
    assert "contract_mode" in schemas["context_schema"]["properties"]
    if graph_id == "assistant":  # the user's persona, editable in Studio's context form
        assert {"instructions", "examples"} <= set(schemas["context_schema"]["properties"])
    # What Studio shows: the graph's description from langgraph.json, and the model field as a model picker.
    config = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))
    assert assistant["description"] == config["graphs"][graph_id]["description"]
    model = schemas["context_schema"]["properties"]["model"]
    assert model["langgraph_type"] == "llm" and model["langgraph_nodes"]


def _pause(client, request: str = READY) -> tuple[str, dict]:
    """Start a reviewed tasklist run; return its thread id and the pending review."""
    thread_id = client.threads.create()["thread_id"]
    client.runs.wait(thread_id, "tasklist_agent", input={"request": request}, context={"human_review": True})
    (pending,) = client.threads.get_state(thread_id)["interrupts"]
    return thread_id, pending


def _resume(client, thread_id: str, decision) -> dict:
    return client.runs.wait(thread_id, "tasklist_agent", command={"resume": decision})


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
    thread_id, pending = _pause(client)
    state = client.threads.get_state(thread_id)
    assert state["next"] == ["review_strategy"]
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


def test_a_review_pause_offers_each_decision_with_its_schema_and_an_example(client):
    _, pending = _pause(client)
    value = pending["value"]
    assert list(value["decisions"]) == value["allowed_decisions"] == ["approve", "edit", "reject", "respond"]
    for name, form in value["decisions"].items():
        assert form["schema"]["properties"]["type"]["const"] == name and form["example"]["type"] == name
    admitted = {ref["$ref"].split("/")[-1] for ref in pending["response_schema"]["oneOf"]}
    assert admitted == {"ApproveDecision", "EditStrategyDecision", "RejectDecision", "RespondDecision"}


@pytest.mark.parametrize("decision", ["approve", "edit", "reject", "respond"])
def test_a_strategy_review_resumes_with_each_decision(client, decision):
    thread_id, pending = _pause(client)
    result = _resume(client, thread_id, pending["value"]["decisions"][decision]["example"])
    if decision == "approve":
        assert result["final_decision"] == "final" and result["artifact"]["metadata"]["validated"] is True
    elif decision == "edit":
        assert result["final_decision"] == "final" and result["strategy"] == pending["value"]["strategy"]
    elif decision == "reject":
        assert result["final_decision"] == "stopped" and result["artifact"] is None
        assert "The split does not match the release plan." in result["message"]
    else:  # respond: one regenerated strategy, asked again without respond
        (again,) = client.threads.get_state(thread_id)["interrupts"]
        assert again["value"]["kind"] == "strategy_review" and again["value"]["allowed_decisions"] == ["approve", "edit", "reject"]
        assert _resume(client, thread_id, {"type": "approve"})["final_decision"] == "final"
    assert client.threads.get(thread_id)["status"] == "idle"


@pytest.mark.parametrize("decision", ["approve", "edit", "reject"])
def test_a_revision_review_resumes_with_each_decision(client, decision):
    thread_id, _ = _pause(client, NEEDS_REVISION)
    _resume(client, thread_id, {"type": "approve"})
    (pending,) = client.threads.get_state(thread_id)["interrupts"]
    value = pending["value"]
    assert value["kind"] == "revision_review" and value["fix_now"]
    answer = {"type": "edit", "markdown": value["draft"]} if decision == "edit" else value["decisions"][decision]["example"]
    result = _resume(client, thread_id, answer)
    if decision == "reject":
        assert result["final_decision"] == "stopped" and result["artifact"] is None
    else:
        assert result["artifact"]["metadata"]["revision"] == 2 and result["validation"]["v2"]
        assert result["revision_effect"] is not None
    assert client.threads.get(thread_id)["status"] == "idle"


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ({"type": "ship-it"}, "decision type ship-it is not allowed for strategy_review now"),
        ({"type": "edit", "strategy": {"granularity": "huge"}}, "the edit decision is not valid (edit.strategy.granularity"),
        ("approve", "a strategy_review decision must be a JSON object"),
    ],
)
def test_an_invalid_decision_is_refused_and_the_interrupt_stays_pending(client, answer, error):
    thread_id, pending = _pause(client)
    run = client.runs.create(thread_id, "tasklist_agent", command={"resume": answer})
    client.runs.join(thread_id, run["run_id"])
    assert client.runs.get(thread_id, run["run_id"])["status"] == "success"  # not a failed run
    assert client.threads.get(thread_id)["status"] == "interrupted"  # not "error"
    state = client.threads.get_state(thread_id)
    (again,) = state["interrupts"]
    assert state["next"] == ["review_strategy"] and state["values"].get("artifact") is None
    assert again["value"]["error"].startswith(error) and "\n" not in again["value"]["error"]
    assert "huge" not in again["value"]["error"]  # the rejected value is never echoed
    assert again["value"]["allowed_decisions"] == pending["value"]["allowed_decisions"]
    assert _resume(client, thread_id, {"type": "approve"})["final_decision"] == "final"


def test_a_two_turn_assistant_thread(client):
    thread_id = client.threads.create()["thread_id"]
    first = client.runs.wait(thread_id, "assistant", input={"messages": [{"role": "user", "content": "what is (17+25)*3?"}]})
    assert "126" in first["reply"]
    second = client.runs.wait(thread_id, "assistant", input={"messages": [{"role": "user", "content": "and what is 6*7?"}]})
    assert "42" in second["reply"] and "126" not in second["reply"]
    messages = client.threads.get_state(thread_id)["values"]["messages"]
    assert [m["type"] for m in messages] == ["human", "ai", "human", "ai"]
    assert messages[0]["content"] == "what is (17+25)*3?" and messages[2]["content"] == "and what is 6*7?"


def test_assistant_reply_streams_as_messages_tuple_text_only(client):
    thread = client.threads.create()
    chunks, final = [], None
    for part in client.runs.stream(
        thread["thread_id"], "assistant", input={"messages": [{"role": "user", "content": "what is (17+25)*3?"}]},
        stream_mode=["messages-tuple", "values"],
    ):
        if part.event.startswith("messages"):
            message, metadata = part.data
            if message["type"] == "AIMessageChunk":
                assert metadata.get("reins_reply"), message  # never a contract's JSON or a tool call
                chunks.append(message["content"])
        elif part.event.startswith("values"):
            final = part.data
    assert len(chunks) >= 3 and "".join(chunks) == final["reply"] == "(17+25)*3 = 126."
def test_no_secret_reaches_the_stream_or_the_thread_state(client):
    import json

    typed = "typedsecret-9f8e7d"
    thread_id = client.threads.create()["thread_id"]
    requirement = (f"Show a banner when a user hits the request limit. Use password={typed} on staging; "
                   f"the service key is {SERVER_KEY}.")
    parts = [part.data for part in client.runs.stream(
        thread_id, "delivery_chain", input={"requirement": requirement}, stream_mode=["values", "custom"])]
    state = client.threads.get_state(thread_id)
    history = client.threads.get_history(thread_id)
    seen = json.dumps([parts, state, history])
    assert typed not in seen and SERVER_KEY not in seen
    assert state["values"]["requirement"].count("[redacted]") == 2
    assert "A secret in the requirement was replaced" in state["values"]["report"]


def test_a_chat_thread_paused_at_a_tasklist_review_shows_the_question_as_its_last_message(client):
    thread_id = client.threads.create()["thread_id"]
    request = "/tasklist docs://versions/v0.3.0-needs-review.md"
    client.runs.wait(thread_id, "assistant", input={"messages": [{"role": "user", "content": request}]},
                     context={"human_review": True})
    assert client.threads.get(thread_id)["status"] == "interrupted"
    state = client.threads.get_state(thread_id)
    (pending,) = state["interrupts"]
    assert pending["value"]["kind"] == "strategy_review"
    last = state["values"]["messages"][-1]
    assert last["type"] == "ai" and last["content"].startswith(pending["value"]["question"] + "\n")
    assert all(f"\n- {decision}: " in last["content"] for decision in pending["value"]["allowed_decisions"])

    final = client.runs.wait(thread_id, "assistant", command={"resume": {"type": "approve"}}, context={"human_review": True})
    assert final["reply"].startswith("/tasklist finished with status ")
    messages = client.threads.get_state(thread_id)["values"]["messages"]
    assert [m["type"] for m in messages] == ["human", "ai", "ai"]
    assert messages[1]["content"] == last["content"] and messages[2]["content"] == final["reply"]


def test_a_chat_turn_paused_for_alice_resumes_as_alice_through_the_server(client):
    note = "I deploy on Fridays"
    ask = lambda thread, text, **context: client.runs.wait(  # noqa: E731
        thread, "assistant", input={"messages": [{"role": "user", "content": text}]}, context=context or None)
    ask(client.threads.create()["thread_id"], f"remember that {note}", user_id="alice")
    ask(client.threads.create()["thread_id"], f"remember that {note}")  # user local has the same note
    thread_id = client.threads.create()["thread_id"]
    ask(thread_id, "forget the deploy day", user_id="alice")
    (pending,) = client.threads.get_state(thread_id)["interrupts"]
    assert pending["value"]["tool"] == "forget"

    # Answered with no context (a client that does not know who started the turn): it is alice's.
    client.runs.wait(thread_id, "assistant", command={"resume": {"type": "approve"}})
    notes = lambda user: [item["value"]["text"] for item in  # noqa: E731
                          client.store.search_items(["assistant-memory", user, "shared"])["items"]]
    assert (notes("alice"), notes("local")) == ([], [note])

"""The tasklist agent and the assistant on the real ChatOpenAI path, against the loopback stub."""

from __future__ import annotations

import json

from langchain_core.messages import HumanMessage
from langgraph.store.memory import InMemoryStore

from reins.graphs.assistant import build_graph as build_assistant
from reins.graphs.tasklist_agent import build_graph as build_tasklist
from reins.cli import main
from reins.runtime.llm.models import ROLE_POLICIES
from tests.wire.behaviours import asks_for, cooperative, failing, kind_of, schema_name, tool_names
from tests.wire.conftest import KEY, wire_models
from tests.wire.provider_stub import Completion, HttpError

READY = "/tasklist docs://versions/v0.2.0-ready.md"


def test_tasklist_over_the_wire_ends_final_with_a_structured_decision_and_a_bounded_draft(stub):
    provider = stub(cooperative)
    out = build_tasklist(models=wire_models(provider.base_url)).invoke({"request": READY})
    bodies = provider.bodies()
    assert out["status"] == "final"
    assert [kind_of(b) for b in bodies] == ["PlanningDecision", "text"]
    decision, draft = bodies
    assert decision["response_format"]["type"] == "json_schema"
    assert draft.get("response_format") is None and "tools" not in draft
    assert draft["max_tokens"] == ROLE_POLICIES["tasklist"].max_tokens  # a free-text call is bounded too
    assert KEY not in json.dumps(out, default=str)


def test_a_cut_off_tasklist_draft_is_asked_again_and_never_taken(stub):
    cut = Completion(content="# v0.2.0 Tasklist\n\n## Goals\n- Administrators can", finish_reason="length")
    provider = stub(failing(lambda body: kind_of(body) == "text", cut, times=1))
    out = build_tasklist(models=wire_models(provider.base_url)).invoke({"request": READY})
    texts = [b for b in provider.bodies() if kind_of(b) == "text"]
    assert len(texts) == 2 and "token limit" in texts[1]["messages"][-1]["content"]
    bound = ROLE_POLICIES["tasklist"]
    assert [t["max_tokens"] for t in texts] == [bound.max_tokens, 2 * bound.max_tokens]  # room, once
    assert out["status"] == "final"
    assert "Administrators can\n" not in (out["artifact"] or {}).get("markdown", "")


def test_tasklist_cli_names_the_stage_and_cause_when_the_key_is_refused(stub, fast_cli, capsys):
    provider = stub(lambda body: HttpError(401, f"Incorrect API key provided: {KEY}"))
    fast_cli(provider.base_url)
    code = main(["tasklist", "docs://versions/v0.2.0-ready.md"])
    captured = capsys.readouterr()
    assert code == 4
    assert "planning_decision failed: HTTP 401" in captured.err
    assert KEY not in captured.err + captured.out and "Traceback" not in captured.err
    assert len(provider.bodies()) == 1  # a 401 is not retried


def _assistant(base_url: str):
    return build_assistant(models=wire_models(base_url), store=InMemoryStore())


def test_assistant_over_the_wire_calls_the_calculator_and_answers_from_its_result(stub):
    provider = stub(cooperative)
    out = _assistant(provider.base_url).invoke({"messages": [HumanMessage(content="what is (17+25)*3?")]})
    bodies = provider.bodies()
    assert out["intent"] == "SIMPLE_TOOL"
    assert [r["output"] for r in out["records"]] == ["126"]
    assert out["answer"]["verdict"] == "success" and "126" in out["reply"]
    kinds = [kind_of(b) for b in bodies]
    assert kinds[0] == "AssistantIntent" and kinds[-1] == "AssistantAnswer"
    steps = [b for b in bodies if "calculator" in tool_names(b)]
    assert steps and all(b["max_tokens"] == ROLE_POLICIES["chat"].max_tokens for b in bodies)
    assert any(m.get("role") == "tool" for m in steps[-1]["messages"]) or len(steps) == 1
    assert KEY not in json.dumps(out, default=str)


def test_assistant_whose_intent_contract_fails_never_reports_success(stub):
    prose = Completion(content="The user wants arithmetic.")  # not JSON: the intent contract fails twice
    provider = stub(failing(asks_for("AssistantIntent"), prose))
    out = _assistant(provider.base_url).invoke({"messages": [HumanMessage(content="what is 17*3?")]})
    intents = [b for b in provider.bodies() if schema_name(b) == "AssistantIntent"]
    assert len(intents) == 2
    assert out["records"] == []  # no tool ran
    assert out["answer"]["verdict"] == "failure"


def test_chat_cli_exits_non_zero_when_the_endpoint_is_refused(stub, fast_cli, capsys):
    provider = stub(lambda body: HttpError(500, "boom"))
    fast_cli(provider.base_url)
    code = main(["chat", "--once", "what is 17*3?"])
    captured = capsys.readouterr()
    assert code != 0
    assert "Traceback" not in captured.err and KEY not in captured.err + captured.out


LOOP_LINE = "- [ ] Add the request-limit banner to the settings page\n"


def test_a_draft_that_loops_is_stopped_early_and_repaired_once_never_asked_again_unchanged(stub):
    # The 1.5B model looped on one line of the draft until its timeout; here it streams 20,000
    # copies of it, slowly: the stream is closed after the first few and the draft gets its one
    # repair (told why, with more room).
    loop = Completion(content="# v0.2.0 Tasklist\n\n## Goals\n" + LOOP_LINE * 20_000, finish_reason="length",
                      chunk_delay_s=0.001)
    provider = stub(failing(lambda body: kind_of(body) == "text", loop, times=1))
    out = build_tasklist(models=wire_models(provider.base_url)).invoke({"request": READY})

    texts = [b for b in provider.bodies() if kind_of(b) == "text"]
    assert len(texts) == 2 and all(t["stream"] for t in texts)
    assert texts[1]["messages"][:-1] == texts[0]["messages"]
    assert "repeated the same text" in texts[1]["messages"][-1]["content"]
    bound = ROLE_POLICIES["tasklist"]
    assert [t["max_tokens"] for t in texts] == [bound.max_tokens, 2 * bound.max_tokens]
    written = provider.streamed[0]
    assert written < len(loop.chunks("m")) // 20  # stopped long before the end
    assert out["status"] == "final"
    assert LOOP_LINE * 3 not in out["artifact"]["markdown"]
    assert texts[0]["stream_options"] == {"include_usage": True}  # streamed answers keep their token counts


def test_a_draft_that_loops_again_after_its_repair_fails_as_cut_off(stub):
    loop = Completion(content=LOOP_LINE * 5_000, finish_reason="length")
    provider = stub(failing(lambda body: kind_of(body) == "text", loop))
    out = build_tasklist(models=wire_models(provider.base_url)).invoke({"request": READY})
    assert len([b for b in provider.bodies() if kind_of(b) == "text"]) == 2  # the draft and its one repair
    assert out["status"] == "stopped" and not out.get("artifact")


def test_a_streamed_draft_that_runs_past_its_timeout_is_closed_and_fails_as_a_timeout(stub):
    # A slow server that keeps writing (no loop, each chunk well within the client's read timeout)
    # ran a 1.5B model's draft for 604 s under a 180 s timeout: the timeout bounds the whole answer.
    import dataclasses

    slow = Completion(content="# v0.2.0 Tasklist\n\n" + "".join(f"- step {n} of the plan\n" for n in range(3000)),
                      chunk_delay_s=0.01)
    provider = stub(lambda body: slow if kind_of(body) == "text" else cooperative(body))
    models = wire_models(provider.base_url)
    models = models.with_policies(tasklist=dataclasses.replace(models.policy("tasklist"), timeout_s=0.3))
    out = build_tasklist(models=models).invoke({"request": READY})

    texts = [b for b in provider.bodies() if kind_of(b) == "text"]
    assert len(texts) == 2  # the draft and its one retry, as for a request that is not streamed
    assert all(0 < written < len(slow.chunks("m")) // 10 for written in provider.streamed)  # closed early
    assert out["status"] == "failed" and "timeout" in json.dumps(out.get("failure") or out, default=str).lower()

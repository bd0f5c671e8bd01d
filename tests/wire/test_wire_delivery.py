"""The delivery chain on the real ChatOpenAI path, against a loopback OpenAI-compatible stub.

The stub records every request body; the assertions are about what goes over the wire (tools per
phase, tool_choice, parallel_tool_calls, response_format, max_tokens), how answers in the real
chat-completions format are parsed, and how the chain behaves when the provider misbehaves.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from reins.graphs.delivery_chain import build_graph
from reins.cli import main
from reins.runtime.llm.models import ROLE_POLICIES
from reins.runtime.standins.offline import OfflineModel
from reins.runtime.llm.models import ModelSet
from tests.wire.behaviours import asks_for, cooperative, failing, kind_of, schema_name, text_only, tool_names
from tests.wire.conftest import KEY, wire_models
from tests.wire.llama_server import CONTEXT_400
from tests.wire.provider_stub import Completion, Drop, HttpError, closed_port

SCENARIO = {"requirement_uri": "demo://scenarios/request-limit-banner/requirement.md"}
REVIEW_TOOLS = ["review-subagent", "risk-subagent", "boundary-subagent"]
STRUCTURED = {
    "SupervisorPreDecision": "supervisor", "DeliveryPlan": "planner", "DeliveryTasks": "planner",
    "GeneralReview": "reviewer", "RiskReview": "reviewer", "BoundaryReview": "reviewer",
    "SupervisorPostGuidance": "supervisor",
}


def run(base_url: str, **extra: str) -> dict:
    return build_graph(models=wire_models(base_url, **extra)).invoke(dict(SCENARIO))


def manager_requests(bodies: list[dict]) -> list[dict]:
    return [b for b in bodies if any(name.endswith("-subagent") for name in tool_names(b))]


def test_a_pass_over_the_wire_makes_exactly_the_offline_runs_calls(stub):
    provider = stub(cooperative)
    out = run(provider.base_url)
    offline = build_graph(models=ModelSet.uniform(OfflineModel())).invoke(dict(SCENARIO))

    bodies = provider.bodies()
    assert out["run_status"] == offline["run_status"] == "pass"
    assert len(bodies) == offline["metrics"]["business_calls"] == 10
    assert out["metrics"]["calls"] == offline["metrics"]["calls"]
    assert Counter(kind_of(b) for b in bodies) == Counter({
        **dict.fromkeys(STRUCTURED, 1),
        "tools:plan-subagent": 1, "tools:task-subagent": 1, "tools:" + ",".join(REVIEW_TOOLS): 1,
    })
    # The first request is the supervisor's; the review group's three requests follow its manager turn.
    assert kind_of(bodies[0]) == "SupervisorPreDecision" and kind_of(bodies[-1]) == "SupervisorPostGuidance"


def test_request_shapes_per_phase_and_per_role(stub):
    provider = stub(cooperative)
    run(provider.base_url)
    bodies = provider.bodies()

    managers = manager_requests(bodies)
    # Least privilege per phase: only the tools the delegation policy allows now are offered.
    assert [tool_names(b) for b in managers] == [["plan-subagent"], ["task-subagent"], REVIEW_TOOLS]
    assert [b["tool_choice"] for b in managers] == ["required"] * 3
    assert [b["parallel_tool_calls"] for b in managers] == [False, False, True]
    assert all(b["max_tokens"] == ROLE_POLICIES["manager"].max_tokens for b in managers)

    for body in bodies:
        name = schema_name(body)
        if name in STRUCTURED:
            assert body["response_format"]["type"] == "json_schema"
            assert body["response_format"]["json_schema"]["name"] == name
            assert "tools" not in body
            assert body["max_tokens"] == ROLE_POLICIES[STRUCTURED[name]].max_tokens
        assert "max_completion_tokens" not in body
        assert body["model"] == "stub-model"


def test_the_api_key_goes_to_the_endpoint_and_nowhere_else(stub):
    provider = stub(cooperative)
    out = run(provider.base_url)
    assert {h["authorization"] for h in provider.headers} == {f"Bearer {KEY}"}
    assert KEY not in json.dumps(out, default=str)
    assert all(KEY not in json.dumps(body) for body in provider.bodies())


def test_function_calling_structured_output_asks_with_a_string_tool_choice(stub):
    provider = stub(cooperative)
    out = run(provider.base_url, REINS_STRUCTURED_METHOD="function_calling")
    assert out["run_status"] == "pass"
    structured = [b for b in provider.bodies() if schema_name(b) in STRUCTURED]
    assert len(structured) == 7
    for body in structured:
        assert "response_format" not in body
        assert tool_names(body) == [schema_name(body)]
        assert body["tool_choice"] == "required"  # llama.cpp accepts only auto | required | none


def test_named_tool_choice_names_the_single_allowed_tool(stub):
    provider = stub(cooperative)
    out = run(provider.base_url, REINS_TOOL_CHOICE="named")
    assert out["run_status"] == "pass"
    choices = [b["tool_choice"] for b in manager_requests(provider.bodies())]
    assert choices == [{"type": "function", "function": {"name": "plan-subagent"}},
                       {"type": "function", "function": {"name": "task-subagent"}}, "required"]


def test_a_server_that_ignores_tool_choice_fails_closed_with_no_tool_call(stub):
    provider = stub(text_only)
    out = run(provider.base_url)
    bodies = provider.bodies()
    assert out["run_status"] == "failed"
    assert out["policy_violation"]["code"] == "no_tool_call"
    assert "DeliveryPlan" not in [kind_of(b) for b in bodies]  # no worker ran
    assert out["artifacts"]["plan"] is None
    assert {kind_of(b) for b in bodies} == {"SupervisorPreDecision", "tools:plan-subagent"}


def test_a_cut_off_plan_uses_the_repair_and_then_fails_as_truncated(stub):
    cut = Completion(content='{"summary": "Plan for', finish_reason="length")
    provider = stub(failing(asks_for("DeliveryPlan"), cut))
    out = run(provider.base_url)
    plans = [b for b in provider.bodies() if schema_name(b) == "DeliveryPlan"]
    assert len(plans) == 2  # the call and its one repair
    bound = ROLE_POLICIES["planner"]
    assert [p["max_tokens"] for p in plans] == [bound.max_tokens, min(2 * bound.max_tokens, bound.max_tokens_limit)]
    assert "token limit" in plans[1]["messages"][-1]["content"]
    assert '"code": "truncated"' in plans[1]["messages"][-1]["content"]
    assert out["run_status"] == "failed"
    assert out["failure"]["cause"] == "invalid output after repair: truncated"

    once = stub(failing(asks_for("DeliveryPlan"), cut, times=1))
    assert run(once.base_url)["run_status"] == "pass"


@pytest.mark.parametrize(
    ("reply", "cause"),
    [(HttpError(429, "Rate limit reached", "rate_limit_error"), "HTTP 429"),
     (HttpError(500, "internal error", "server_error"), "HTTP 500"),
     (HttpError(408, "request timeout"), "HTTP 408"),
     (Drop(), "connection failed")],
    ids=["429", "500", "408", "dropped-connection"],
)
def test_transient_failures_are_retried_once_then_fail_cleanly(stub, reply, cause):
    provider = stub(failing(asks_for("SupervisorPreDecision"), reply))
    out = run(provider.base_url)
    assert len(provider.bodies()) == 2  # one try and exactly one retry, then nothing else runs
    assert out["run_status"] == "failed"
    assert (out["failure"]["stage"], out["failure"]["cause"]) == ("supervisor-pre-decision", cause)
    assert f"Cause: {cause}" in out["report"]
    # the failed call and its retry are in the metrics
    assert out["metrics"]["calls"] == {"delivery.supervisor_pre": 1}
    assert (out["metrics"]["retries"], out["metrics"]["failed_calls"]) == (1, 1)

    recovered = stub(failing(asks_for("SupervisorPreDecision"), reply, times=1))
    assert run(recovered.base_url)["run_status"] == "pass"
    assert len(recovered.bodies()) == 11


@pytest.mark.parametrize(
    ("status", "cause"), [(400, "HTTP 400"), (401, "HTTP 401"), (404, "model not found")], ids=["400", "401", "404"]
)
def test_client_errors_are_not_retried(stub, status, cause):
    provider = stub(lambda body: HttpError(status, f"rejected {KEY}"))
    out = run(provider.base_url)
    assert len(provider.bodies()) == 1
    assert out["run_status"] == "failed"
    assert out["failure"]["cause"] == cause
    assert KEY not in json.dumps(out, default=str)


def test_connection_refused_fails_cleanly_naming_the_cause():
    out = run(f"http://127.0.0.1:{closed_port()}/v1")
    assert out["run_status"] == "failed"
    assert (out["failure"]["stage"], out["failure"]["cause"]) == ("supervisor-pre-decision", "connection refused")


def test_cli_names_the_stage_and_cause_and_never_the_key(stub, fast_cli, capsys):
    provider = stub(lambda body: HttpError(401, f"Incorrect API key provided: {KEY}", "invalid_request_error"))
    fast_cli(provider.base_url)

    code = main(["deliver", "--scenario", "request-limit-banner"])

    captured = capsys.readouterr()
    assert code == 4
    assert "supervisor-pre-decision" in captured.err and "HTTP 401" in captured.err
    assert "Traceback" not in captured.err + captured.out
    assert KEY not in captured.err + captured.out
    assert len(provider.bodies()) == 1

    good = stub(cooperative)
    fast_cli(good.base_url)
    assert main(["deliver", "--scenario", "request-limit-banner", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["run_status"] == "pass"
    assert KEY not in captured.err + captured.out


def test_ainvoke_sends_the_same_requests_as_invoke(stub):
    import asyncio

    sync_stub, async_stub = stub(cooperative), stub(cooperative)
    run(sync_stub.base_url)
    out = asyncio.run(build_graph(models=wire_models(async_stub.base_url)).ainvoke(dict(SCENARIO)))
    assert out["run_status"] == "pass"
    shapes = [sorted((kind_of(b), str(b.get("tool_choice")), str(b.get("parallel_tool_calls"))) for b in s.bodies())
              for s in (sync_stub, async_stub)]
    assert shapes[0] == shapes[1] and len(shapes[1]) == 10


def test_a_prompt_larger_than_the_context_window_is_named_with_its_token_count(stub, fast_cli, capsys):
    provider = stub(lambda body: CONTEXT_400)  # llama-server -c 512, as captured
    fast_cli(provider.base_url)

    code = main(["deliver", "--scenario", "request-limit-banner"])

    captured = capsys.readouterr()
    assert code == 4 and len(provider.bodies()) == 1  # a 400 is final: not retried
    assert "supervisor-pre-decision: context window exceeded (prompt 636 tokens, context 512)" in captured.err
    assert "exceeds the available context size" not in captured.err + captured.out  # never the server's text


def test_the_contract_labels_and_inputs_never_reach_the_provider(stub):
    provider = stub(cooperative)
    assert run(provider.base_url)["run_status"] == "pass"
    sent = json.dumps(provider.bodies())
    assert "reins_inputs" not in sent and "reins_contract" not in sent  # metadata stays on this side

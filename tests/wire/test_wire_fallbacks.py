"""Fallbacks, role policies and Retry-After on the real ChatOpenAI path, against loopback stubs.

Two stubs: the primary answers with a final failure (400, 404, 500 three times, or not at all), the
fallback cooperates. The request reaches the fallback, the trace of the call that answered names it,
the key is never printed; a 401 does not fall back.
"""

from __future__ import annotations

import json
import time
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_openai import ChatOpenAI

from reins.cli import main
from reins.graphs.delivery_chain import build_graph
from reins.runtime.llm.model_calls import MODEL_KEY
from reins.runtime.llm.models import ModelSet, RolePolicy
from reins.runtime.config.settings import ROLES, Settings
from tests.wire.behaviours import cooperative
from tests.wire.conftest import KEY, env_for, wire_models
from tests.wire.provider_stub import Completion, HttpError

REQUIREMENT = {"requirement_uri": "demo://scenarios/request-limit-banner/requirement.md"}


class Answered(BaseCallbackHandler):
    """The trace as a callback sees it: the model label of every call that answered or failed."""

    def __init__(self) -> None:
        self.started: dict[UUID, str] = {}
        self.answered: list[str] = []
        self.failed: list[str] = []

    def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: UUID, metadata: Any = None, **kw: Any) -> None:
        self.started[run_id] = (metadata or {}).get(MODEL_KEY, "")

    def on_llm_end(self, response: Any, *, run_id: UUID, **kw: Any) -> None:
        if run_id in self.started:
            self.answered.append(self.started[run_id])

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        if run_id in self.started:
            self.failed.append(self.started[run_id])


def backup(base_url: str) -> ChatOpenAI:
    return ChatOpenAI(model="backup-model", base_url=base_url, api_key=KEY, max_retries=0)


def with_backup(primary_url: str, fallback_url: str, timeout_s: float = 10) -> ModelSet:
    models = wire_models(primary_url)
    fast_timeout = {role: RolePolicy(timeout_s, 1, models.policy(role).temperature, 0.001, models.policy(role).max_tokens)
                    for role in ROLES}
    return models.with_fallbacks({role: backup(fallback_url) for role in ROLES}).with_policies(**fast_timeout)


def hanging(body: dict[str, Any]) -> Any:
    time.sleep(2)
    return cooperative(body)


@pytest.mark.parametrize(
    ("name", "answer", "requests_per_call"),
    [
        ("400", lambda body: HttpError(400, f"bad request for key {KEY}"), 1),
        ("404", lambda body: HttpError(404, "model not found", "not_found_error"), 0),  # then skipped: see below
        ("500x3", lambda body: HttpError(500, "boom", "server_error"), 2),  # the call and its one retry
        ("hang", hanging, 2),
    ],
)
def test_a_final_provider_failure_sends_the_same_request_to_the_fallback(stub, capsys, name, answer, requests_per_call):
    primary, fallback = stub(answer), stub(cooperative)
    timeout = 0.4 if name == "hang" else 10
    handler = Answered()
    out = build_graph(models=with_backup(primary.base_url, fallback.base_url, timeout)).invoke(
        REQUIREMENT, config={"callbacks": [handler]}
    )
    assert out["run_status"] == "pass"
    assert len(fallback.bodies()) == 10  # every call answered by the fallback
    asked = sorted(json.dumps(b["messages"]) for b in primary.bodies())
    if requests_per_call:
        assert len(primary.bodies()) == 10 * requests_per_call
        assert sorted(json.dumps(b["messages"]) for b in fallback.bodies()) == asked[::requests_per_call]  # the same requests
    else:
        # a model that is not there is asked once per role (the parallel reviewers may race), then skipped
        # for the rest of the run; every request it got went to the fallback too
        assert 4 <= len(primary.bodies()) <= 6
        assert set(asked) <= {json.dumps(b["messages"]) for b in fallback.bodies()}
    assert set(handler.answered) == {"ChatOpenAI:backup-model"} and len(handler.answered) == 10
    assert set(handler.failed) == {"openai-compatible:stub-model"}
    metrics = out["metrics"]
    assert metrics["models"] and all(v == ["ChatOpenAI:backup-model"] for v in metrics["models"].values())
    assert sum(metrics["fallbacks_per_role"].values()) == 10 and metrics["fallbacks_per_role"]["reviewer"] == 3
    printed = capsys.readouterr()
    assert KEY not in json.dumps(out, default=str) + printed.out + printed.err


def test_a_401_does_not_fall_back(stub):
    primary, fallback = stub(lambda body: HttpError(401, f"Incorrect API key provided: {KEY}")), stub(cooperative)
    out = build_graph(models=with_backup(primary.base_url, fallback.base_url)).invoke(REQUIREMENT)
    assert out["run_status"] == "failed"
    assert out["failure"]["cause"] == "HTTP 401"
    assert fallback.bodies() == [] and len(primary.bodies()) == 1
    assert KEY not in json.dumps(out, default=str)


def test_fallbacks_from_the_environment_are_tried_in_order_on_the_same_endpoint(stub):
    by_model = {"gone": HttpError(404, "no such model"), "busy": HttpError(429, "slow down")}
    provider = stub(lambda body: by_model.get(body["model"]) or cooperative(body))
    settings_env = env_for(provider.base_url, REINS_MODEL="gone", REINS_MODEL_FALLBACK="busy, good")
    models = wire_models(provider.base_url, REINS_MODEL="gone", REINS_MODEL_FALLBACK="busy, good")
    assert Settings.from_env(settings_env).fallbacks_for("planner") == ("busy", "good")
    out = build_graph(models=models).invoke(REQUIREMENT)
    assert out["run_status"] == "pass"
    asked = [b["model"] for b in provider.bodies()]
    assert asked[:4] == ["gone", "busy", "busy", "good"]  # 404: next at once; 429: its retry, then next
    assert out["metrics"]["models"]["planner"] == ["openai-compatible:good"]


def test_the_role_policy_reaches_a_model_passed_in(stub):
    provider = stub(cooperative)
    mine = ChatOpenAI(model="mine", base_url=provider.base_url, api_key=KEY, max_retries=0, temperature=0.0)
    policy = RolePolicy(timeout_s=10, retries=1, temperature=0.9, max_tokens=99)
    models = ModelSet.uniform(mine).with_policies(**{role: policy for role in ROLES})
    out = build_graph(models=models).invoke(REQUIREMENT)
    assert out["run_status"] == "pass"
    bodies = provider.bodies()
    assert len(bodies) == 10
    assert {b["temperature"] for b in bodies} == {0.9}
    assert {b.get("max_completion_tokens") for b in bodies} == {99}


def test_retry_after_is_honoured(stub):
    seen: list[float] = []

    def limited(body: dict[str, Any]) -> Any:
        seen.append(time.monotonic())
        if len(seen) == 1:
            return HttpError(429, "slow down", "rate_limit_error", headers=(("retry-after", "0.6"),))
        return cooperative(body)

    provider = stub(limited)
    build_graph(models=wire_models(provider.base_url)).invoke(REQUIREMENT)
    assert len(provider.bodies()) == 11
    assert seen[1] - seen[0] >= 0.6  # the backoff alone would be about a millisecond


BACKUP_KEY = "sk-backup-SECOND-0123456789abcdef0123"


def test_a_fallback_on_its_own_endpoint_says_so_everywhere_and_the_missing_primary_is_skipped(
        stub, fast_cli, capsys, monkeypatch):
    # "local server down → another server": the primary's endpoint answers 404 (no such model), the
    # fallback entry names its own endpoint and the variable holding its key.
    primary = stub(lambda body: HttpError(404, "model not found", "not_found_error"))
    backup_server = stub(cooperative)
    fast_cli(primary.base_url, REINS_MODEL_FALLBACK=f"backup@{backup_server.base_url}#REINS_BACKUP_KEY")
    monkeypatch.setenv("REINS_BACKUP_KEY", BACKUP_KEY)

    code = main(["deliver", "--scenario", "request-limit-banner", "--json"])
    printed = capsys.readouterr()
    out = json.loads(printed.out)

    assert code == 0 and out["run_status"] == "pass"
    # the backup got every call with its own key, never the primary's
    assert len(backup_server.bodies()) == 10
    assert {h["authorization"] for h in backup_server.headers} == {f"Bearer {BACKUP_KEY}"}
    assert 4 <= len(primary.bodies()) <= 6  # asked once per role, then skipped for the rest of the run
    host = backup_server.base_url.split("//")[1].split("/")[0]
    models_line = next(line for line in out["report"].splitlines() if line.startswith("Models:"))
    assert f"openai-compatible:backup@{host} (fallback)" in models_line
    warnings = out["report"].split("## Warnings")[1].split("##")[0]
    assert "planner: 2 call(s) answered by a fallback model" in warnings and "None." not in warnings
    assert sum(out["metrics"]["fallbacks_per_role"].values()) == 10
    assert KEY not in printed.out + printed.err and BACKUP_KEY not in printed.out + printed.err


def test_a_fallback_shows_in_the_live_progress_and_in_chat(stub, fast_cli, capsys, monkeypatch):
    primary = stub(lambda body: HttpError(404, "model not found", "not_found_error"))
    backup_server = stub(cooperative)
    fast_cli(primary.base_url, REINS_MODEL_FALLBACK=f"backup@{backup_server.base_url}")

    graph = build_graph(models=wire_models(primary.base_url,
                                           REINS_MODEL_FALLBACK=f"backup@{backup_server.base_url}"))
    events = [chunk for chunk in graph.stream(REQUIREMENT, stream_mode="custom")]
    shown = [e for e in events if e.get("step") == "model-fallback"]
    assert shown and shown[0]["summary"].startswith("openai-compatible:stub-model failed (model not found); using "
                                                    "openai-compatible:backup@")
    assert {h.get("authorization") for h in backup_server.headers} == {"Bearer not-needed"}  # no key of another server

    main(["chat", "--once", "what is (17+25)*3?"])
    # the chat's task roles (classify, step, answer, check) each say their own fallback
    assert "note: classify: 1 call(s) answered by a fallback model" in capsys.readouterr().out
    main(["chat", "--once", "what is (17+25)*3?", "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert payload["fallbacks"] and payload["fallbacks"][0].startswith("classify: ")


def test_chat_json_reports_the_turns_fallbacks(stub, fast_cli, capsys):
    from reins.cli import main

    provider = stub(lambda body: HttpError(404, "no such model") if body["model"] == "gone" else cooperative(body))
    fast_cli(provider.base_url, REINS_MODEL="gone", REINS_MODEL_FALLBACK="good")
    assert main(["chat", "--once", "what is (17+25)*3?", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    metrics = payload["metrics"]
    calls = sum(1 for b in provider.bodies() if b["model"] == "gone")
    # the missing model is asked once per task role, then skipped: every call moved on to the fallback
    assert calls >= 2 and metrics["fallbacks"] >= calls
    assert sum(metrics["fallbacks_per_role"].values()) == metrics["fallbacks"]
    assert set(metrics["fallbacks_per_role"]) <= {"classify", "step", "answer", "check"}
    assert {label for labels in payload["models"].values() for label in labels} == {"openai-compatible:good"}


ESCALATION_KEY = "sk-escalation-OWN-0123456789abcdef0123"


def test_an_escalation_entry_in_the_fallback_list_gets_the_request_on_its_own_endpoint_with_its_own_key(stub):
    from langchain_core.messages import HumanMessage, SystemMessage

    from reins.runtime.contracts import invoke_contract
    from reins.schemas.delivery import GeneralReview

    # the primary answers the review with JSON that fails its contract, first and after the repair
    primary = stub(lambda body: cooperative(body) if body.get("tools") else
                   Completion(content=json.dumps({"verdict": "maybe", "summary": "?"})))
    stronger = stub(cooperative)
    models = wire_models(primary.base_url, REINS_MODEL_FALLBACK=f"escalate=big@{stronger.base_url}#REINS_BIG_KEY",
                         REINS_BIG_KEY=ESCALATION_KEY)
    ask = [SystemMessage(content="You review."), HumanMessage(content="<plan>\nship it\n</plan>")]

    result = invoke_contract("delivery.general_review", GeneralReview, ask, models)

    assert isinstance(result.value, GeneralReview)
    assert [b["model"] for b in primary.bodies()] == ["stub-model", "stub-model"]  # the answer and its repair
    assert [b["model"] for b in stronger.bodies()] == ["big"]
    assert {h["authorization"] for h in stronger.headers} == {f"Bearer {ESCALATION_KEY}"}  # never the role's key
    assert {h["authorization"] for h in primary.headers} == {f"Bearer {KEY}"}
    assert result.metrics["delivery.general_review"]["escalations"] == 1

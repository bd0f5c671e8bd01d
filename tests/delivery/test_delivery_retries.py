"""Transient provider failures are retried per role policy in every stage of the delivery chain,
reviewers included; a deadline (a bare TimeoutError) and a 400 never are."""

from __future__ import annotations

import dataclasses

import httpx
import openai
import pytest
from tests.delivery.delivery_builders import finding, general, plan, post, script, tasks

from reins.graphs.delivery_chain import build_graph
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.scripted import ScriptedModel

REQUEST = httpx.Request("POST", "https://provider.invalid/v1/chat/completions")
REQUIREMENT = {"requirement": "Show a banner when the request limit is reached."}


def provider_timeout():
    return openai.APITimeoutError(request=REQUEST)


def rate_limited():
    return openai.RateLimitError("slow down", response=httpx.Response(429, request=REQUEST), body=None)


def server_error():
    return openai.InternalServerError("upstream", response=httpx.Response(503, request=REQUEST), body=None)


def bad_request():
    return openai.BadRequestError("bad", response=httpx.Response(400, request=REQUEST), body=None)


def fast(model) -> ModelSet:
    models = ModelSet.uniform(model)
    return models.with_policies(**{role: dataclasses.replace(policy, backoff_initial_s=0.001)
                                   for role, policy in models.policies.items()})


REVISING = {
    "general_review": [general("needs_changes", findings=[finding("Recovery is missing.", targets=("plan", "tasks"))])],
    "supervisor_post": [post("plan", "tasks")],
    "plan_revision": [plan(summary="Revised plan.")],
    "task_revision": [tasks(summary="Revised tasks.")],
}
# Every model-calling stage: the contract, the script it needs, and the status the run ends in.
STAGES = [
    ("supervisor_pre", {}, "pass"),
    ("manager", {}, "pass"),
    ("plan", {}, "pass"),
    ("tasks", {}, "pass"),
    ("general_review", {}, "pass"),
    ("risk_review", {}, "pass"),
    ("boundary_review", {}, "pass"),
    ("supervisor_post", {}, "pass"),
    ("plan_revision", REVISING, "needs_review"),
    ("task_revision", REVISING, "needs_review"),
    ("report_polish", {"report_polish": [{"summary": "Polished."}]}, "pass"),
]


def _run(stage: str, overrides: dict, first_answer) -> tuple[ScriptedModel, dict]:
    responses = script(**overrides)
    if stage == "report_polish":
        responses["delivery.report_polish"] = [{"summary": "Polished."}]
    contract = f"delivery.{stage}"
    responses[contract] = [first_answer, *responses[contract]]
    model = ScriptedModel(responses)
    out = build_graph(fast(model)).invoke(REQUIREMENT, context={"polish": stage == "report_polish"})
    return model, out


@pytest.mark.parametrize("error", [provider_timeout, rate_limited, server_error])
@pytest.mark.parametrize(("stage", "overrides", "status"), STAGES, ids=[s[0] for s in STAGES])
def test_a_transient_failure_is_retried_in_every_stage(stage, overrides, status, error):
    model, out = _run(stage, overrides, error())
    contract = f"delivery.{stage}"
    plain = ScriptedModel(script(**overrides))
    build_graph(fast(plain)).invoke(REQUIREMENT)
    expected_calls = plain.count(contract) + (1 if stage == "report_polish" else 0)
    assert model.count(contract) == expected_calls + 1  # the failed attempt and its retry
    assert out["run_status"] == status
    assert out["metrics"]["per_contract"][contract]["retries"] == 1
    assert out["metrics"]["retries"] == 1
    if stage == "report_polish":
        assert "Polished." in out["report"]


@pytest.mark.parametrize("error", [lambda: TimeoutError("the run's deadline passed"), bad_request])
@pytest.mark.parametrize("stage", ["supervisor_pre", "manager", "plan", "risk_review", "supervisor_post"])
def test_a_deadline_or_a_400_is_never_retried(stage, error):
    model, out = _run(stage, {}, error())
    assert model.count(f"delivery.{stage}") == 1
    assert out["metrics"]["retries"] == 0
    if stage == "risk_review":
        assert out["run_status"] == "needs_review"  # the review is missing; the others completed
    elif stage == "supervisor_post":
        assert out["run_status"] == "pass"  # guidance is optional
    else:
        assert out["run_status"] == "failed"


def test_retries_stop_at_the_role_policy_in_a_reviewer():
    model = ScriptedModel({**script(), "delivery.risk_review": [provider_timeout()] * 3})
    out = build_graph(fast(model)).invoke(REQUIREMENT)
    assert model.count("delivery.risk_review") == 2  # one try and the reviewer role's single retry
    assert out["review_bundle"]["coverage"]["risk"] == "timeout"
    assert out["run_status"] == "needs_review"


def test_the_reviewer_deadline_leaves_room_for_a_retry():
    from reins.nodes.delivery.common import DeliveryDeps
    from reins.runtime.tools.toolbox import default_registry

    models = ModelSet.uniform(ScriptedModel({}))
    deps = DeliveryDeps(models=models, tools=default_registry().for_scope("delivery-chain-manager"))
    policy = models.policy("reviewer")
    # a timed-out first attempt, the longest backoff and a full retry, for the call and its repair
    assert deps.review_timeout(None, models) >= 2 * (2 * policy.timeout_s + 2 * policy.backoff_initial_s)

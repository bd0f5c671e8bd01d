"""PerturbedModel: seeded and deterministic; every kind occurs; every kind is caught by a contract
(repair or failure) or by the delegation policy in the controlled chain."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import ValidationError

from reins.evals.baselines import chain_failure
from reins.evals.markers import read_marker
from reins.evals.perturbed import (
    FAMILIES,
    PERTURBATIONS,
    RAISING,
    RETRYABLE_KINDS,
    PerturbedModel,
    enum_fields,
    expand_kinds,
    perturb_data,
    perturb_text,
    perturb_tool_turn,
    raised_error,
)
from reins.graphs.delivery_chain import build_graph
from reins.policies.delivery.delegation import DEFAULT_POLICY, DelegationLedger, ProposedCall, SUBAGENT_TOOLS, check_delegation, MANAGER
from reins.runtime.contracts import ContractError, ContractTimeout, invoke_contract, invoke_text
from reins.runtime.llm.model_calls import _json_schema
from reins.runtime.llm.failures import is_retryable
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.offline import OfflineModel
from reins.runtime.standins.scripted import ScriptedModel
from reins.schemas.delivery import BoundaryReview, DeliveryPlan, GeneralReview, RiskReview, SupervisorPreDecision
from tests.delivery.delivery_builders import boundary, general, plan, pre_execute, risk

DATA_KINDS = ("rephrased_verdict", "schema_drift", "extra_fields", "wrong_enum")
BANNER = {"requirement_uri": "demo://scenarios/request-limit-banner/requirement.md"}
CASES = [
    (GeneralReview, general("needs_changes")),
    (RiskReview, risk("high")),
    (BoundaryReview, boundary("passed")),
    (SupervisorPreDecision, pre_execute()),
    (DeliveryPlan, plan()),
]


def ask(text: str = "review this") -> list:
    return [SystemMessage(content="You review."), HumanMessage(content=text)]


# ------------------------------------------------------------------------------ pure perturbations


@pytest.mark.parametrize("kind", DATA_KINDS)
@pytest.mark.parametrize(("schema", "valid"), CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_every_data_perturbation_breaks_the_strict_schema(kind, schema, valid):
    schema.model_validate(valid)  # the builders' outputs are valid
    for seed in range(12):
        changed, applied = perturb_data(valid, kind, random.Random(seed), _json_schema(schema))
        assert applied == kind or applied == "extra_fields"  # a plan has no verdict or enum to disturb
        with pytest.raises(ValidationError):
            schema.model_validate(changed)


def test_enum_fields_read_from_the_json_schema():
    enums = enum_fields(_json_schema(GeneralReview))
    assert enums["disposition"] == {"pass", "needs_changes", "blocked"}
    assert enums["role"] == {"general"}
    assert enums["target_artifacts"] == {"plan", "tasks"}
    assert enums["severity"] >= {"blocker", "info"}


def test_rephrased_verdict_prefers_the_verdict_field():
    for seed in range(10):
        changed, _ = perturb_data(general("pass"), "rephrased_verdict", random.Random(seed),
                                  _json_schema(GeneralReview))
        rephrased = [key for key in ("disposition", "plan_task_alignment") if changed[key] != general("pass")[key]]
        assert len(rephrased) == 1 and changed["role"] == "general"
        assert changed[rephrased[0]] in ("Looks good to ship", "They match up")


STATUS_TEXT = "# Delivery\n\nGENERAL: pass\nRISK: low\nBOUNDARY: passed\n\nSTATUS: pass"


@pytest.mark.parametrize("kind", ["rephrased_verdict", "schema_drift", "wrong_enum"])
def test_text_perturbations_make_a_marker_unreadable(kind):
    labels = ("GENERAL", "RISK", "BOUNDARY", "STATUS")
    before = {label: read_marker(STATUS_TEXT, label) for label in labels}
    for seed in range(10):
        text, applied = perturb_text(STATUS_TEXT, kind, random.Random(seed))
        after = {label: read_marker(text, label) for label in labels}
        assert applied == kind
        assert sum(after[label] is None for label in labels) == 1 and before != after


def test_extra_lines_leave_the_markers_readable_and_json_text_is_disturbed_as_data():
    text, applied = perturb_text(STATUS_TEXT, "extra_fields", random.Random(1))
    assert applied == "extra_fields" and read_marker(text, "STATUS") == "pass" and text.startswith(STATUS_TEXT)
    drafted, applied = perturb_text('{"role": "risk", "severity": "low"}', "wrong_enum", random.Random(1))
    assert applied == "wrong_enum" and drafted != '{"role": "risk", "severity": "low"}'


def _policy(message: AIMessage, executed=(), artifacts=()):
    calls = [ProposedCall(c["name"], c.get("args") or {}) for c in message.tool_calls]
    return check_delegation(calls, DelegationLedger(executed=tuple(executed), artifacts=frozenset(artifacts),
                                                    caller=MANAGER))


@pytest.mark.parametrize("kind", DATA_KINDS)
@pytest.mark.parametrize(
    ("names", "executed", "artifacts"),
    [(["plan-subagent"], (), ()),
     (["review-subagent", "risk-subagent", "boundary-subagent"], ("plan-subagent", "task-subagent"), ("plan", "tasks"))],
)
def test_every_tool_turn_perturbation_is_refused_by_the_delegation_policy(kind, names, executed, artifacts):
    turn = AIMessage(content="", tool_calls=[{"name": n, "args": {"note": "go"}, "id": f"c{i}", "type": "tool_call"}
                                             for i, n in enumerate(names)])
    assert _policy(turn, executed, artifacts).allowed
    for seed in range(8):
        changed, applied = perturb_tool_turn(turn, kind, random.Random(seed), SUBAGENT_TOOLS)
        assert applied == kind
        assert not _policy(changed, executed, artifacts).allowed


# ------------------------------------------------------------------------------ the model


def test_rate_zero_passes_everything_through_and_bad_arguments_are_refused():
    inner = ScriptedModel({"delivery.risk_review": [risk("low")], "eval.single_agent": ["STATUS: pass"]})
    model = PerturbedModel(inner, 0.0, 7)
    models = ModelSet.uniform(model)
    assert invoke_contract("delivery.risk_review", RiskReview, ask(), models).value.severity == "low"
    assert invoke_text("eval.single_agent", ask(), models).text == "STATUS: pass"
    assert model.injected == [] and inner.contracts_called() == ["delivery.risk_review", "eval.single_agent"]
    with pytest.raises(ValueError):
        PerturbedModel(inner, 1.5, 0)
    with pytest.raises(ValueError):
        PerturbedModel(inner, 0.5, 0, kinds=("typo",))


def fast(model) -> ModelSet:
    """Every role served by ``model``, with the roles' retries after a millisecond backoff."""
    models = ModelSet.uniform(model)
    return models.with_policies(**{role: dataclasses.replace(policy, backoff_initial_s=0.001)
                                   for role, policy in models.policies.items()})


def _draws(seed: int, rate: float = 0.5, n: int = 60):
    inner = ScriptedModel({"delivery.risk_review": lambda messages: risk("medium")})
    model = PerturbedModel(inner, rate, seed)
    models = fast(model)
    outcomes = []
    for i in range(n):
        try:
            result = invoke_contract("delivery.risk_review", RiskReview, ask(f"prompt {i}"), models)
            outcomes.append(("ok", result.metrics["delivery.risk_review"]["repair_calls"]))
        except (ContractError, ContractTimeout, openai.APIConnectionError, openai.BadRequestError) as error:
            outcomes.append((type(error).__name__, 0))
    return outcomes, model.injected


def test_perturbations_are_deterministic_for_a_seed_and_every_kind_occurs():
    first, injected = _draws(3)
    again, injected_again = _draws(3)
    other, injected_other = _draws(4)
    assert first == again and injected == injected_again
    assert injected != injected_other
    counts = Counter(i.kind for i in injected)
    # No deadline runs around these calls: a deadline overrun is drawn as a provider timeout.
    assert set(counts) == set(PERTURBATIONS) - {"deadline_overrun"}
    assert 0.3 < sum(counts.values()) / (len(first) * 1.5) < 0.7  # about the rate (repairs are calls too)
    # every disturbed business call was caught: repaired, retried, or failed as a contract / timeout / 400
    assert {o for o, _ in first} >= {"ok", "ContractError", "BadRequestError"}
    assert any(repairs for o, repairs in first if o == "ok")


def test_a_deadline_overrun_is_injected_only_under_a_deadline():
    from reins.runtime.execution.deadline import deadline_scope

    def overruns(under_deadline: bool) -> Counter:
        inner = ScriptedModel({"delivery.risk_review": lambda messages: risk("medium")})
        model = PerturbedModel(inner, 1.0, 0, kinds=("timeout",))
        for i in range(12):
            try:
                if under_deadline:
                    with deadline_scope(60):
                        invoke_contract("delivery.risk_review", RiskReview, ask(f"prompt {i}"), fast(model))
                else:
                    invoke_contract("delivery.risk_review", RiskReview, ask(f"prompt {i}"), fast(model))
            except ContractTimeout:
                pass
        return Counter(i.kind for i in model.injected)

    assert set(overruns(True)) == {"deadline_overrun", "provider_timeout"}
    assert set(overruns(False)) == {"provider_timeout"}


def test_structured_perturbation_once_is_caught_by_the_single_repair():
    for kind in DATA_KINDS:
        model = PerturbedModel(OfflineModel(), 1.0, 0, kinds=(kind,), limit=1)
        messages = ask("<requirement>\n- Show a banner at the request limit.\n</requirement>")
        result = invoke_contract("delivery.risk_review", RiskReview, messages, ModelSet.uniform(model))
        assert result.metrics["delivery.risk_review"]["repair_calls"] == 1
        assert [i.kind for i in model.injected] == [kind]


# ------------------------------------------------------------------------------ in the controlled chain


def _chain(model) -> dict:
    return build_graph(fast(model)).invoke(BANNER)


def asks(kind: str) -> int:
    """How often a call that always raises ``kind`` reaches the model: once, plus the role's retry
    when the error is a retryable one."""
    return 2 if is_retryable(raised_error(kind, "c")) else 1


def test_the_wrapper_carries_structured_output_and_tool_calls_through_the_chain():
    out = _chain(PerturbedModel(OfflineModel(), 0.0, 0))
    assert out["run_status"] == "pass" and out["metrics"]["repair_calls"] == 0


@pytest.mark.parametrize("kind", PERTURBATIONS)
def test_each_kind_on_a_reviewer_is_caught_and_the_run_degrades(kind):
    model = PerturbedModel(OfflineModel(), 1.0, 0, kinds=(kind,), contracts={"delivery.risk_review"})
    out = _chain(model)
    assert kind in {i.kind for i in model.injected}
    coverage = out["review_bundle"]["coverage"]
    expected = {"provider_timeout": "timeout", "deadline_overrun": "timeout", "connection_error": "execution_failed",
                "bad_request": "execution_failed"}.get(kind, "contract_failure")
    assert coverage == {"general": "completed", "risk": expected, "boundary": "completed"}
    assert out["run_status"] == "needs_review"
    if expected == "contract_failure":  # the business call and its one repair were both rejected
        assert out["metrics"]["per_contract"]["delivery.risk_review"]["repair_calls"] == 1
    else:  # a raising kind: retried once when retryable, never when not (a deadline, a 400)
        assert [i.kind for i in model.injected] == [kind] * asks(kind)


@pytest.mark.parametrize("kind", DATA_KINDS)
def test_each_data_kind_once_is_repaired_and_the_run_still_passes(kind):
    model = PerturbedModel(OfflineModel(), 1.0, 0, kinds=(kind,), contracts={"delivery.general_review"}, limit=1)
    out = _chain(model)
    assert len(model.injected) == 1
    assert out["metrics"]["per_contract"]["delivery.general_review"]["repair_calls"] == 1
    assert out["run_status"] == "pass"


@pytest.mark.parametrize("kind", PERTURBATIONS)
def test_each_kind_on_the_manager_fails_closed(kind):
    model = PerturbedModel(OfflineModel(), 1.0, 0, kinds=(kind,), contracts={"delivery.manager"})
    out = _chain(model)
    assert out["run_status"] == "failed" and out["artifacts"]["plan"] is None
    if kind in RAISING:
        assert [i.kind for i in model.injected] == [kind] * asks(kind)
        assert chain_failure(out) == "manager: manager_failed"
    else:  # refused by the delegation policy, never executed; asked once more (the re-ask budget), refused again
        assert [i.kind for i in model.injected] == [kind] * (1 + DEFAULT_POLICY.max_manager_reasks)
        assert out["metrics"]["manager_refusals"] == 1 + DEFAULT_POLICY.max_manager_reasks
        assert out["policy_violation"] is not None and chain_failure(out).startswith("delegation: ")


@pytest.mark.parametrize(
    ("kind", "error_type", "retryable"),
    [
        ("provider_timeout", openai.APITimeoutError, True),
        ("connection_error", openai.APIConnectionError, True),
        ("deadline_overrun", TimeoutError, False),
        ("bad_request", openai.BadRequestError, False),
    ],
)
def test_raising_kinds_are_what_providers_and_deadlines_raise(kind, error_type, retryable):
    error = raised_error(kind, "delivery.manager")
    assert type(error) is error_type
    assert (kind in RETRYABLE_KINDS) is retryable
    if kind == "deadline_overrun":  # a bare TimeoutError: what the run's own deadline raises
        assert not isinstance(error, openai.OpenAIError)
    if kind == "bad_request":
        assert error.status_code == 400


def test_the_split_kinds_keep_the_old_families():
    assert FAMILIES["timeout"] == ("provider_timeout", "deadline_overrun")
    assert FAMILIES["exception"] == ("connection_error", "bad_request")
    assert expand_kinds(("timeout",)) == ("provider_timeout", "deadline_overrun")
    assert expand_kinds(("exception", "wrong_enum")) == ("wrong_enum", "connection_error", "bad_request")
    assert expand_kinds(PERTURBATIONS) == PERTURBATIONS and len(PERTURBATIONS) == 8
    with pytest.raises(ValueError):
        expand_kinds(("typo",))


def test_the_draw_picks_a_family_first_so_raising_calls_keep_their_share():
    inner = ScriptedModel({"eval.single_agent": lambda messages: "STATUS: pass"})
    model = PerturbedModel(inner, 1.0, 11)
    models = ModelSet.uniform(model).with_policies(**{role: dataclasses.replace(policy, retries=0)
                                                      for role, policy in ModelSet.uniform(inner).policies.items()})
    for i in range(1200):
        try:
            invoke_text("eval.single_agent", ask(f"prompt {i}"), models)
        except (ContractTimeout, openai.OpenAIError, TimeoutError):
            pass
    counts = Counter(i.kind for i in model.injected)
    per_family = {family: sum(counts[k] for k in kinds) for family, kinds in FAMILIES.items()}
    assert all(150 <= n <= 250 for n in per_family.values()), per_family  # 1/6 each: 200 expected
    # half a family each (100 expected); outside a deadline the overrun draws are provider timeouts
    assert all(60 <= counts[k] <= 140 for k in RAISING - {"deadline_overrun", "provider_timeout"}), counts
    assert counts["deadline_overrun"] == 0 and 150 <= counts["provider_timeout"] <= 250, counts

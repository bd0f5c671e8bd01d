"""Escalation: a contract still invalid after its repair goes once to the role's escalation model,
checked by the same schema; the rule itself (``reins.policies.models.escalation``) table-tested."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from reins.policies.models.escalation import escalation_allowed
from reins.runtime.contracts import ContractError, ainvoke_contract, invoke_contract, invoke_text
from reins.runtime.llm.escalation import escalated, escalation_label
from reins.runtime.llm.models import ModelSet, model_set_from_settings
from reins.runtime.standins.scripted import ScriptedModel
from reins.runtime.config.settings import Settings, SettingsError
from tests.runtime.test_contract_invocation import GOOD, Review

CONTRACT = "delivery.general_review"  # role "reviewer"
ASK = [SystemMessage(content="You review."), HumanMessage(content="<plan>\nship it\n</plan>")]
BAD = {"verdict": "maybe", "summary": "?"}


@pytest.mark.parametrize(
    ("configured", "failed", "allowed", "already", "expected"),
    [
        (True, 2, 2, False, True),  # contract: first answer and repair both invalid
        (True, 1, 2, False, False),  # the repair has not been tried yet
        (False, 2, 2, False, False),  # no escalation model for the role
        (True, 2, 2, True, False),  # never twice
        (True, 3, 3, False, True),  # a manager turn with a budget of two re-asks, all refused
        (True, 2, 3, False, False),
        (True, 0, 0, False, False),  # a request with no attempt of its own is never escalated
    ],
)
def test_escalation_rule(configured, failed, allowed, already, expected):
    assert escalation_allowed(configured=configured, failed_attempts=failed, allowed_attempts=allowed,
                              escalated=already) is expected


def _models(primary, stronger=None, fast_models=None) -> ModelSet:
    models = fast_models(primary)
    return models.with_escalations({"reviewer": ("strong", stronger)}) if stronger is not None else models


def test_invalid_after_repair_goes_once_to_the_escalation_model(fast_models):
    primary = ScriptedModel({CONTRACT: [BAD, BAD]})
    stronger = ScriptedModel({CONTRACT: [GOOD]})

    result = invoke_contract(CONTRACT, Review, ASK, _models(primary, stronger, fast_models))

    assert result.value == Review.model_validate(GOOD)
    assert (primary.count(CONTRACT), stronger.count(CONTRACT)) == (2, 1)
    # the same request: the original messages, not the repair's
    assert [m.content for m in stronger.calls[0].messages] == [m.content for m in ASK]
    counts = result.metrics[CONTRACT]
    assert (counts["business_calls"], counts["repair_calls"], counts["escalations"]) == (1, 1, 1)
    assert counts["model:strong"] == 1


def test_async_escalation_is_the_same(fast_models):
    primary = ScriptedModel({CONTRACT: [BAD, BAD]})
    stronger = ScriptedModel({CONTRACT: [GOOD]})
    result = asyncio.run(ainvoke_contract(CONTRACT, Review, ASK, _models(primary, stronger, fast_models)))
    assert result.metrics[CONTRACT]["escalations"] == 1 and stronger.count(CONTRACT) == 1


@pytest.mark.parametrize("answer", [BAD, ValueError("provider said no")], ids=["invalid-too", "raises"])
def test_an_escalation_that_fails_too_raises_the_contract_error(fast_models, answer):
    primary = ScriptedModel({CONTRACT: [BAD, BAD]})
    stronger = ScriptedModel({CONTRACT: [answer, GOOD]})

    with pytest.raises(ContractError) as caught:
        invoke_contract(CONTRACT, Review, ASK, _models(primary, stronger, fast_models))

    assert stronger.count(CONTRACT) == 1  # once, never again
    assert caught.value.issues and caught.value.metrics[CONTRACT]["escalations"] == 1


def test_without_an_escalation_model_nothing_more_is_asked(fast_models):
    primary = ScriptedModel({CONTRACT: [BAD, BAD, GOOD]})
    with pytest.raises(ContractError):
        invoke_contract(CONTRACT, Review, ASK, fast_models(primary))
    assert primary.count(CONTRACT) == 2


def test_a_valid_answer_or_a_repaired_one_never_escalates(fast_models):
    primary = ScriptedModel({CONTRACT: [BAD, GOOD]})
    stronger = ScriptedModel({CONTRACT: [GOOD]})
    result = invoke_contract(CONTRACT, Review, ASK, _models(primary, stronger, fast_models))
    assert stronger.count(CONTRACT) == 0 and "escalations" not in result.metrics[CONTRACT]


def test_another_roles_escalation_model_is_not_used(fast_models):
    primary = ScriptedModel({CONTRACT: [BAD, BAD]})
    stronger = ScriptedModel({CONTRACT: [GOOD]})
    models = fast_models(primary).with_escalations({"planner": ("strong", stronger)})
    with pytest.raises(ContractError):
        invoke_contract(CONTRACT, Review, ASK, models)
    assert stronger.count(CONTRACT) == 0


def test_free_text_is_not_escalated(fast_models):
    primary = ScriptedModel({"tasklist.draft": ["a draft"]})
    stronger = ScriptedModel({"tasklist.draft": ["better"]})
    models = fast_models(primary).with_escalations({"tasklist": ("strong", stronger)})
    assert invoke_text("tasklist.draft", ASK, models).text == "a draft" and stronger.count("tasklist.draft") == 0


def test_the_escalated_set_serves_the_role_alone_with_the_same_policy(fast_models):
    primary, stronger, backup = ScriptedModel({}), ScriptedModel({}), ScriptedModel({})
    models = fast_models(primary).with_fallbacks({"reviewer": backup}).with_escalations({"reviewer": ("strong", stronger)})
    chosen = escalated(models, "reviewer")
    assert chosen.chain("reviewer") == (("strong", stronger),)  # no fallback, no second escalation
    assert chosen.policy("reviewer") == models.policy("reviewer") and "reviewer" not in chosen.escalations
    assert chosen.get("planner") is primary and escalated(models, "reviewer") is chosen
    assert escalation_label(models, "reviewer") == "strong" and escalation_label(models, "planner") is None


def test_settings_name_the_escalation_model_per_role():
    settings = Settings.from_env({"REINS_MODEL": "small", "REINS_MODEL_ESCALATE": "big",
                                  "REINS_MODEL_ESCALATE_MANAGER": "bigger", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert (settings.escalation_for("planner"), settings.escalation_for("manager")) == ("big", "bigger")
    models = model_set_from_settings(settings)
    assert models.escalations["manager"][0] == "openai-compatible:bigger"
    assert models.escalations["planner"][0] == "openai-compatible:big"
    assert models.escalations["manager"][1].model_name == "bigger"
    assert model_set_from_settings(Settings.from_env({"REINS_MODEL_ESCALATE": "big"})).escalations == {}  # offline
    with pytest.raises(SettingsError, match="REINS_MODEL_ESCALATE_NOPE"):
        Settings.from_env({"REINS_MODEL_ESCALATE_NOPE": "big"})

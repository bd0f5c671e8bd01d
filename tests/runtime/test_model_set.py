"""ModelSet from settings: the offline default, OpenAI-compatible roles with the per-role call policies."""

from __future__ import annotations

import httpx
import openai
import pytest
from langchain_openai import ChatOpenAI

from reins.runtime.config.context import ReinsContext, resolve_contract_mode, resolve_models
from reins.policies.models.retry import is_retryable_status
from reins.runtime.llm.failures import is_retryable
from reins.runtime.llm.models import ROLE_POLICIES, ModelSet, RolePolicy, model_set_from_settings
from reins.runtime.standins.offline import OfflineModel
from reins.runtime.standins.scripted import ScriptedModel
from reins.runtime.config.settings import ROLES, Settings


def test_without_reins_model_every_role_is_the_offline_model():
    models = model_set_from_settings(Settings.from_env({}))
    assert all(isinstance(models.get(role), OfflineModel) for role in ROLES)
    assert {models.label(role) for role in ROLES} == {"offline (rule-based stand-in)"}


def test_reins_model_and_a_role_override_build_openai_compatible_models():
    settings = Settings.from_env(
        {
            "REINS_MODEL": "gpt-4o-mini",
            "REINS_MODEL_REVIEWER": "gpt-4o",
            "OPENAI_BASE_URL": "http://localhost:11434/v1",
            "OPENAI_API_KEY": "sk-test-0123456789",
        }
    )

    models = model_set_from_settings(settings)

    for role in ROLES:
        model = models.get(role)
        assert isinstance(model, ChatOpenAI)
        policy = ROLE_POLICIES[role]
        assert model.model_name == ("gpt-4o" if role == "reviewer" else "gpt-4o-mini")
        assert model.request_timeout == policy.timeout_s
        assert model.temperature == policy.temperature
        assert model.max_retries == 0  # retries are Reins', on retryable errors only
        assert model.openai_api_base == "http://localhost:11434/v1"
    assert models.label("reviewer") == "openai-compatible:gpt-4o"


@pytest.mark.parametrize(
    ("role", "timeout_s", "retries", "temperature"),
    [("manager", 120, 1, 0.0), ("planner", 180, 1, 0.2), ("reviewer", 120, 1, 0.1), ("encoder", 120, 1, 0.0)],
)
def test_role_policies_follow_the_role_table(role, timeout_s, retries, temperature):
    policy = ROLE_POLICIES[role]
    assert (policy.timeout_s, policy.retries, policy.temperature) == (timeout_s, retries, temperature)


def test_a_local_server_needs_no_key():
    models = model_set_from_settings(Settings.from_env({"REINS_MODEL": "llama3", "OPENAI_BASE_URL": "http://localhost:8080/v1"}))
    assert models.get("chat").openai_api_key.get_secret_value() == "not-needed"


def test_only_configured_roles_leave_the_offline_model():
    models = model_set_from_settings(Settings.from_env({"REINS_MODEL_MANAGER": "qwen2.5"}))
    assert isinstance(models.get("manager"), ChatOpenAI)
    assert all(isinstance(models.get(role), OfflineModel) for role in ROLES if role != "manager")
    assert models.structured_method == "json_schema"


def test_structured_method_comes_from_settings():
    settings = Settings.from_env({"REINS_STRUCTURED_METHOD": "function_calling"})
    assert model_set_from_settings(settings).structured_method == "function_calling"


def test_model_set_requires_every_role_and_known_overrides():
    scripted = ScriptedModel({})
    with pytest.raises(ValueError, match="missing roles"):
        ModelSet(models={"chat": scripted})
    models = ModelSet.uniform(scripted)
    with pytest.raises(ValueError, match="unknown model roles: judge"):
        models.with_models({"judge": scripted})
    with pytest.raises(KeyError, match="judge"):
        models.get("judge")


def test_with_models_and_with_policies_return_new_sets():
    base, other = ScriptedModel({}), ScriptedModel({})
    models = ModelSet.uniform(base)
    changed = models.with_models({"reviewer": other}).with_policies(reviewer=RolePolicy(5, 0, 0.5))
    assert changed.get("reviewer") is other and models.get("reviewer") is base
    assert changed.policy("reviewer") == RolePolicy(5, 0, 0.5)
    assert models.policy("reviewer") == ROLE_POLICIES["reviewer"]
    assert changed.label("planner") == "ScriptedModel"


REQUEST = httpx.Request("POST", "https://provider.invalid/v1/chat/completions")


def _status(status: int) -> openai.APIStatusError:
    """The exception the OpenAI SDK raises for an HTTP status (its own class where it has one)."""
    response = httpx.Response(status, request=REQUEST)
    return openai.OpenAI(api_key="x", base_url="https://provider.invalid/v1")._make_status_error(
        f"status {status}", body=None, response=response
    )


@pytest.mark.parametrize(
    ("error", "retryable"),
    [
        (openai.APIConnectionError(request=REQUEST), True),  # connection refused / reset
        (openai.APITimeoutError(request=REQUEST), True),  # the provider timed out
        (httpx.ConnectError("refused"), True),
        (httpx.ReadTimeout("slow"), True),
        (_status(408), True),
        (_status(409), True),
        (_status(429), True),
        (_status(500), True),
        (_status(502), True),
        (_status(503), True),
        (_status(599), True),
        (_status(400), False),
        (_status(401), False),
        (_status(403), False),
        (_status(404), False),
        (_status(410), False),
        (_status(422), False),
        (ValueError("invalid output"), False),
        (TimeoutError("a deadline"), False),  # a deadline is not a provider timeout
    ],
    ids=["connection", "timeout", "httpx-connect", "httpx-timeout", "408", "409", "429", "500", "502", "503", "599",
         "400", "401", "403", "404", "410", "422", "validation", "deadline"],
)
def test_retryable_set_is_the_openai_sdks(error, retryable):
    assert is_retryable(error) is retryable


@pytest.mark.parametrize(
    ("status", "retryable"),
    [(None, False), (200, False), (400, False), (407, False), (408, True), (409, True), (410, False), (428, False),
     (429, True), (430, False), (499, False), (500, True), (504, True), (599, True), (600, False)],
)
def test_retryable_status_policy(status, retryable):
    assert is_retryable_status(status) is retryable


# -------------------------------------------------------------------------- per-run graph context


@pytest.fixture
def clean_env(monkeypatch):
    import os

    for name in list(os.environ):
        if name.startswith(("REINS_", "OPENAI_")):
            monkeypatch.delenv(name)
    return monkeypatch


def test_context_model_overrides_every_role_for_one_run(clean_env):
    clean_env.setenv("REINS_MODEL_REVIEWER", "gpt-4o")
    builder_models = ModelSet.uniform(ScriptedModel({}))

    per_run = resolve_models(ReinsContext(model="gpt-4o-mini"), builder_models)

    assert {per_run.get(role).model_name for role in ROLES} == {"gpt-4o-mini"}
    assert resolve_models(ReinsContext(), builder_models) is builder_models
    assert resolve_models(None, builder_models) is builder_models


def test_context_contract_mode(clean_env):
    assert resolve_contract_mode(ReinsContext(contract_mode="two_step")) == "two_step"
    assert resolve_contract_mode(ReinsContext()) == "direct"
    clean_env.setenv("REINS_CONTRACT_MODE", "two_step")
    assert resolve_contract_mode(None) == "two_step"
    with pytest.raises(ValueError, match="contract_mode"):
        ReinsContext(contract_mode="sometimes")


def test_every_role_bounds_its_output_and_the_field_name_is_configurable():
    base = {"REINS_MODEL": "m", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    classic = model_set_from_settings(Settings.from_env({**base, "REINS_MAX_TOKENS_PLANNER": "1234"}))
    for role in ROLES:
        expected = 1234 if role == "planner" else ROLE_POLICIES[role].max_tokens
        assert classic.get(role).extra_body == {"max_tokens": expected}  # sent as the classic field
        assert classic.get(role).max_tokens is None
    newer = model_set_from_settings(Settings.from_env({**base, "REINS_MAX_TOKENS_PARAM": "max_completion_tokens"}))
    assert newer.get("reviewer").max_tokens == ROLE_POLICIES["reviewer"].max_tokens
    assert newer.get("reviewer").extra_body is None


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"REINS_MAX_TOKENS_PLANNER": "lots"}, "REINS_MAX_TOKENS_PLANNER must be a whole number"),
        ({"REINS_MAX_TOKENS_PLANNER": "0"}, "REINS_MAX_TOKENS_PLANNER must be a whole number"),
        ({"REINS_MAX_TOKENS_WIZARD": "10"}, "REINS_MAX_TOKENS_WIZARD names an unknown role"),
        ({"REINS_MAX_TOKENS_PARAM": "tokens"}, "REINS_MAX_TOKENS_PARAM='tokens' is not valid"),
        ({"REINS_TOOL_CHOICE": "force"}, "REINS_TOOL_CHOICE='force' is not valid; allowed values: required, named, auto"),
    ],
)
def test_output_bound_and_tool_choice_settings_are_checked(env, message):
    from reins.runtime.config.settings import SettingsError

    with pytest.raises(SettingsError, match=message):
        Settings.from_env(env)


def test_tool_choice_setting_reaches_the_model_set():
    assert model_set_from_settings(Settings.from_env({})).tool_choice == "required"
    assert model_set_from_settings(Settings.from_env({"REINS_TOOL_CHOICE": "auto"})).tool_choice == "auto"

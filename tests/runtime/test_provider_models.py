"""Model names per role: provider:model, a plain name, per-role endpoint and key, fallbacks."""

from __future__ import annotations

import pytest
from langchain_openai import ChatOpenAI

from reins.runtime.llm.labels import describe_model
from reins.runtime.llm.models import model_set_from_settings, provider_of
from reins.runtime.config.settings import Settings, SettingsError


@pytest.mark.parametrize(
    ("name", "provider"),
    [("openai:gpt-4o-mini", "openai"), ("anthropic:claude-3-5-haiku-latest", "anthropic"), ("ollama:qwen2.5:7b", "ollama"),
     ("qwen2.5:7b", None), ("gpt-4o-mini", None), ("llama3:8b", None)],
)
def test_only_a_known_provider_prefix_means_init_chat_model(name, provider):
    assert provider_of(name) == provider


def test_openai_prefix_builds_through_init_chat_model_with_the_role_endpoint_and_key():
    settings = Settings.from_env({"REINS_MODEL": "openai:gpt-4o-mini", "REINS_BASE_URL_PLANNER": "http://127.0.0.1:9/v1",
                                  "REINS_API_KEY_PLANNER": "planner-secret", "OPENAI_API_KEY": "shared-secret"})
    models = model_set_from_settings(settings)
    planner, chat = models.get("planner"), models.get("chat")
    assert isinstance(planner, ChatOpenAI) and planner.model_name == "gpt-4o-mini"
    assert planner.openai_api_base == "http://127.0.0.1:9/v1"
    assert planner.openai_api_key.get_secret_value() == "planner-secret"
    assert chat.openai_api_key.get_secret_value() == "shared-secret"
    assert planner.max_retries == 0
    assert models.label("planner") == "openai:gpt-4o-mini"
    assert "planner-secret" not in repr(settings)


def test_a_plain_name_keeps_the_openai_compatible_endpoint_per_role():
    settings = Settings.from_env({"REINS_MODEL": "qwen2.5:7b", "OPENAI_BASE_URL": "http://127.0.0.1:8/v1",
                                  "REINS_BASE_URL_REVIEWER": "http://127.0.0.1:7/v1", "REINS_MAX_TOKENS_CHAT": "77"})
    models = model_set_from_settings(settings)
    assert models.get("reviewer").openai_api_base == "http://127.0.0.1:7/v1"
    assert models.get("planner").openai_api_base == "http://127.0.0.1:8/v1"
    assert models.label("planner") == describe_model("qwen2.5:7b") == "openai-compatible:qwen2.5:7b"
    assert models.policy("chat").max_tokens == 77  # the bound every chat request carries


def test_a_missing_provider_package_is_one_line_naming_it():
    settings = Settings.from_env({"REINS_MODEL": "anthropic:claude-3-5-haiku-latest"})
    with pytest.raises(SettingsError) as raised:
        model_set_from_settings(settings)
    assert str(raised.value) == ("model 'anthropic:claude-3-5-haiku-latest' needs the langchain-anthropic package: "
                                 "pip install langchain-anthropic")


def test_fallbacks_per_role_replace_the_shared_list_and_skip_the_primary():
    settings = Settings.from_env({"REINS_MODEL": "a", "REINS_MODEL_FALLBACK": "b, a, c,,b",
                                  "REINS_MODEL_FALLBACK_REVIEWER": "d"})
    models = model_set_from_settings(settings)
    assert [label for label, _ in models.chain("planner")] == [
        "openai-compatible:a", "openai-compatible:b", "openai-compatible:c"]
    assert [label for label, _ in models.chain("reviewer")] == ["openai-compatible:a", "openai-compatible:d"]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"REINS_BASE_URL_PLANNER": "localhost:11434"}, "REINS_BASE_URL_PLANNER must be an http:// or https:// URL"),
        ({"REINS_API_KEY_WIZARD": "x"}, "REINS_API_KEY_WIZARD names an unknown role"),
        ({"REINS_MODEL_FALLBACK_WIZARD": "x"}, "REINS_MODEL_FALLBACK_WIZARD names an unknown role"),
    ],
)
def test_bad_per_role_variables_are_one_line_naming_the_variable(env, message):
    with pytest.raises(SettingsError, match=message):
        Settings.from_env(env)


def test_with_fallbacks_labels_models_passed_in_and_refuses_unknown_roles():
    from reins.runtime.standins.scripted import ScriptedModel
    from reins.runtime.llm.models import ModelSet

    backup = ChatOpenAI(model="backup", api_key="x")
    models = ModelSet.uniform(ScriptedModel({})).with_fallbacks({"planner": backup, "chat": [backup, backup]})
    assert [label for label, _ in models.chain("planner")] == ["ScriptedModel", "ChatOpenAI:backup"]
    assert len(models.chain("chat")) == 3 and len(models.chain("reviewer")) == 1
    with pytest.raises(ValueError, match="unknown model roles: wizard"):
        models.with_fallbacks({"wizard": backup})

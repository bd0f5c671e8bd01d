"""Model entries besides a role's own — fallbacks and escalation models — parsed once: the same
``name@http(s)://host/v1#KEY_VARIABLE`` form in REINS_MODEL_FALLBACK[_<ROLE>] (where an
``escalate=<entry>`` names the role's escalation model) and in REINS_MODEL_ESCALATE[_<ROLE>]."""

from __future__ import annotations

import pytest

from reins.policies.models.fallback import ModelEntry, ModelList, parse_model_entry, parse_model_list
from reins.runtime.llm.models import model_set_from_settings
from reins.runtime.config.settings import Settings, SettingsError

SECRET = "sk-escalation-SECRET-0123456789abcdef"
URL_SECRET = "urlpassword0123456789"


@pytest.mark.parametrize(
    ("entry", "parsed"),
    [
        ("big", ModelEntry("big")),
        (" qwen2.5:7b ", ModelEntry("qwen2.5:7b")),
        ("claude-3@20240229", ModelEntry("claude-3@20240229")),  # an @ without a URL is part of the name
        ("big@http://127.0.0.1:8091/v1", ModelEntry("big", "http://127.0.0.1:8091/v1")),
        ("big@https://host/v1#REINS_BIG_KEY", ModelEntry("big", "https://host/v1", "REINS_BIG_KEY")),
        ("anthropic:claude@https://h/v1#OPENAI_OTHER_KEY", ModelEntry("anthropic:claude", "https://h/v1", "OPENAI_OTHER_KEY")),
    ],
)
def test_a_model_entry_is_a_name_with_an_optional_endpoint_and_key_variable(entry, parsed):
    assert parse_model_entry(entry) == parsed


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("", ModelList()),
        ("b, a, c,,b", ModelList(("b", "a", "c"))),
        ("b, escalate=big", ModelList(("b",), "big")),
        ("escalate=big@http://h:1/v1#REINS_BIG_KEY", ModelList((), "big@http://h:1/v1#REINS_BIG_KEY")),
        ("ESCALATE=big, b@http://h:2/v1", ModelList(("b@http://h:2/v1",), "big")),
    ],
)
def test_a_fallback_list_reads_its_fallbacks_in_order_and_at_most_one_escalation(value, parsed):
    assert parse_model_list(value) == parsed


# (environment, the one-line error; None: accepted). Each names the variable, never a value.
CASES = [
    ({"REINS_MODEL_FALLBACK": f"b, escalate=big@https://u:{URL_SECRET}@h/v1#REINS_BIG_KEY", "REINS_BIG_KEY": SECRET}, None),
    ({"REINS_MODEL_ESCALATE_MANAGER": "big@http://127.0.0.1:9/v1#REINS_BIG_KEY", "REINS_BIG_KEY": SECRET}, None),
    ({"REINS_MODEL_ESCALATE": "big@http://127.0.0.1:9/v1#REINS_BIG_KEY"},
     "REINS_MODEL_ESCALATE names REINS_BIG_KEY, which is not set"),
    ({"REINS_MODEL_FALLBACK_PLANNER": "b, escalate=big@http://h/v1#REINS_BIG_KEY"},
     "REINS_MODEL_FALLBACK_PLANNER names REINS_BIG_KEY, which is not set"),
    ({"REINS_MODEL_FALLBACK": "escalate=big, escalate=bigger"},
     "REINS_MODEL_FALLBACK: more than one escalate= entry (a role escalates to one model)"),
    ({"REINS_MODEL_FALLBACK_MANAGER": "b, escalate="}, "REINS_MODEL_FALLBACK_MANAGER: an escalate= entry without a model"),
    ({"REINS_MODEL_ESCALATE": "big, bigger"}, "REINS_MODEL_ESCALATE: a model entry is one name"),
    ({"REINS_MODEL_ESCALATE_REVIEWER": f"@https://u:{URL_SECRET}@h/v1"},
     "REINS_MODEL_ESCALATE_REVIEWER: a model entry with an endpoint is name@http(s)://host/path"),
    ({"REINS_MODEL_FALLBACK": f"b@https://u:{URL_SECRET}@h/v1#{SECRET}"},
     "REINS_MODEL_FALLBACK: a model entry's key variable must be a REINS_ or OPENAI_ variable name"),
    ({"REINS_MODEL_ESCALATE": "big", "REINS_MODEL_FALLBACK": "b, escalate=bigger"},
     "REINS_MODEL_ESCALATE and the escalate= entry of REINS_MODEL_FALLBACK both name an escalation model; keep one"),
    ({"REINS_MODEL_ESCALATE_CHAT": "big", "REINS_MODEL_FALLBACK_CHAT": "escalate=bigger"},
     "REINS_MODEL_ESCALATE_CHAT and the escalate= entry of REINS_MODEL_FALLBACK_CHAT both name"),
    ({"REINS_MODEL_ESCALATE_WIZARD": "big"}, "REINS_MODEL_ESCALATE_WIZARD names an unknown role"),
]


@pytest.mark.parametrize(("env", "error"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_model_entries_are_checked_in_one_line_naming_the_variable_and_no_secret(env, error):
    if error is None:
        assert Settings.from_env(env).entry_keys == {"REINS_BIG_KEY": SECRET}
        return
    with pytest.raises(SettingsError) as raised:
        Settings.from_env(env)
    message = str(raised.value)
    assert message.startswith(error) and "\n" not in message
    assert SECRET not in message and URL_SECRET not in message


def test_the_escalation_in_a_fallback_list_is_the_roles_own_over_the_shared_one():
    settings = Settings.from_env({
        "REINS_MODEL": "small", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "sk-role-key-0123456789",
        "REINS_MODEL_FALLBACK": "b, escalate=big@http://127.0.0.1:8091/v1#REINS_BIG_KEY", "REINS_BIG_KEY": SECRET,
        "REINS_MODEL_FALLBACK_MANAGER": "c, escalate=bigger", "REINS_MODEL_ESCALATE_REVIEWER": "huge"})
    assert settings.fallbacks_for("planner") == ("b",) and settings.fallbacks_for("manager") == ("c",)
    assert settings.escalation_for("planner") == "big@http://127.0.0.1:8091/v1#REINS_BIG_KEY"
    assert (settings.escalation_for("manager"), settings.escalation_for("reviewer")) == ("bigger", "huge")
    assert settings.escalation_for("step") == settings.escalation_for("chat")  # a task role inherits its parent's

    models = model_set_from_settings(settings)
    label, planner_escalation = models.escalations["planner"]
    # its own endpoint, with the key its variable holds: never the role's key
    assert label == "openai-compatible:big@127.0.0.1:8091" and planner_escalation.model_name == "big"
    assert str(planner_escalation.openai_api_base) == "http://127.0.0.1:8091/v1"
    assert planner_escalation.openai_api_key.get_secret_value() == SECRET
    label, manager_escalation = models.escalations["manager"]
    assert label == "openai-compatible:bigger" and str(manager_escalation.openai_api_base) == "http://127.0.0.1:9/v1"
    assert [name for name, _ in models.chain("planner")] == ["openai-compatible:small", "openai-compatible:b"]


def test_an_escalation_entry_with_an_endpoint_and_no_key_variable_sends_no_key():
    settings = Settings.from_env({"REINS_MODEL": "small", "OPENAI_API_KEY": "sk-role-key-0123456789",
                                  "REINS_MODEL_ESCALATE": "big@http://127.0.0.1:8091/v1"})
    _, model = model_set_from_settings(settings).escalations["manager"]
    assert model.openai_api_key.get_secret_value() == "not-needed"


def test_a_task_roles_fallback_entry_uses_its_own_endpoint():
    settings = Settings.from_env({"REINS_MODEL": "small", "REINS_MODEL_STEP": "stepper",
                                  "REINS_MODEL_FALLBACK_STEP": "backup@http://127.0.0.1:8092/v1"})
    (label, model), = model_set_from_settings(settings).fallbacks["step"]
    assert label == "openai-compatible:backup@127.0.0.1:8092" and str(model.openai_api_base) == "http://127.0.0.1:8092/v1"

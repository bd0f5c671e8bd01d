"""Settings: one clear line per invalid value; ``reins doctor`` reports configuration without secrets."""

from __future__ import annotations

import json

import pytest

from reins.cli import main
from reins.cli.errors import EXIT_BAD_INPUT
from reins.runtime.config.paths import BUNDLED_DOCS
from reins.runtime.config.settings import CHECKPOINTERS, CONTRACT_MODES, ROLES, STRUCTURED_METHODS, Settings, SettingsError

SECRET_KEY = "sk-live-DO-NOT-PRINT-0123456789"


@pytest.fixture
def clean_env(monkeypatch):
    """No REINS_* / OPENAI_* variables from the machine running the tests."""
    import os

    for name in list(os.environ):
        if name.startswith(("REINS_", "OPENAI_")):
            monkeypatch.delenv(name)
    return monkeypatch


def test_defaults_without_any_variable():
    settings = Settings.from_env({})
    assert settings.model is None and settings.role_models == {}
    assert (settings.contract_mode, settings.structured_method, settings.checkpoint) == ("direct", "json_schema", "sqlite")
    assert settings.docs_root == BUNDLED_DOCS.resolve()
    assert all(settings.model_for(role) is None for role in ROLES)


def test_every_variable_is_read(tmp_path):
    settings = Settings.from_env(
        {
            "REINS_MODEL": "gpt-4o-mini",
            "REINS_MODEL_REVIEWER": " gpt-4o ",
            "OPENAI_BASE_URL": "http://localhost:11434/v1",
            "OPENAI_API_KEY": SECRET_KEY,
            "REINS_CONTRACT_MODE": "two_step",
            "REINS_STRUCTURED_METHOD": "function_calling",
            "REINS_DOCS_ROOT": str(tmp_path),
            "REINS_CHECKPOINT": "postgres",
            "REINS_CHECKPOINT_URL": "postgresql://reins:pw@localhost/reins",
            "REINS_HTTP_ALLOWLIST": "Example.com, api.github.com ,",
        }
    )
    assert settings.model_for("reviewer") == "gpt-4o"  # the per-role override wins
    assert settings.model_for("planner") == "gpt-4o-mini"  # the others use REINS_MODEL
    assert (settings.base_url, settings.api_key) == ("http://localhost:11434/v1", SECRET_KEY)
    assert (settings.contract_mode, settings.structured_method) == ("two_step", "function_calling")
    assert settings.docs_root == tmp_path.resolve()
    assert (settings.checkpoint, settings.checkpoint_url) == ("postgres", "postgresql://reins:pw@localhost/reins")
    assert settings.http_allowlist == ("example.com", "api.github.com")
    assert SECRET_KEY not in repr(settings) and "pw@" not in repr(settings)


def test_per_role_override_without_a_default_model():
    settings = Settings.from_env({"REINS_MODEL_MANAGER": "qwen2.5"})
    assert settings.model_for("manager") == "qwen2.5"
    assert [role for role in ROLES if settings.model_for(role)] == ["manager"]


# (case id, environment, variable the one-line message must name, text it must also contain)
INVALID = [
    ("contract-mode", {"REINS_CONTRACT_MODE": "three_step"}, "REINS_CONTRACT_MODE", ", ".join(CONTRACT_MODES)),
    ("checkpoint", {"REINS_CHECKPOINT": "redis"}, "REINS_CHECKPOINT", ", ".join(CHECKPOINTERS)),
    ("structured-method", {"REINS_STRUCTURED_METHOD": "xml"}, "REINS_STRUCTURED_METHOD", ", ".join(STRUCTURED_METHODS)),
    ("unknown-role", {"REINS_MODEL_JUDGE": "gpt-4o"}, "REINS_MODEL_JUDGE", ", ".join(ROLES)),
    ("postgres-without-url", {"REINS_CHECKPOINT": "postgres"}, "REINS_CHECKPOINT_URL", "postgresql://"),
    (
        "postgres-with-other-url",
        {"REINS_CHECKPOINT": "postgres", "REINS_CHECKPOINT_URL": "mysql://x"},
        "REINS_CHECKPOINT_URL",
        "postgresql://",
    ),
    ("missing-docs-root", {"REINS_DOCS_ROOT": "/definitely/not/here"}, "REINS_DOCS_ROOT", "existing directory"),
    ("base-url-without-scheme", {"OPENAI_BASE_URL": "localhost:11434/v1"}, "OPENAI_BASE_URL", "http:// or https://"),
    ("base-url-other-scheme", {"OPENAI_BASE_URL": "ftp://models.example/v1"}, "OPENAI_BASE_URL", "http:// or https://"),
    ("text-tool-calls", {"REINS_TEXT_TOOL_CALLS": "maybe"}, "REINS_TEXT_TOOL_CALLS", "recover, refuse"),
    ("timeout-not-a-number", {"REINS_TIMEOUT_PLANNER": "soon"}, "REINS_TIMEOUT_PLANNER", "seconds between 1 and"),
    ("timeout-zero", {"REINS_TIMEOUT_MANAGER": "0"}, "REINS_TIMEOUT_MANAGER", "seconds"),
    ("timeout-unknown-role", {"REINS_TIMEOUT_JUDGE": "30"}, "REINS_TIMEOUT_JUDGE", ", ".join(ROLES)),
]


def test_per_role_timeouts_and_bounds_reach_the_role_policies_and_the_models():
    from reins.runtime.llm.models import ROLE_POLICIES, model_set_from_settings

    env = {"REINS_MODEL": "local", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "REINS_TIMEOUT_PLANNER": "600",
           "REINS_MAX_TOKENS_MANAGER": "256", "REINS_TEXT_TOOL_CALLS": "refuse"}
    settings = Settings.from_env(env)
    assert (settings.role_timeouts, settings.text_tool_calls) == ({"planner": 600}, "refuse")
    models = model_set_from_settings(settings)
    assert models.policy("planner").timeout_s == 600 and models.models["planner"].request_timeout == 600
    assert models.policy("reviewer").timeout_s == ROLE_POLICIES["reviewer"].timeout_s  # the others unchanged
    assert models.policy("manager").max_tokens == 256 and models.text_tool_calls == "refuse"
    assert Settings.from_env({}).text_tool_calls == "recover"


@pytest.mark.parametrize(("env", "variable", "allowed"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_value_is_one_line_naming_the_variable(env, variable, allowed):
    with pytest.raises(SettingsError) as caught:
        Settings.from_env(env)
    message = str(caught.value)
    assert "\n" not in message
    assert variable in message
    assert allowed in message
    assert "/definitely/not/here" not in message  # paths are not echoed


def test_docs_root_must_be_a_directory(tmp_path):
    a_file = tmp_path / "plan.md"
    a_file.write_text("x")
    with pytest.raises(SettingsError, match="REINS_DOCS_ROOT"):
        Settings.from_env({"REINS_DOCS_ROOT": str(a_file)})


def test_blank_values_mean_the_default():
    settings = Settings.from_env({"REINS_CONTRACT_MODE": "  ", "REINS_MODEL": "", "REINS_MODEL_CHAT": " "})
    assert settings.contract_mode == "direct" and settings.model is None and settings.role_models == {}


# --------------------------------------------------------------------------------- reins doctor


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("REINS_CONTRACT_MODE", "three_step"),
        ("REINS_CHECKPOINT", "redis"),
        ("REINS_STRUCTURED_METHOD", "xml"),
        ("REINS_MODEL_JUDGE", "gpt-4o"),
        ("REINS_DOCS_ROOT", "/definitely/not/here"),
        ("OPENAI_BASE_URL", "localhost:11434/v1"),
    ],
)
def test_doctor_with_a_bad_value_exits_2_with_one_line(clean_env, capsys, variable, value):
    clean_env.setenv("OPENAI_API_KEY", SECRET_KEY)
    clean_env.setenv(variable, value)

    code = main(["doctor"])

    captured = capsys.readouterr()
    assert code == EXIT_BAD_INPUT
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reins: error:") and variable in lines[0]
    assert SECRET_KEY not in captured.err
    assert "Traceback" not in captured.err


def test_doctor_never_echoes_a_secret_put_in_the_wrong_variable(clean_env, capsys):
    clean_env.setenv("REINS_CONTRACT_MODE", SECRET_KEY)  # a key pasted into the wrong variable
    assert main(["doctor"]) == EXIT_BAD_INPUT
    captured = capsys.readouterr()
    assert SECRET_KEY not in captured.err and "REINS_CONTRACT_MODE" in captured.err


def test_doctor_reports_roles_and_hides_the_key(clean_env, capsys):
    clean_env.setenv("OPENAI_API_KEY", SECRET_KEY)
    clean_env.setenv("REINS_MODEL_REVIEWER", "gpt-4o")
    clean_env.setenv("OPENAI_BASE_URL", "http://user:pw@localhost:8000/v1")

    assert main(["doctor", "--json"]) == 0

    out = capsys.readouterr().out
    report = json.loads(out)
    assert report["roles"]["reviewer"] == "openai-compatible:gpt-4o"
    assert report["roles"]["planner"] == "offline (rule-based stand-in)"
    assert report["api_key"] == "set"
    assert (report["contract_mode"], report["checkpointer"], report["docs_root"]) == ("direct", "sqlite", "bundled")
    assert SECRET_KEY not in out and "pw@" not in out


def test_doctor_text_output(clean_env, capsys):
    clean_env.setenv("OPENAI_API_KEY", SECRET_KEY)
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "Reins configuration" in out and "offline (rule-based stand-in)" in out
    assert "api_key           set" in out
    assert SECRET_KEY not in out


def test_no_command_prints_help_and_exits_2(clean_env, capsys):
    assert main([]) == EXIT_BAD_INPUT
    assert "doctor" in capsys.readouterr().out

"""Settings read from the environment, validated once, with one clear line per mistake."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from runtime.paths import BUNDLED_DOCS

CONTRACT_MODES = ("direct", "two_step")
CHECKPOINTERS = ("memory", "sqlite", "postgres")
STRUCTURED_METHODS = ("json_schema", "function_calling")
# How a tool call is asked for (manager turns and function_calling structured output):
# required = "tool_choice": "required" (OpenAI, DeepSeek, vLLM >= 0.8.3, llama.cpp; Ollama ignores it),
# named = the single allowed tool by name (OpenAI, DeepSeek, vLLM; llama.cpp falls back to auto),
# auto = leave the choice to the model (any server; the policy still refuses a turn without a call).
TOOL_CHOICES = ("required", "named", "auto")
# Which request field bounds the output: max_tokens (every OpenAI-compatible server) or
# max_completion_tokens (OpenAI's newer name, required by its reasoning models).
MAX_TOKENS_PARAMS = ("max_tokens", "max_completion_tokens")
ROLES = ("supervisor", "manager", "planner", "reviewer", "encoder", "tasklist", "polish", "chat")
ENV_PREFIXES = ("REINS_", "OPENAI_")  # the only variables settings read


class SettingsError(ValueError):
    """A configuration value is invalid; the message is one line naming the variable."""


def _choice(env: Mapping[str, str], name: str, allowed: tuple[str, ...], default: str) -> str:
    value = env.get(name, "").strip() or default
    if value not in allowed:
        raise SettingsError(f"{name}={value!r} is not valid; allowed values: {', '.join(allowed)}")
    return value


def _role_of(key: str, prefix: str) -> str:
    role = key.removeprefix(prefix).lower()
    if role not in ROLES:
        raise SettingsError(f"{key} names an unknown role; allowed roles: {', '.join(ROLES)}")
    return role


def _positive_int(key: str, value: str) -> int:
    try:
        number = int(value.strip())
    except ValueError:
        number = 0
    if not 1 <= number <= 1_000_000:
        raise SettingsError(f"{key} must be a whole number of tokens between 1 and 1000000")
    return number


@dataclass(frozen=True)
class Settings:
    model: str | None = None
    role_models: Mapping[str, str] = field(default_factory=dict)
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    contract_mode: str = "direct"
    structured_method: str = "json_schema"
    docs_root: Path = BUNDLED_DOCS
    governance_root: Path | None = None  # own governance/*.md and rubrics/*.md; None: the bundled set
    checkpoint: str = "sqlite"
    checkpoint_url: str | None = field(default=None, repr=False)
    http_allowlist: tuple[str, ...] = ()
    mcp_config: str | None = None  # REINS_MCP_CONFIG: the path of the assistant's MCP servers file
    tool_choice: str = "required"
    max_tokens_param: str = "max_tokens"
    role_max_tokens: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        role_models: dict[str, str] = {}
        role_max_tokens: dict[str, int] = {}
        for key, value in env.items():
            if key.startswith("REINS_MODEL_") and value.strip():
                role_models[_role_of(key, "REINS_MODEL_")] = value.strip()
            if key.startswith("REINS_MAX_TOKENS_") and key != "REINS_MAX_TOKENS_PARAM" and value.strip():
                role_max_tokens[_role_of(key, "REINS_MAX_TOKENS_")] = _positive_int(key, value)
        checkpoint = _choice(env, "REINS_CHECKPOINT", CHECKPOINTERS, "sqlite")
        checkpoint_url = env.get("REINS_CHECKPOINT_URL", "").strip() or None
        if checkpoint == "postgres" and not (checkpoint_url or "").startswith(("postgresql://", "postgres://")):
            raise SettingsError("REINS_CHECKPOINT_URL must be a postgresql:// URL when REINS_CHECKPOINT=postgres")
        docs_root = Path(env.get("REINS_DOCS_ROOT", "").strip() or BUNDLED_DOCS)
        if not docs_root.is_dir():
            raise SettingsError("REINS_DOCS_ROOT does not name an existing directory")
        governance_root = env.get("REINS_GOVERNANCE_ROOT", "").strip() or None
        if governance_root and not Path(governance_root).is_dir():
            raise SettingsError("REINS_GOVERNANCE_ROOT does not name an existing directory")
        base_url = env.get("OPENAI_BASE_URL", "").strip() or None
        if base_url and not base_url.lower().startswith(("http://", "https://")):
            # Caught here, not as a connection error on the first model call that names no variable.
            raise SettingsError("OPENAI_BASE_URL must be an http:// or https:// URL, e.g. http://localhost:11434/v1")
        allowlist = tuple(h.strip().lower() for h in env.get("REINS_HTTP_ALLOWLIST", "").split(",") if h.strip())
        return cls(
            model=env.get("REINS_MODEL", "").strip() or None,
            role_models=role_models,
            base_url=base_url,
            api_key=env.get("OPENAI_API_KEY", "").strip() or None,
            contract_mode=_choice(env, "REINS_CONTRACT_MODE", CONTRACT_MODES, "direct"),
            structured_method=_choice(env, "REINS_STRUCTURED_METHOD", STRUCTURED_METHODS, "json_schema"),
            docs_root=docs_root.resolve(),
            governance_root=Path(governance_root).resolve() if governance_root else None,
            checkpoint=checkpoint,
            checkpoint_url=checkpoint_url,
            http_allowlist=allowlist,
            mcp_config=env.get("REINS_MCP_CONFIG", "").strip() or None,
            tool_choice=_choice(env, "REINS_TOOL_CHOICE", TOOL_CHOICES, "required"),
            max_tokens_param=_choice(env, "REINS_MAX_TOKENS_PARAM", MAX_TOKENS_PARAMS, "max_tokens"),
            role_max_tokens=role_max_tokens,
        )

    def model_for(self, role: str) -> str | None:
        """The configured model name for a role, or None when the offline model serves it."""
        return self.role_models.get(role) or self.model


def env_snapshot(env: Mapping[str, str] | None = None) -> tuple[tuple[str, str], ...]:
    """The variables settings depend on, as a hashable value (equal environments, equal snapshots)."""
    env = os.environ if env is None else env
    # Keys first, values only for the few that match: ``os.environ`` decodes every value it hands out,
    # and nodes take this snapshot on every step.
    return tuple(sorted((key, env[key]) for key in env if key.startswith(ENV_PREFIXES)))


@lru_cache(maxsize=16)
def settings_for(snapshot: tuple[tuple[str, str], ...]) -> Settings:
    return Settings.from_env(dict(snapshot))


def current_settings() -> Settings:
    """Settings of the current environment, parsed and validated once per distinct environment.

    Nodes ask for settings on every step; this keeps that to one dictionary scan instead of a full
    parse with filesystem checks, while a changed variable still takes effect on the next call.
    """
    return settings_for(env_snapshot())

"""Settings read from the environment, validated once, with one clear line per mistake."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, get_args

# REINS_TEXT_TOOL_CALLS: a tool call a model wrote as text is recovered (then checked like a native
# one) or the turn is refused as having no tool call.
from reins.policies.models.fallback import ModelList, parse_model_entry, parse_model_list
from reins.policies.models.text_tool_calls import TEXT_TOOL_CALL_MODES, TextToolCallMode

# REINS_TOOL_CHOICE: how a tool call is asked for (manager turns and function_calling structured
# output); the styles and which servers honour each are described in policies/models/tool_choice.py.
from reins.policies.models.tool_choice import TOOL_CHOICE_STYLES, ToolChoiceStyle
from reins.runtime.config.paths import BUNDLED_DOCS

# Each choice is declared once as a Literal (a dropdown in Studio where a context field uses it);
# the tuples a setting is checked against derive from it.
ContractMode = Literal["direct", "two_step"]
CONTRACT_MODES: tuple[str, ...] = get_args(ContractMode)
Checkpointer = Literal["memory", "sqlite", "postgres"]
CHECKPOINTERS: tuple[str, ...] = get_args(Checkpointer)
StructuredMethod = Literal["json_schema", "function_calling"]
STRUCTURED_METHODS: tuple[str, ...] = get_args(StructuredMethod)
# Which request field bounds the output: max_tokens (every OpenAI-compatible server) or
# max_completion_tokens (OpenAI's newer name, required by its reasoning models).
MaxTokensParam = Literal["max_tokens", "max_completion_tokens"]
MAX_TOKENS_PARAMS: tuple[str, ...] = get_args(MaxTokensParam)
Role = Literal["supervisor", "manager", "planner", "reviewer", "encoder", "tasklist", "polish", "chat"]
ROLES: tuple[str, ...] = get_args(Role)
# The assistant's task roles: each is served by its parent role's model, endpoint, key, fallbacks,
# escalation and policy until a REINS_*_<ROLE> variable of its own points it elsewhere.
TASK_ROLES: Mapping[str, str] = {"classify": "chat", "step": "chat", "answer": "chat", "check": "chat"}
# The role a turn with an image goes to: configured only by its own REINS_MODEL_VISION (a model that
# reads images); its endpoint, key and policy default to the chat role's.
VISION_ROLE = "vision"
ROLE_PARENTS: Mapping[str, str] = {**TASK_ROLES, VISION_ROLE: "chat"}
ALL_ROLES: tuple[str, ...] = (*ROLES, *ROLE_PARENTS)
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
    if role not in ALL_ROLES:
        raise SettingsError(f"{key} names an unknown role; allowed roles: {', '.join(ALL_ROLES)}")
    return role


def _positive_int(key: str, value: str, unit: str = "tokens", most: int = 1_000_000) -> int:
    try:
        number = int(value.strip())
    except ValueError:
        number = 0
    if not 1 <= number <= most:
        raise SettingsError(f"{key} must be a whole number of {unit} between 1 and {most}")
    return number


def _http_url(key: str, value: str) -> str:
    # Caught here, not as a connection error on the first model call that names no variable.
    if not value.lower().startswith(("http://", "https://")):
        raise SettingsError(f"{key} must be an http:// or https:// URL, e.g. http://localhost:11434/v1")
    return value


def _model_list(key: str, value: str) -> ModelList:
    """A fallback list (``reins.policies.models.fallback.parse_model_list``), its error naming the variable."""
    try:
        return parse_model_list(value)
    except ValueError as error:
        raise SettingsError(f"{key}: {error}") from None


def _model_entry(key: str, value: str) -> str:
    """An escalation model: one entry of the form a fallback list's entries have."""
    try:
        parse_model_entry(value)
    except ValueError as error:
        raise SettingsError(f"{key}: {error}") from None
    return value.strip()


# Per-role variables: prefix → the Settings field that maps each role to its value.
_PER_ROLE = {
    "REINS_MODEL_FALLBACK_": "role_fallbacks",
    "REINS_MODEL_ESCALATE_": "role_escalations",
    "REINS_MAX_TOKENS_": "role_max_tokens",
    "REINS_BASE_URL_": "role_base_urls",
    "REINS_API_KEY_": "role_api_keys",
    "REINS_TIMEOUT_": "role_timeouts",
    "REINS_MODEL_": "role_models",  # last: REINS_MODEL_FALLBACK_<ROLE> starts with it too
}
_PER_ROLE_PARSERS = {
    "REINS_MAX_TOKENS_": _positive_int,
    "REINS_BASE_URL_": _http_url,
    "REINS_TIMEOUT_": lambda key, value: _positive_int(key, value, "seconds", 86_400),
    "REINS_MODEL_FALLBACK_": _model_list,
    "REINS_MODEL_ESCALATE_": _model_entry,
}
# Variables whose names start with a per-role prefix but name no role.
_NOT_PER_ROLE = frozenset({"REINS_MODEL_FALLBACK", "REINS_MODEL_ESCALATE", "REINS_MAX_TOKENS_PARAM"})


@dataclass(frozen=True)
class Settings:
    model: str | None = None
    role_models: Mapping[str, str] = field(default_factory=dict)
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    contract_mode: ContractMode = "direct"
    structured_method: StructuredMethod = "json_schema"
    docs_root: Path = BUNDLED_DOCS
    governance_root: Path | None = None  # own governance/*.md and rubrics/*.md; None: the bundled set
    checkpoint: Checkpointer = "sqlite"
    checkpoint_url: str | None = field(default=None, repr=False)
    http_allowlist: tuple[str, ...] = ()
    mcp_config: str | None = None  # REINS_MCP_CONFIG: the path of the assistant's MCP servers file
    flow_rules: str | None = None  # REINS_FLOW_RULES: a data-flow rule file replacing the default set
    tool_choice: ToolChoiceStyle = "required"
    max_tokens_param: MaxTokensParam = "max_tokens"
    role_max_tokens: Mapping[str, int] = field(default_factory=dict)
    # Per-role endpoint and key (REINS_BASE_URL_<ROLE>, REINS_API_KEY_<ROLE>) over the shared ones.
    role_base_urls: Mapping[str, str] = field(default_factory=dict)
    role_api_keys: Mapping[str, str] = field(default_factory=dict, repr=False)
    # Models tried in order when a call's provider failure is final (REINS_MODEL_FALLBACK[_<ROLE>]).
    fallbacks: tuple[str, ...] = ()
    role_fallbacks: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    role_timeouts: Mapping[str, int] = field(default_factory=dict)  # seconds per call, REINS_TIMEOUT_<ROLE>
    text_tool_calls: TextToolCallMode = "recover"
    # The keys of fallback and escalation entries with their own endpoint, by the variable holding each.
    entry_keys: Mapping[str, str] = field(default_factory=dict, repr=False)
    # The stronger model a request goes to once when the role's own keeps failing it
    # (REINS_MODEL_ESCALATE[_<ROLE>] or an escalate= entry of the fallback list; policies.models.escalation).
    escalation: str | None = None
    role_escalations: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        if env is None:
            from reins.runtime.config.secrets import refresh_secret_values

            refresh_secret_values()  # a key set since the last read is redacted from now on
        env = os.environ if env is None else env
        per_role: dict[str, dict[str, object]] = {name: {} for name in _PER_ROLE.values()}
        for key, value in env.items():
            prefix = next((p for p in _PER_ROLE if key.startswith(p)), None)
            if prefix is None or key in _NOT_PER_ROLE or not value.strip():
                continue
            parse = _PER_ROLE_PARSERS.get(prefix, lambda _key, text: text)
            per_role[_PER_ROLE[prefix]][_role_of(key, prefix)] = parse(key, value.strip())
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
        if base_url:
            _http_url("OPENAI_BASE_URL", base_url)
        allowlist = tuple(h.strip().lower() for h in env.get("REINS_HTTP_ALLOWLIST", "").split(",") if h.strip())
        return cls(
            model=env.get("REINS_MODEL", "").strip() or None,
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
            flow_rules=env.get("REINS_FLOW_RULES", "").strip() or None,
            tool_choice=_choice(env, "REINS_TOOL_CHOICE", TOOL_CHOICE_STYLES, "required"),
            max_tokens_param=_choice(env, "REINS_MAX_TOKENS_PARAM", MAX_TOKENS_PARAMS, "max_tokens"),
            text_tool_calls=_choice(env, "REINS_TEXT_TOOL_CALLS", TEXT_TOOL_CALL_MODES, "recover"),
            **_fallbacks_and_escalations(env, per_role.pop("role_fallbacks"), per_role.pop("role_escalations")),  # type: ignore[arg-type]
            **per_role,  # type: ignore[arg-type]
        )

    def model_for(self, role: str) -> str | None:
        """The configured model name for a role, or None when the offline model serves it (a task role
        defaults to its parent's; the vision role has only its own)."""
        if role == VISION_ROLE:
            return self.role_models.get(role)
        return self.role_models.get(role) or (self.model_for(TASK_ROLES[role]) if role in TASK_ROLES else self.model)

    def _own_or_parent(self, values: Mapping[str, Any], role: str) -> Any:
        return values.get(role) or (values.get(ROLE_PARENTS[role]) if role in ROLE_PARENTS else None)

    def fallbacks_for(self, role: str) -> tuple[str, ...]:
        """The role's fallback models, in order (the role's own list replaces the shared one)."""
        if role == VISION_ROLE:  # another role's fallback may not read images
            return self.role_fallbacks.get(role, ())
        return self._own_or_parent(self.role_fallbacks, role) or self.fallbacks

    def escalation_for(self, role: str) -> str | None:
        """The role's escalation model (the role's own over the shared one), or None."""
        if role == VISION_ROLE:
            return self.role_escalations.get(role)
        return self._own_or_parent(self.role_escalations, role) or self.escalation

    def base_url_for(self, role: str) -> str | None:
        return self._own_or_parent(self.role_base_urls, role) or self.base_url

    def api_key_for(self, role: str) -> str | None:
        return self._own_or_parent(self.role_api_keys, role) or self.api_key


def _fallbacks_and_escalations(env: Mapping[str, str], role_lists: Mapping[str, ModelList],
                               role_own: Mapping[str, str]) -> dict[str, Any]:
    """The Settings fields of the models besides the roles' own: fallbacks and escalation models,
    shared and per role (``role_lists``: the roles' fallback lists; ``role_own``: their
    REINS_MODEL_ESCALATE_<ROLE>), and the keys of the entries naming a key variable."""
    shared_list = _model_list("REINS_MODEL_FALLBACK", env.get("REINS_MODEL_FALLBACK", ""))
    shared_own = env.get("REINS_MODEL_ESCALATE", "").strip()
    shared_own = _model_entry("REINS_MODEL_ESCALATE", shared_own) if shared_own else ""
    # Every model entry with the variable that holds it: its key variable must be set.
    entries = {"REINS_MODEL_FALLBACK": shared_list.entries(), "REINS_MODEL_ESCALATE": (shared_own,) if shared_own else ()}
    entries.update({f"REINS_MODEL_FALLBACK_{role.upper()}": listed.entries() for role, listed in role_lists.items()})
    entries.update({f"REINS_MODEL_ESCALATE_{role.upper()}": (chosen,) for role, chosen in role_own.items()})
    return {
        "fallbacks": shared_list.fallbacks,
        "role_fallbacks": {role: listed.fallbacks for role, listed in role_lists.items()},
        "escalation": _escalation("REINS_MODEL_ESCALATE", shared_own, shared_list),
        "role_escalations": {role: chosen for role in ALL_ROLES if (chosen := _escalation(
            f"REINS_MODEL_ESCALATE_{role.upper()}", role_own.get(role), role_lists.get(role)))},
        "entry_keys": _entry_keys(entries, env),
    }


def _escalation(variable: str, own: str | None, listed: ModelList | None) -> str | None:
    """The escalation model ``variable`` names (``own``) or its fallback list's ``escalate=`` entry
    does; both at once is refused (which one wins would be a guess)."""
    in_list = listed.escalation if listed else None
    if own and in_list:
        list_variable = variable.replace("_ESCALATE", "_FALLBACK")
        raise SettingsError(f"{variable} and the escalate= entry of {list_variable} both name an escalation "
                            "model; keep one")
    return own or in_list


def _entry_keys(entries: Mapping[str, Iterable[str]], env: Mapping[str, str]) -> dict[str, str]:
    """The key of every model entry that names its own key variable (``entries``: variable → the
    entries it holds); a key variable that is not set is named with the variable naming it."""
    keys: dict[str, str] = {}
    for variable, listed in entries.items():
        for entry in listed:
            key_variable = parse_model_entry(entry).key_variable
            if key_variable:
                value = env.get(key_variable, "").strip()
                if not value:
                    raise SettingsError(f"{variable} names {key_variable}, which is not set")
                keys[key_variable] = value
    return keys


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

"""Role → chat model mapping, the per-role call policy, and the OpenAI-compatible factory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from typing import Any

from langchain_core.language_models import BaseChatModel

from reins.policies.models.fallback import parse_model_entry

from reins.runtime.llm.labels import OFFLINE_LABEL, entry_label, model_label as configured_label, provider_of
from reins.runtime.config.settings import ALL_ROLES, ROLE_PARENTS, ROLES, TASK_ROLES, Settings, SettingsError


@dataclass(frozen=True)
class RolePolicy:
    """How calls for one role behave: per-call timeout (``REINS_TIMEOUT_<ROLE>`` overrides it),
    retries on retryable errors, temperature, and the output bound every request of the role sends
    (``REINS_MAX_TOKENS_<ROLE>`` overrides it).

    ``reask_temperature_step``: a refused turn's re-ask samples this much hotter (capped at 1.0);
    ``max_tokens_limit``: the most the one repair after a cut-off may ask for (it doubles the bound
    once; ``reins.policies.models.second_attempt``).

    Example: ``ModelSet.uniform(OfflineModel()).with_policies(reviewer=RolePolicy(timeout_s=90, retries=2, temperature=0.0))``
    """

    timeout_s: float
    retries: int
    temperature: float
    backoff_initial_s: float = 1.0
    max_tokens: int = 4096
    reask_temperature_step: float = 0.4
    max_tokens_limit: int = 8192


# Timeouts, retries and temperatures per role; the output bounds fit the largest valid answer of the
# role's contracts (a plan or task list with its markdown, a task-list draft) with room to spare.
ROLE_POLICIES: Mapping[str, RolePolicy] = {
    "supervisor": RolePolicy(120, 1, 0.0, max_tokens=2048, max_tokens_limit=4096),
    "manager": RolePolicy(120, 1, 0.0, max_tokens=512, max_tokens_limit=1024),
    "planner": RolePolicy(180, 1, 0.2, max_tokens=8192, max_tokens_limit=16384),
    "reviewer": RolePolicy(120, 1, 0.1, max_tokens=4096, max_tokens_limit=8192),
    "encoder": RolePolicy(120, 1, 0.0, max_tokens=8192, max_tokens_limit=16384),
    "tasklist": RolePolicy(180, 1, 0.2, max_tokens=8192, max_tokens_limit=16384),
    "polish": RolePolicy(60, 1, 0.3, max_tokens=1024, max_tokens_limit=2048),
    "chat": RolePolicy(60, 1, 0.2, max_tokens=2048, max_tokens_limit=4096),
}


def configured_policies(settings: Settings) -> dict[str, RolePolicy]:
    """Every role's policy with the timeouts and output bounds the environment sets."""
    policies = {
        role: replace(policy, timeout_s=settings.role_timeouts.get(role, policy.timeout_s),
                      max_tokens=settings.role_max_tokens.get(role, policy.max_tokens))
        for role, policy in ROLE_POLICIES.items()
    }
    for role, parent in ROLE_PARENTS.items():  # a task role keeps its parent's policy but what it sets itself
        if role not in settings.role_timeouts and role not in settings.role_max_tokens:
            continue
        policy = policies[parent]
        policies[role] = replace(policy, timeout_s=settings.role_timeouts.get(role, policy.timeout_s),
                                 max_tokens=settings.role_max_tokens.get(role, policy.max_tokens))
    return policies


def output_bound_options(max_tokens: int, param: str = "max_tokens") -> dict[str, object]:
    """The call options that carry an output bound. langchain-openai sends its ``max_tokens`` as
    ``max_completion_tokens``, which older OpenAI-compatible servers ignore; the classic field goes
    in the request body as it is."""
    if param == "max_completion_tokens":
        return {"max_tokens": max_tokens}
    return {"extra_body": {"max_tokens": max_tokens}}

def model_label(model: BaseChatModel) -> str:
    """What to call a model the user passed in: its class and, when it has one, its model name (the
    offline stand-in is always called what it is)."""
    if getattr(model, "_llm_type", None) == "reins-offline":
        return OFFLINE_LABEL
    name = getattr(model, "model_name", None) or getattr(model, "model", None)
    return f"{type(model).__name__}:{name}" if isinstance(name, str) and name else type(model).__name__


@dataclass(frozen=True)
class ModelSet:
    """Which chat model serves each role, which models stand in when its provider fails for good
    (tried in order), and how calls for that role behave.

    Example: ``ModelSet.uniform(OfflineModel()).with_models({"reviewer": ChatOpenAI(model="gpt-4o", max_retries=0)})``
    """

    models: Mapping[str, BaseChatModel]
    policies: Mapping[str, RolePolicy] = field(default_factory=lambda: dict(ROLE_POLICIES))
    labels: Mapping[str, str] = field(default_factory=dict)
    # role → ((label, model), …): the role's fallbacks, in the order they are tried.
    fallbacks: Mapping[str, tuple[tuple[str, BaseChatModel], ...]] = field(default_factory=dict)
    # json_schema for providers with native structured output; function_calling for the rest.
    structured_method: str = "json_schema"
    # How a tool call is asked for: required | named | auto (REINS_TOOL_CHOICE).
    tool_choice: str = "required"
    # A tool call written as text: recover | refuse (REINS_TEXT_TOOL_CALLS).
    text_tool_calls: str = "recover"
    # role → (label, model): where a request the role's model keeps failing goes once (runtime.llm.escalation).
    escalations: Mapping[str, tuple[str, BaseChatModel]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        missing = [role for role in ROLES if role not in self.models]
        if missing:
            raise ValueError(f"ModelSet is missing roles: {', '.join(missing)}")

    @classmethod
    def uniform(cls, model: BaseChatModel, **kwargs: object) -> ModelSet:
        """Every role served by one model (typical for ScriptedModel in tests)."""
        return cls(models={role: model for role in ROLES}, **kwargs)  # type: ignore[arg-type]

    def _inherits(self, role: str) -> bool:
        """A task role without a model of its own is its parent role (model, label, fallbacks, escalation)."""
        return role in TASK_ROLES and role not in self.models

    def has_model(self, role: str) -> bool:
        """Whether ``role`` is served: a role of its own, or a task role through its parent."""
        return role in self.models or role in TASK_ROLES

    def get(self, role: str) -> BaseChatModel:
        if self._inherits(role):
            return self.get(TASK_ROLES[role])
        if role not in self.models:
            raise KeyError(f"unknown model role {role!r}")
        return self.models[role]

    def policy(self, role: str) -> RolePolicy:
        if role in self.policies:
            return self.policies[role]
        return self.policy(ROLE_PARENTS[role]) if role in ROLE_PARENTS else ROLE_POLICIES["chat"]

    def label(self, role: str) -> str:
        if self._inherits(role):
            return self.label(TASK_ROLES[role])
        return self.labels.get(role) or model_label(self.models[role])

    def chain(self, role: str) -> tuple[tuple[str, BaseChatModel], ...]:
        """The role's model and then its fallbacks, as (label, model), in the order they are tried."""
        if self._inherits(role):
            return self.chain(TASK_ROLES[role])
        return ((self.label(role), self.get(role)), *self.fallbacks.get(role, ()))

    def escalation(self, role: str) -> tuple[str, BaseChatModel] | None:
        """The role's escalation model as (label, model), or None."""
        if role in self.escalations:
            return self.escalations[role]
        return self.escalation(TASK_ROLES[role]) if self._inherits(role) else None

    def routed(self, roles: Sequence[str], to: str) -> ModelSet:
        """The same set with each of ``roles`` served as ``to`` is (its model, fallbacks, escalation)."""
        chain = self.chain(to)
        escalation = self.escalation(to)
        return replace(
            self, models={**self.models, **dict.fromkeys(roles, chain[0][1])},
            labels={**self.labels, **dict.fromkeys(roles, chain[0][0])},
            fallbacks={**self.fallbacks, **dict.fromkeys(roles, chain[1:])},
            escalations={**{r: e for r, e in self.escalations.items() if r not in roles},
                         **(dict.fromkeys(roles, escalation) if escalation else {})},
            policies={**self.policies, **dict.fromkeys(roles, self.policy(to))},
        )

    def with_fallbacks(self, fallbacks: Mapping[str, BaseChatModel | Sequence[BaseChatModel]]) -> ModelSet:
        """The same set with these fallbacks per role (a model or models in order; replacing the role's)."""
        unknown = set(fallbacks) - set(ALL_ROLES)
        if unknown:
            raise ValueError(f"unknown model roles: {', '.join(sorted(unknown))}")
        chosen = {role: (value,) if isinstance(value, BaseChatModel) else tuple(value) for role, value in fallbacks.items()}
        labelled = {role: tuple((model_label(m), m) for m in models) for role, models in chosen.items()}
        return replace(self, fallbacks={**self.fallbacks, **labelled})

    def with_escalations(self, escalations: Mapping[str, BaseChatModel | tuple[str, BaseChatModel]]) -> ModelSet:
        """The same set with these escalation models per role (a model, or (label, model))."""
        unknown = set(escalations) - set(ALL_ROLES)
        if unknown:
            raise ValueError(f"unknown model roles: {', '.join(sorted(unknown))}")
        labelled = {role: value if isinstance(value, tuple) else (model_label(value), value)
                    for role, value in escalations.items()}
        return replace(self, escalations={**self.escalations, **labelled})

    def with_models(self, overrides: Mapping[str, BaseChatModel]) -> ModelSet:
        unknown = set(overrides) - set(ALL_ROLES)
        if unknown:
            raise ValueError(f"unknown model roles: {', '.join(sorted(unknown))}")
        return replace(self, models={**self.models, **overrides})

    def with_policies(self, **overrides: RolePolicy) -> ModelSet:
        return replace(self, policies={**self.policies, **overrides})

    def serving(self, role: str, by: str) -> ModelSet:
        """The same set with ``role``'s calls served by ``by``'s model, fallbacks, label and policy
        (a reviewer on another role's model keeps its contracts; only who answers them changes)."""
        if by == role:
            return self
        return replace(
            self,
            models={**self.models, role: self.get(by)},
            policies={**self.policies, role: self.policy(by)},
            labels={**self.labels, role: self.label(by)},
            fallbacks={**self.fallbacks, role: self.fallbacks.get(by, ())},
        )


# Providers whose LangChain class takes a request timeout and its own retry count (kept at 0: retries
# are ours). Others get the role's temperature and output bound on every request (runtime.contracts).
_TIMEOUT_AND_RETRIES = frozenset({"openai", "azure_openai", "anthropic", "deepseek", "xai", "groq", "mistralai",
                                  "fireworks", "together"})


def _provider_model(name: str, provider: str, role: str, settings: Settings, timeout_s: float) -> BaseChatModel:
    from langchain.chat_models import init_chat_model

    options: dict[str, object] = {"temperature": ROLE_POLICIES[ROLE_PARENTS.get(role, role)].temperature}
    if provider in _TIMEOUT_AND_RETRIES:
        options.update(timeout=timeout_s, max_retries=0)
    # A role's own endpoint and key apply to any provider; the shared OPENAI_* ones to openai: only.
    base_url = settings.role_base_urls.get(role) or (settings.base_url if provider == "openai" else None)
    api_key = settings.role_api_keys.get(role) or (settings.api_key if provider == "openai" else None)
    options.update({k: v for k, v in (("base_url", base_url), ("api_key", api_key)) if v})
    try:
        return init_chat_model(name, **options)
    except ImportError:
        from reins.runtime.llm.langchain_private import chat_model_providers

        package = chat_model_providers()[provider][0].split(".")[0].replace("_", "-")
        raise SettingsError(f"model {name!r} needs the {package} package: pip install {package}") from None


def create_chat_model(
    name: str, role: str, settings: Settings, *, timeout_s: float | None = None, max_tokens: int | None = None
) -> BaseChatModel:
    """The chat model ``name`` names for ``role``: ``provider:model`` through LangChain's
    ``init_chat_model`` (when that provider's package is installed), a plain name on the
    OpenAI-compatible endpoint (OpenAI, DeepSeek, vLLM, Ollama /v1, llama.cpp server). The role's own
    endpoint and key (``REINS_BASE_URL_<ROLE>``, ``REINS_API_KEY_<ROLE>``) win over the shared ones.

    ``timeout_s`` / ``max_tokens`` override the role's policy (``reins doctor --check`` probes small)."""
    policies = configured_policies(settings)
    policy = policies.get(role) or policies[ROLE_PARENTS[role]]
    provider = provider_of(name)
    if provider is not None:
        return _provider_model(name, provider, role, settings, timeout_s or policy.timeout_s)
    from langchain_openai import ChatOpenAI

    bound = output_bound_options(max_tokens or policy.max_tokens, settings.max_tokens_param)
    return ChatOpenAI(
        model=name,
        base_url=settings.base_url_for(role),
        api_key=settings.api_key_for(role) or "not-needed",  # local servers accept any key
        timeout=timeout_s or policy.timeout_s,
        max_retries=0,  # retries are ours: only retryable errors, see runtime.contracts
        temperature=policy.temperature,
        **bound,
    )


def entry_model(entry: str, role: str, settings: Settings, **overrides: Any) -> BaseChatModel:
    """The chat model a model entry (a fallback, an escalation model, or a plain model name) names for
    ``role``: on the entry's own endpoint with the key its variable holds — never the role's key,
    which belongs to another server — else as ``create_chat_model`` makes it."""
    parsed = parse_model_entry(entry)
    if parsed.base_url is not None:
        key = settings.entry_keys.get(parsed.key_variable or "") or "not-needed"
        settings = replace(settings, role_base_urls={**settings.role_base_urls, role: parsed.base_url},
                           role_api_keys={**settings.role_api_keys, role: key})
    return create_chat_model(parsed.name, role, settings, **overrides)


def model_set_from_settings(settings: Settings) -> ModelSet:
    """Configured roles use their configured models (and fallbacks); the rest use the offline model.
    Each role's policy carries its output bound (``REINS_MAX_TOKENS_<ROLE>`` over the default)."""
    from reins.runtime.standins.offline import OfflineModel

    offline = OfflineModel()
    models: dict[str, BaseChatModel] = {}
    labels: dict[str, str] = {}
    fallbacks: dict[str, tuple[tuple[str, BaseChatModel], ...]] = {}
    for role in ROLES:
        name = settings.model_for(role)
        if name:
            models[role] = create_chat_model(name, role, settings)
            fallbacks[role] = tuple((entry_label(n), entry_model(n, role, settings))
                                    for n in settings.fallbacks_for(role) if n != name)
        else:
            models[role] = offline
        labels[role] = configured_label(settings, role)
    for role in ROLE_PARENTS:  # a task role (or the vision role) with a model of its own
        name = settings.role_models.get(role)
        if name:
            models[role], labels[role] = create_chat_model(name, role, settings), configured_label(settings, role)
            fallbacks[role] = tuple((entry_label(n), entry_model(n, role, settings))
                                    for n in settings.fallbacks_for(role) if n != name)
    return ModelSet(
        models=models, labels=labels, fallbacks=fallbacks, policies=configured_policies(settings),
        structured_method=settings.structured_method, tool_choice=settings.tool_choice,
        text_tool_calls=settings.text_tool_calls, escalations=configured_escalations(settings),
    )


def configured_escalations(settings: Settings) -> dict[str, tuple[str, BaseChatModel]]:
    """Role → (label, model) of each configured role's escalation model (REINS_MODEL_ESCALATE[_<ROLE>]
    or an escalate= entry of its fallback list), on the entry's own endpoint when it names one."""
    return {role: (entry_label(name), entry_model(name, role, settings))
            for role in ALL_ROLES if settings.model_for(role) and (name := settings.escalation_for(role))
            and (role in ROLES or settings.role_models.get(role) or settings.role_escalations.get(role))}


def default_model_set() -> ModelSet:
    return model_set_from_settings(Settings.from_env())


def model_configuration(models: ModelSet) -> dict[str, str]:
    """Role → its model and fallbacks in order (``a → b``): what a run is started on, no keys or URLs."""
    return {role: " → ".join(label for label, _ in models.chain(role)) for role in ROLES}


def served_by_stand_in(models: Mapping[str, Sequence[str]]) -> bool:
    """Whether the offline stand-in answered any role's calls (``models``: role → labels that answered)."""
    return any(OFFLINE_LABEL in labels for labels in models.values())

"""Wire tests: the real ChatOpenAI path against a loopback OpenAI-compatible stub (no network)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from reins.runtime.llm import models as runtime_models
from reins.runtime.llm.models import ModelSet, RolePolicy, model_set_from_settings
from reins.runtime.config.settings import ROLES, Settings
from tests.wire.provider_stub import StubProvider

KEY = "sk-wire-TESTKEY-0123456789abcdef0123456789"


def fast(policy: RolePolicy) -> RolePolicy:
    """The role's policy with a millisecond backoff, so a retry costs no wall time."""
    return dataclasses.replace(policy, timeout_s=10, backoff_initial_s=0.001)


def env_for(base_url: str, **extra: str) -> dict[str, str]:
    return {"REINS_MODEL": "stub-model", "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": KEY, **extra}


def wire_models(base_url: str, **extra: str) -> ModelSet:
    """Every role served by a real ChatOpenAI pointed at ``base_url``, built from settings like the CLI."""
    models = model_set_from_settings(Settings.from_env(env_for(base_url, **extra)))
    return models.with_policies(**{role: fast(models.policy(role)) for role in ROLES})


@pytest.fixture
def stub() -> Iterator[Callable[..., StubProvider]]:
    started: list[StubProvider] = []

    def start(answer: Callable[[Mapping[str, Any]], Any]) -> StubProvider:
        provider = StubProvider(answer).__enter__()
        started.append(provider)
        return provider

    yield start
    for provider in started:
        provider.__exit__(None, None, None)


@pytest.fixture
def fast_cli(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """Environment for an in-process ``reins`` run against a stub, with tiny retry backoffs."""
    from reins.runtime.config import context

    monkeypatch.setattr(runtime_models, "ROLE_POLICIES", {r: fast(p) for r, p in runtime_models.ROLE_POLICIES.items()})

    def configure(base_url: str, **extra: str) -> None:
        for name, value in env_for(base_url, REINS_CHECKPOINT="memory", **extra).items():
            monkeypatch.setenv(name, value)
        context._models_for.cache_clear()

    yield configure
    context._models_for.cache_clear()


@pytest.fixture
def clean_doctor_env(monkeypatch: pytest.MonkeyPatch) -> Callable[[Mapping[str, str]], None]:
    """Only the given REINS_/OPENAI_ variables set (settings are read from the process environment)."""
    import os

    for name in [n for n in os.environ if n.startswith(("REINS_", "OPENAI_"))]:
        monkeypatch.delenv(name)

    def configure(values: Mapping[str, str]) -> None:
        for name, value in values.items():
            monkeypatch.setenv(name, value)

    return configure

"""The budget fuzz's adversary and the configurations it meets: model sets that differ per role and
per task role, with fallbacks, escalations, a vision role, and tools up to a slow MCP server's deadline.

Each configuration (``FuzzConfig``) is drawn from a seed: every role — the six pipeline roles, the
encoder and chat, each of the assistant's task roles (its own model or its parent's), and the vision
role — gets its own timeout, retries, output bound, 0 to 3 fallbacks and maybe an escalation model;
the chat tools are the built-ins and up to two MCP servers, one of them possibly allowed 600 s. A
fixed number of configurations is built once and reused (each model set binds its runnables once);
configuration 0 is the reported case: the step role with three fallbacks.
"""

from __future__ import annotations

import json
import random
import threading
from dataclasses import dataclass
from typing import Any, Literal

import httpx
import openai
from langchain_core.messages import AIMessage
from pydantic import ConfigDict, PrivateAttr

from reins.evals.perturbed import perturb_data, raised_error
from reins.runtime.llm.models import ModelSet, RolePolicy
from reins.runtime.config.settings import ROLES, TASK_ROLES, VISION_ROLE
from reins.runtime.execution.budget import BUILTIN_TOOL_DEADLINE_S
from reins.runtime.standins.fake_base import ModelCall, StandInChatModel
from reins.schemas.strict import Strict

OUTCOMES = ("valid", "drifted", "cut_off", "connection_error", "provider_timeout", "bad_request")
WEIGHTS = (5, 2, 2, 2, 1, 1)  # an adversary that misbehaves about half the time
CONFIGURATIONS = 24  # distinct model sets a fuzz cycles through
MCP_DEADLINES_S = (5.0, 30.0, 120.0, 600.0)  # a server's timeout_s: a slow one may allow 600 s


class FuzzAnswer(Strict):
    verdict: Literal["pass", "fail"]


class AdversarialModel(StandInChatModel):
    """Answers each request with a seeded outcome (``OUTCOMES``), always reporting the most output
    tokens the request allowed (``max_tokens`` is set per request by the role's policy). At its
    worst, a model with ``last_attempts`` 0 (a role's own model, a fallback before the last) always
    fails retryably; the chain's last model (and an escalation model) fails all but every
    ``last_attempts``-th request, which it answers cut off — so every retry, fallback, repair with
    more room and escalation the bound counts is taken."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    seed: int
    last_attempts: int = 0
    max_tokens: int = 0
    # Shared with the copies the role policy makes per request (a shallow copy keeps this dict), so
    # ``reseed`` starts every copy's draws again.
    _state: dict = PrivateAttr(default_factory=dict)

    @property
    def _llm_type(self) -> str:
        return "reins-adversarial"

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        self._state = {"seed": self.seed, "n": 0, "worst": False, "lock": threading.Lock()}

    def reseed(self, seed: int, worst: bool = False) -> None:
        with self._state["lock"]:
            self._state.update(seed=seed, n=0, worst=worst)

    def _rng(self) -> random.Random:
        with self._state["lock"]:
            self._state["n"] += 1
            return random.Random(f"{self._state['seed']}:{self._state['n']}")

    def respond(self, call: ModelCall) -> Any:
        rng = self._rng()
        outcome = rng.choices(OUTCOMES, WEIGHTS)[0]
        if self._state["worst"]:
            if not self.last_attempts or self._state["n"] % self.last_attempts:
                return overloaded()
            outcome = "cut_off"
        if outcome in ("connection_error", "provider_timeout", "bad_request"):
            return raised_error(outcome, call.contract)
        usage = {"input_tokens": 0, "output_tokens": self.max_tokens, "total_tokens": self.max_tokens}
        if outcome == "cut_off":
            return AIMessage(content="", response_metadata={"finish_reason": "length"}, usage_metadata=usage)
        if call.tool_names:
            return AIMessage(content="", usage_metadata=usage)  # a turn without a call: the graph decides
        if call.structured:
            data = {"verdict": "pass"}
            if outcome == "drifted":
                data, _ = perturb_data(data, "schema_drift", rng)
            return AIMessage(content=json.dumps(data), usage_metadata=usage)
        return AIMessage(content="A short answer.", usage_metadata=usage)


def overloaded() -> BaseException:
    """A 503: retryable, and — unlike a dropped connection — no sign the model is gone for the run,
    so every later request still tries it first."""
    request = httpx.Request("POST", "https://provider.invalid/v1/chat/completions")
    return openai.InternalServerError("the model provider is overloaded", body=None,
                                      response=httpx.Response(503, request=request))


@dataclass(frozen=True)
class FuzzConfig:
    """One configuration a run meets: its models, every adversary in them, its tools' deadlines and
    a line saying what differs."""

    models: ModelSet
    adversaries: tuple[AdversarialModel, ...]
    tool_deadlines_s: tuple[float, ...]
    line: str

    def reseed(self, seed: int, worst: bool) -> None:
        for offset, model in enumerate(self.adversaries):
            model.reseed(seed * 97 + offset, worst)

    @property
    def vision(self) -> bool:
        return self.models.has_model(VISION_ROLE)


def _policy(rng: random.Random) -> RolePolicy:
    tokens = rng.choice((256, 1024, 4096))
    return RolePolicy(timeout_s=rng.choice((5, 30, 60, 180)), retries=rng.choice((0, 1, 1, 2)), temperature=0.0,
                      backoff_initial_s=rng.choice((0.0, 0.5, 1.0)), max_tokens=tokens,
                      max_tokens_limit=tokens * rng.choice((1, 2, 4)))


def _chain(role: str, number: int, policy: RolePolicy, fallbacks: int,
           escalate: bool) -> tuple[list[tuple[str, AdversarialModel]], tuple[str, AdversarialModel] | None]:
    """A role's models as (label, model): its own and ``fallbacks`` more, and maybe an escalation model.
    At its worst the last of the chain answers on its last attempt (``AdversarialModel``)."""
    attempts = 1 + max(policy.retries, 0)
    chain = [(f"{role}-{number}-{index}", AdversarialModel(seed=0, last_attempts=attempts if index == fallbacks else 0))
             for index in range(fallbacks + 1)]
    escalation = (f"{role}-{number}-escalation", AdversarialModel(seed=0, last_attempts=attempts)) if escalate else None
    return chain, escalation


def fuzz_config(number: int) -> FuzzConfig:
    """Configuration ``number``: every role drawn on its own (see the module docstring)."""
    rng = random.Random(f"budget-fuzz-configuration:{number}")
    own_roles = list(ROLES)
    # configuration 0: only the step role on its own chain; the others: each task role half the time
    if number == 0:
        own_roles.append("step")
    else:
        own_roles += [role for role in TASK_ROLES if rng.random() < 0.5]
    if number and rng.random() < 0.5:
        own_roles.append(VISION_ROLE)
    models, labels, fallbacks, escalations, policies = {}, {}, {}, {}, {}
    described = []
    for role in own_roles:
        policies[role] = _policy(rng)
        count = 3 if number == 0 and role == "step" else rng.choice((0, 1, 1, 2, 3))
        chain, escalation = _chain(role, number, policies[role], count, rng.random() < 0.3)
        (labels[role], models[role]), fallbacks[role] = chain[0], tuple(chain[1:])
        if escalation:
            escalations[role] = escalation
        if role not in ROLES or count or escalation:
            described.append(f"{role}+{count}{'+esc' if escalation else ''}")
    servers = rng.randint(0, 2)
    deadlines = (BUILTIN_TOOL_DEADLINE_S, *(rng.choice(MCP_DEADLINES_S) for _ in range(servers)))
    model_set = ModelSet(models=models, labels=labels, fallbacks=fallbacks, escalations=escalations, policies=policies)
    adversaries = (*models.values(), *(model for chain in fallbacks.values() for _, model in chain),
                   *(model for _, model in escalations.values()))
    line = f"configuration {number}: {', '.join(described) or 'one model per role'}; tools up to {max(deadlines):g} s"
    return FuzzConfig(model_set, adversaries, deadlines, line)


_CONFIGS: dict[int, FuzzConfig] = {}


def config_for(seed: int) -> FuzzConfig:
    """The configuration a run of ``seed`` meets (built once, reused)."""
    number = seed % CONFIGURATIONS
    if number not in _CONFIGS:
        _CONFIGS[number] = fuzz_config(number)
    return _CONFIGS[number]

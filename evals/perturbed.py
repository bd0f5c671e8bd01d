"""``PerturbedModel``: a chat-model wrapper that injects seeded, realistic unreliability.

At the given rate a call is disturbed in one of six ways; the two that raise come in two kinds each,
as providers raise them (retryable or not), so eight kinds are recorded:

=================  ================================================================================
kind               what the caller receives
=================  ================================================================================
rephrased_verdict  a verdict in words instead of its enum (``"Looks good to ship"`` for ``pass``);
                   a manager turn that describes the next step instead of calling the tool
schema_drift       a required field renamed (``boundaryStatus``) or dropped; a marker line renamed
                   or dropped; a tool name in snake case
extra_fields       fields the schema does not have (``confidence``, ``notes``); extra tool arguments;
                   extra marker lines in text
wrong_enum         an out-of-vocabulary enum value (``approved``, ``critical``); a different tool
timeout            ``provider_timeout``: ``openai.APITimeoutError`` (the provider did not answer in
                   time; retryable) or ``deadline_overrun``: a bare ``TimeoutError``, what the run's
                   own deadline raises (never retried) — only in a call that runs under a deadline
                   (a reviewer's); elsewhere that draw is a provider timeout, since nothing else
                   could raise it. Raised at once; no sleeping.
exception          ``connection_error``: ``openai.APIConnectionError`` (retryable) or
                   ``bad_request``: ``openai.BadRequestError``, a 400 (never retried)
=================  ================================================================================

The draw picks one of the six families, then one kind within it, so the share of calls that raise is
what it was before the split; ``kinds`` takes kinds or family names (``timeout`` = both timeouts).

Decisions are deterministic for a seed: each call draws from a generator seeded by (seed, contract
name, a digest of the prompt, how often this model has seen that prompt), so parallel reviewers
get the same perturbations in any thread order. Works with ``invoke_contract``'s structured path
(the schema is bound with the call and handed to the inner model), native tool calling and free
text; the contract name arrives in the run metadata (``reins_contract``), as for every Reins model.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import openai
from langchain_core.callbacks import CallbackManager
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import BaseModel, ConfigDict, PrivateAttr

from reins.policies.audit.evaluation import FAMILIES, PERTURBATIONS, expand_kinds
from reins.runtime.execution.deadline import remaining_s
from reins.runtime.standins.fake_base import CONTRACT_KEY, INPUTS_KEY, ROLE_KEY, StandInBindings, call_label

RAISING: frozenset[str] = frozenset({*FAMILIES["timeout"], *FAMILIES["exception"]})
RETRYABLE_KINDS: frozenset[str] = frozenset({"provider_timeout", "connection_error"})
_PROVIDER_URL = "https://provider.invalid/v1/chat/completions"
# Values a model plausibly writes instead of the enum it was given; none of them is in any Reins enum.
WRONG_VALUES: tuple[str, ...] = ("approved", "critical", "lgtm", "major", "ok", "rejected", "severe", "green")
REPHRASED: Mapping[str, str] = {
    "pass": "Looks good to ship",
    "passed": "Nothing crosses a boundary",
    "needs_changes": "A few changes first",
    "needs_review": "Worth a second look",
    "blocked": "Cannot proceed as written",
    "blocker": "Showstopper",
    "high": "Pretty serious",
    "medium": "Moderate, I'd say",
    "low": "Minor",
    "info": "Just so you know",
    "aligned": "They match up",
    "misaligned": "They drift apart",
    "execute": "Let's go ahead",
    "clarification_required": "Too vague to plan",
    "ready": "Good to plan",
    "issue": "A real problem",
    "observation": "Worth noting",
    "required": "Must fix",
    "advisory": "Nice to have",
}
EXTRA_FIELDS: tuple[tuple[str, Any], ...] = (
    ("confidence", 0.82), ("notes", "Reviewed carefully."), ("reasoning", "Based on the requirement."),
    ("version", "1.0"),
)
RENAMED_KEYS: Mapping[str, str] = {
    "summary": "overview", "markdown": "body", "findings": "issues", "tasks": "items", "role": "reviewer",
    "severity": "risk_level", "rationale": "reasoning", "branch": "decision", "disposition": "verdict",
    "violations": "problems", "assumptions": "premises", "recommendations": "advice",
}
# Without a schema (a JSON draft in two-step mode), these keys are taken as enum fields.
KNOWN_ENUM_KEYS = frozenset({"branch", "disposition", "plan_task_alignment", "severity", "boundary_status", "role",
                             "finding_type", "requirement", "target", "stage"})
VERDICT_KEYS = frozenset({"disposition", "severity", "boundary_status", "branch", "plan_task_alignment"})
_MARKER_LINE = re.compile(r"^(?P<label>[A-Z][A-Z_ ]{0,30}?)[ \t]*:[ \t]*(?P<value>\S.*)$", re.M)


@dataclass(frozen=True)
class Injection:
    contract: str
    kind: str


# ------------------------------------------------------------------------------- pure perturbations


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _renamed(key: str) -> str:
    if "_" in key:
        return _camel(key)
    return RENAMED_KEYS.get(key, key.capitalize())


def _resolve(schema: Mapping[str, Any], node: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return schema.get("$defs", {}).get(ref.rsplit("/", 1)[-1], {})
    return node


def enum_fields(schema: Mapping[str, Any] | None) -> dict[str, frozenset[str]]:
    """Property name → allowed values, for every string enum / const anywhere in a JSON schema."""
    found: dict[str, set[str]] = {}
    if not schema:
        return {}

    def values_of(node: Mapping[str, Any]) -> list[str]:
        node = _resolve(schema, node)
        if "enum" in node:
            return [v for v in node["enum"] if isinstance(v, str)]
        if isinstance(node.get("const"), str):
            return [node["const"]]
        return []

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            for name, prop in (node.get("properties") or {}).items():
                if isinstance(prop, Mapping):
                    allowed = values_of(prop) or values_of(prop.get("items") or {})
                    if allowed:
                        found.setdefault(name, set()).update(allowed)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return {name: frozenset(values) for name, values in found.items()}


def _enum_slots(data: Any, enums: Mapping[str, frozenset[str]] | None, path: tuple = ()) -> list[tuple]:
    """(path to the containing dict or list, key or index, value) of every enum-valued string."""
    slots: list[tuple] = []
    if isinstance(data, dict):
        for key, value in data.items():
            allowed = enums.get(key) if enums is not None else None
            if isinstance(value, str) and (value in allowed if allowed else enums is None and key in KNOWN_ENUM_KEYS):
                slots.append((path, key, value))
            elif isinstance(value, list) and allowed:
                slots += [((*path, key), i, v) for i, v in enumerate(value) if isinstance(v, str) and v in allowed]
            if isinstance(value, (dict, list)):
                slots += _enum_slots(value, enums, (*path, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            if isinstance(value, (dict, list)):
                slots += _enum_slots(value, enums, (*path, index))
    return slots


def _container(data: Any, path: tuple) -> Any:
    for part in path:
        data = data[part]
    return data


def perturb_data(data: Mapping[str, Any], kind: str, rng: random.Random, schema: Mapping[str, Any] | None = None):
    """A copy of structured output disturbed by ``kind``; returns ``(data, applied_kind)``. A kind that
    has nothing to act on (a plan has no verdict) falls back to extra fields, which always applies.

    Example: ``perturb_data(review, "wrong_enum", random.Random(1), schema)``
    """
    data = json.loads(json.dumps(data))
    enums = enum_fields(schema) if schema else None
    slots = _enum_slots(data, enums)
    if kind == "rephrased_verdict" and slots:
        top = [s for s in slots if s[0] == () and s[1] in VERDICT_KEYS] or [s for s in slots if s[0] == ()] or slots
        path, key, value = rng.choice(top)
        _container(data, path)[key] = REPHRASED.get(value, f"I'd say {value.replace('_', ' ')}")
        return data, kind
    if kind == "wrong_enum" and slots:
        path, key, value = rng.choice(slots)
        _container(data, path)[key] = rng.choice([w for w in WRONG_VALUES if w != value])
        return data, kind
    if kind == "schema_drift" and data:
        required = set((schema or {}).get("required") or ())
        key = rng.choice(sorted(data))
        value = data.pop(key)
        if key not in required or rng.random() < 0.5:  # dropping an optional field would go unnoticed
            data[_renamed(key)] = value
        return data, kind
    target = data
    nested = [v for v in data.values() if isinstance(v, list) and v and isinstance(v[0], dict)]
    if nested and rng.random() < 0.3:
        target = rng.choice(nested)[0]
    for name, value in rng.sample(EXTRA_FIELDS, k=rng.randint(1, 2)):
        target[name] = value
    return data, "extra_fields"


def perturb_text(text: str, kind: str, rng: random.Random):
    """Free text disturbed by ``kind`` at its marker lines (``STATUS: pass``); a JSON draft is
    disturbed as data. Returns ``(text, applied_kind)``."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
        if isinstance(data, dict):
            changed, applied = perturb_data(data, kind, rng)
            return json.dumps(changed, ensure_ascii=False), applied
    markers = list(_MARKER_LINE.finditer(text))
    if markers and kind in ("rephrased_verdict", "schema_drift", "wrong_enum"):
        line = rng.choice(markers)
        label, value = line["label"], line["value"].strip()
        if kind == "rephrased_verdict":
            replacement = f"{label}: {REPHRASED.get(value.lower(), 'Hard to say, honestly')}"
        elif kind == "wrong_enum":
            replacement = f"{label}: {rng.choice(WRONG_VALUES)}"
        elif rng.random() < 0.5:
            replacement = f"{label.capitalize()} verdict - {value}"  # renamed marker
        else:
            replacement = ""  # dropped marker
        return text[: line.start()] + replacement + text[line.end():], kind
    extra = [f"{name.upper()}: {value}" for name, value in rng.sample(EXTRA_FIELDS, k=rng.randint(1, 2))]
    return text.rstrip("\n") + "\n" + "\n".join(extra), "extra_fields"


def perturb_tool_turn(message: AIMessage, kind: str, rng: random.Random, tool_names: Sequence[str]):
    """A tool-calling turn disturbed by ``kind``. Returns ``(message, applied_kind)``."""
    calls = [dict(call) for call in message.tool_calls]
    if kind == "rephrased_verdict" or not calls:
        intended = ", ".join(c["name"] for c in calls) or "the next sub-agent"
        return AIMessage(content=f"Next I would ask {intended} to continue.", usage_metadata=message.usage_metadata), (
            "rephrased_verdict"
        )
    if kind == "schema_drift":
        for call in calls:
            call["name"] = call["name"].replace("-", "_")
    elif kind == "wrong_enum":
        index = rng.randrange(len(calls))
        others = [n for n in tool_names if n not in {c["name"] for c in calls}] or ["unknown-subagent"]
        calls[index]["name"] = rng.choice(others)
    else:
        kind = "extra_fields"
        for call in calls:
            call["args"] = {**(call.get("args") or {}), **dict(rng.sample(EXTRA_FIELDS, k=1))}
    return message.model_copy(update={"tool_calls": calls}), kind


def raised_error(kind: str, contract: str) -> BaseException:
    """The exception a raising kind stands for, shaped as the OpenAI SDK raises it."""
    request = httpx.Request("POST", _PROVIDER_URL)
    if kind == "provider_timeout":
        return openai.APITimeoutError(request=request)
    if kind == "connection_error":
        return openai.APIConnectionError(message="the model provider closed the connection", request=request)
    if kind == "bad_request":
        return openai.BadRequestError("the model provider rejected the request", body=None,
                                      response=httpx.Response(400, request=request))
    if kind == "deadline_overrun":
        return TimeoutError(f"the deadline passed while waiting for {contract}")
    raise ValueError(f"{kind} is not a raising perturbation")


def _digest(messages: Sequence[BaseMessage]) -> str:
    text = "\x1e".join(f"{m.type}:{m.content}" for m in messages)
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]


# ------------------------------------------------------------------------------------------ model


class PerturbedModel(StandInBindings):
    """Wraps any chat model; see the module docstring. ``kinds`` narrows the perturbations,
    ``contracts`` the calls that may be disturbed, ``limit`` the total number of injections."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: BaseChatModel
    rate: float
    seed: int
    kinds: tuple[str, ...] = PERTURBATIONS
    contracts: frozenset[str] | None = None
    limit: int | None = None

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _seen: Counter = PrivateAttr(default_factory=Counter)
    _drawn: int = PrivateAttr(default=0)
    _injected: list[Injection] = PrivateAttr(default_factory=list)

    def __init__(self, inner: BaseChatModel, rate: float, seed: int, **kwargs: Any):
        if not 0.0 <= float(rate) <= 1.0:
            raise ValueError("the perturbation rate must be between 0 and 1")
        kinds = expand_kinds(tuple(kwargs.pop("kinds", PERTURBATIONS)))
        contracts = kwargs.pop("contracts", None)
        super().__init__(inner=inner, rate=float(rate), seed=int(seed), kinds=kinds,
                         contracts=frozenset(contracts) if contracts is not None else None, **kwargs)

    @property
    def _llm_type(self) -> str:
        return "reins-perturbed"

    @property
    def injected(self) -> list[Injection]:
        """Every perturbation applied so far (the kind actually applied, after any fallback)."""
        with self._lock:
            return list(self._injected)

    def _structured_request(self, schema: dict[str, Any] | type, kwargs: dict[str, Any]) -> dict[str, Any]:
        # The schema travels with the call so the inner model gets the same structured request.
        return {"reins_schema": schema, "reins_method": kwargs.get("method")}

    # ------------------------------------------------------------------------------ one call

    def _draw(self, contract: str, messages: Sequence[BaseMessage]) -> tuple[str, random.Random] | None:
        if self.rate <= 0 or (self.contracts is not None and contract not in self.contracts):
            return None
        digest = _digest(messages)
        with self._lock:
            self._seen[(contract, digest)] += 1
            rng = random.Random(f"{self.seed}:{contract}:{digest}:{self._seen[(contract, digest)]}")
            if rng.random() >= self.rate or (self.limit is not None and self._drawn >= self.limit):
                return None
            self._drawn += 1
            families = [kinds for kinds in FAMILIES.values() if any(k in self.kinds for k in kinds)]
            family = rng.choice(families)
            return rng.choice([k for k in family if k in self.kinds]), rng

    def _record(self, contract: str, kind: str) -> None:
        with self._lock:
            self._injected.append(Injection(contract, kind))

    def _generate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        label = call_label(run_manager, kwargs)
        handle = (getattr(run_manager, "metadata", None) or {}).get(INPUTS_KEY)  # the inner model reads the same inputs
        config: dict[str, Any] = {"metadata": {CONTRACT_KEY: label.contract, ROLE_KEY: label.role, INPUTS_KEY: handle}}
        if run_manager is not None:  # the inner model's run nests under this one in traces
            config["callbacks"] = CallbackManager(
                handlers=run_manager.inheritable_handlers,
                inheritable_handlers=run_manager.inheritable_handlers,
                parent_run_id=run_manager.run_id,
                inheritable_tags=run_manager.inheritable_tags,
                inheritable_metadata=run_manager.inheritable_metadata,
            )
        drawn = self._draw(label.contract, messages)
        kind, rng = drawn if drawn else (None, None)
        if kind == "deadline_overrun" and remaining_s() is None and "provider_timeout" in self.kinds:
            kind = "provider_timeout"  # no deadline around this call: only the provider can time it out
        if kind in RAISING:
            self._record(label.contract, kind)
            raise raised_error(kind, label.contract)
        tools = kwargs.get("tools")
        if tools:
            extra = {"tool_choice": kwargs["tool_choice"]} if kwargs.get("tool_choice") else {}
            message = self.inner.bind_tools(tools, **extra).invoke(messages, config)
            if kind:
                message, kind = perturb_tool_turn(message, kind, rng, label.tool_names)
        elif kwargs.get("reins_structured"):
            schema = kwargs.get("reins_schema")
            method = kwargs.get("reins_method") or "json_schema"
            out = self.inner.with_structured_output(schema, method=method, include_raw=True).invoke(messages, config)
            raw = out["raw"] if isinstance(out, dict) else None
            parsed = out.get("parsed") if isinstance(out, dict) else out
            if isinstance(parsed, BaseModel):
                parsed = parsed.model_dump(mode="json")
            if isinstance(parsed, dict):
                if kind:
                    parsed, kind = perturb_data(parsed, kind, rng, schema if isinstance(schema, dict) else None)
                message = AIMessage(content=json.dumps(parsed, ensure_ascii=False),
                                    usage_metadata=getattr(raw, "usage_metadata", None))
            else:  # the inner model's own output did not parse: pass it on for the contract to reject
                message = raw if isinstance(raw, AIMessage) else AIMessage(content=str(parsed))
                kind = None
        else:
            message = self.inner.invoke(messages, config)
            if kind:
                text = message.content if isinstance(message.content, str) else json.dumps(message.content)
                content, kind = perturb_text(text, kind, rng)
                message = message.model_copy(update={"content": content})
        if kind:
            self._record(label.contract, kind)
        if not isinstance(message, AIMessage):
            message = AIMessage(content=str(getattr(message, "content", message)))
        return ChatResult(generations=[ChatGeneration(message=message)])


__all__ = ["FAMILIES", "PERTURBATIONS", "RAISING", "RETRYABLE_KINDS", "Injection", "PerturbedModel", "enum_fields",
           "expand_kinds", "perturb_data", "perturb_text", "perturb_tool_turn", "raised_error"]

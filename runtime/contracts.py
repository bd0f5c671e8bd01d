"""Contract invocation: the one way a node gets structured output from a model.

``invoke_contract(name, schema, messages, models)``:

1. ``direct`` (default): one structured call on the role's model. ``two_step``: the role's model
   writes a free-text draft and the ``encoder`` model encodes it into the schema.
2. The output is validated by the strict pydantic schema (unknown fields rejected, bounded text and
   lists, cross-field rules).
3. On failure, exactly one repair call whose feedback lists at most five ``{path, code}`` pairs and
   never echoes the rejected output; a second failure raises ``ContractError``.
4. Every call is counted: business, encoder and repair calls, tokens, latency.

Free-text drafts (``invoke_text``) and tool-calling turns (``invoke_tool_turn``) go through the same
call mechanics (``runtime.model_calls``: labels, role policy, retries, fallbacks, metrics). Each entry point has an async twin (``ainvoke_*``) that runs
the same steps on the model's ``ainvoke``; graph nodes reach both through ``runtime/calls.py``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ValidationError

from policies.json_limits import JsonLimitError, check_json_value
from policies.redaction import redact
from policies.truncation import TRUNCATED, is_truncated
from runtime.failures import MAX_REPAIR_ISSUES, ContractError, ContractIssue
from runtime.messages import message_text
from runtime.model_calls import (  # noqa: F401 - the errors and metrics of contract calls, named here too
    METRIC_FIELDS,
    SERVED_PREFIX,
    ContractTimeout,
    _Caller,
    _schema_text,
    empty_metrics,
    merge_metrics,
    metrics_totals,
)
from runtime.models import ModelSet
from runtime.settings import CONTRACT_MODES

T = TypeVar("T", bound=BaseModel)


# The stable contracts of the three graphs. Layers above the runtime add theirs with
# ``register_contracts`` (the evaluation's baselines do, from ``evals/``).
CONTRACT_ROLES: dict[str, str] = {
    "tasklist.planning_decision": "tasklist",
    "tasklist.strategy": "tasklist",
    "tasklist.draft": "tasklist",
    "tasklist.revision": "tasklist",
    "delivery.supervisor_pre": "supervisor",
    "delivery.manager": "manager",
    "delivery.plan": "planner",
    "delivery.tasks": "planner",
    "delivery.general_review": "reviewer",
    "delivery.risk_review": "reviewer",
    "delivery.boundary_review": "reviewer",
    "delivery.supervisor_post": "supervisor",
    "delivery.plan_revision": "planner",
    "delivery.task_revision": "planner",
    "delivery.report_polish": "polish",
    "assistant.intent": "chat",
    "assistant.step": "chat",
    "assistant.answer": "chat",
    "assistant.reflection": "chat",
    "assistant.replan": "chat",
    "assistant.skill_draft": "chat",
    "assistant.summary": "chat",
}


def register_contracts(roles: Mapping[str, str]) -> None:
    """Add contracts (name → the role whose model serves them); registering the same pair again is a
    no-op, giving a known contract another role is an error."""
    clashes = sorted(name for name, role in roles.items() if CONTRACT_ROLES.get(name, role) != role)
    if clashes:
        raise ValueError(f"contract {clashes[0]!r} is already served by role {CONTRACT_ROLES[clashes[0]]!r}")
    CONTRACT_ROLES.update(roles)


def models_served(metrics: Mapping[str, Mapping[str, int]]) -> dict[str, list[str]]:
    """Role → the models that answered its calls (from the ``model:<label>`` counts), in label order."""
    roles: dict[str, set[str]] = {}
    for contract, values in metrics.items():
        labels = {key.removeprefix(SERVED_PREFIX) for key, count in values.items() if key.startswith(SERVED_PREFIX) and count}
        roles.setdefault(CONTRACT_ROLES.get(contract, "unknown"), set()).update(labels)
    return {role: sorted(labels) for role, labels in sorted(roles.items()) if labels}


def fallbacks_per_role(metrics: Mapping[str, Mapping[str, int]]) -> dict[str, int]:
    """Role → calls that moved to a fallback model."""
    roles: dict[str, int] = {}
    for contract, values in metrics.items():
        if values.get("fallbacks"):
            role = CONTRACT_ROLES.get(contract, "unknown")
            roles[role] = roles.get(role, 0) + int(values["fallbacks"])
    return roles


@dataclass(frozen=True)
class Contracted(Generic[T]):
    """A validated contract output and the metrics of the calls that produced it."""

    value: T
    metrics: dict[str, dict[str, int]]


# ------------------------------------------------------------------------------------ invocation


def role_for(contract: str) -> str:
    try:
        return CONTRACT_ROLES[contract]
    except KeyError:
        raise KeyError(f"unknown contract {contract!r}") from None


# A path segment is echoed only when it looks like a field name or an index: an unknown key the model
# invented may carry prose (or an injection), and the repair must never feed the rejected output back.
_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")


def _path_part(part: object) -> str:
    if isinstance(part, int):
        return str(part)
    return str(part) if _PLAIN_KEY.match(str(part)) else "<key>"


def _issues_from(error: ValidationError) -> list[ContractIssue]:
    issues = []
    for item in error.errors():
        path = ".".join(_path_part(part) for part in item.get("loc", ())) or "$"
        issues.append(ContractIssue(path=path, code=str(item.get("type", "invalid"))))
    return issues[:MAX_REPAIR_ISSUES]


def truncated(message: Any) -> bool:
    """The response stopped at the token limit (``finish_reason: length`` or a provider's equivalent)."""
    return is_truncated(getattr(message, "response_metadata", None))


TRUNCATED_ISSUE = ContractIssue(path="$", code=TRUNCATED)


def _validate(schema: type[T], raw: Mapping[str, Any]) -> tuple[T | None, list[ContractIssue]]:
    # Checked first: a cut-off object may still parse (as a shorter, different object).
    if truncated(raw.get("raw")):
        return None, [TRUNCATED_ISSUE]
    error = raw.get("parsing_error")
    if error is not None or raw.get("parsed") is None:
        return None, [ContractIssue(path="$", code=getattr(error, "code", None) if isinstance(error, JsonLimitError) else "invalid_json")]
    try:
        # A provider's parser has no depth limit of its own: nothing deeper reaches the schema.
        check_json_value(raw["parsed"])
    except JsonLimitError as limit:
        return None, [ContractIssue(path="$", code=limit.code)]
    try:
        return schema.model_validate(raw["parsed"]), []
    except ValidationError as error:
        return None, _issues_from(error)


def repair_message(contract: str, issues: Sequence[ContractIssue]) -> HumanMessage:
    """Feedback for the single repair: paths and codes only, never the rejected output."""
    listed = json.dumps([issue.as_dict() for issue in issues[:MAX_REPAIR_ISSUES]])
    shorter = TRUNCATION_HINT if any(issue.code == TRUNCATED for issue in issues) else ""
    return HumanMessage(
        content=(
            f"Your previous answer for {contract} did not satisfy the schema. "
            f"Problems as [{{path, code}}]: {listed}. {shorter}"
            "Answer again with one JSON object that satisfies the schema exactly; no extra fields."
        )
    )


TRUNCATION_HINT = "It was cut off at the output token limit: keep every text field short. "


def draft_repair_message(contract: str) -> HumanMessage:
    """The one repair of a free-text draft that was cut off at the token limit."""
    return HumanMessage(
        content=f"Your previous answer for {contract} was cut off at the output token limit. "
        "Answer again, complete and noticeably shorter."
    )


ENCODER_INSTRUCTION = (
    "You encode a draft into JSON. Return exactly one JSON object that satisfies the JSON schema below, "
    "taking every value from the draft; add nothing the draft does not say.\n<schema>\n{schema}\n</schema>"
)


def _encoder_messages(schema: type[BaseModel], draft: str) -> list[BaseMessage]:
    return [
        SystemMessage(content=ENCODER_INSTRUCTION.format(schema=_schema_text(schema))),
        HumanMessage(content=f"<draft>\n{draft}\n</draft>"),
    ]


@dataclass(frozen=True)
class _Call:
    """One model call the contract algorithm asks for (structured unless ``schema`` is None)."""

    kind: str
    role: str
    messages: list[BaseMessage]
    schema: type[BaseModel] | None
    more_room: bool = False  # the repair after a cut-off: twice the output bound, once


def _contract_steps(contract: str, schema: type[T], messages: Sequence[BaseMessage], role: str, mode: str):
    """The contract algorithm once, for both drivers: yields the calls to make, receives their results.

    direct: structured call → validate → (one repair → validate). two_step: free-text draft by the
    role's model first, then the same steps on the encoder with the draft as its only input.
    """
    if mode not in CONTRACT_MODES:
        raise ValueError(f"contract mode {mode!r} is not valid; allowed: {', '.join(CONTRACT_MODES)}")
    if mode == "direct":
        ask, kind = list(messages), "business_calls"
    else:
        draft = yield _Call("business_calls", role, list(messages), None)
        if truncated(draft):  # a cut-off draft is never encoded as if it were the whole draft
            draft = yield _Call("repair_calls", role, [*messages, draft_repair_message(contract)], None, True)
            if truncated(draft):
                raise ContractError(contract, [TRUNCATED_ISSUE])
        ask, kind, role = _encoder_messages(schema, message_text(draft)), "encoder_calls", "encoder"
    value, issues = _validate(schema, (yield _Call(kind, role, ask, schema)))
    if value is None:
        repair = _Call("repair_calls", role, [*ask, repair_message(contract, issues)], schema, TRUNCATED_ISSUE in issues)
        value, issues = _validate(schema, (yield repair))
        if value is None:
            raise ContractError(contract, issues)
    return value


def invoke_contract(
    contract: str,
    schema: type[T],
    messages: Sequence[BaseMessage],
    models: ModelSet,
    *,
    mode: str = "direct",
    method: str | None = None,
) -> Contracted[T]:
    """Call the contract's role model and return validated output (see the module docstring)."""
    caller = _Caller(contract, role_for(contract), models)
    method = method or models.structured_method
    steps = _contract_steps(contract, schema, messages, caller.role, mode)
    try:
        call = next(steps)
        while True:
            call = steps.send(caller.call(call.kind, call.role, call.messages, schema=call.schema, method=method,
                                          more_room=call.more_room))
    except StopIteration as done:
        return Contracted(value=done.value, metrics=caller.meter.snapshot())
    except ContractError as error:
        raise ContractError(contract, error.issues, caller.meter.snapshot()) from None


async def ainvoke_contract(
    contract: str,
    schema: type[T],
    messages: Sequence[BaseMessage],
    models: ModelSet,
    *,
    mode: str = "direct",
    method: str | None = None,
) -> Contracted[T]:
    """Async twin of :func:`invoke_contract` (the same steps, the same metrics)."""
    caller = _Caller(contract, role_for(contract), models)
    method = method or models.structured_method
    steps = _contract_steps(contract, schema, messages, caller.role, mode)
    try:
        call = next(steps)
        while True:
            result = await caller.acall(call.kind, call.role, call.messages, schema=call.schema, method=method,
                                        more_room=call.more_room)
            call = steps.send(result)
    except StopIteration as done:
        return Contracted(value=done.value, metrics=caller.meter.snapshot())
    except ContractError as error:
        raise ContractError(contract, error.issues, caller.meter.snapshot()) from None


@dataclass(frozen=True)
class TextResult:
    text: str
    metrics: dict[str, dict[str, int]]


def _text_steps(contract: str, messages: Sequence[BaseMessage], role: str):
    """The free-text algorithm once, for both drivers: a draft cut off at the token limit is never
    returned as a draft; it gets the one repair (asked again, shorter), and a second cut-off raises
    ``ContractError`` with the code ``truncated``."""
    message = yield _Call("business_calls", role, list(messages), None)
    if truncated(message):
        message = yield _Call("repair_calls", role, [*messages, draft_repair_message(contract)], None, True)
        if truncated(message):
            raise ContractError(contract, [TRUNCATED_ISSUE])
    return message


def invoke_text(contract: str, messages: Sequence[BaseMessage], models: ModelSet) -> TextResult:
    """A free-text call (e.g. a task-list draft); the caller validates the text by rules."""
    caller = _Caller(contract, role_for(contract), models)
    steps = _text_steps(contract, messages, caller.role)
    try:
        call = next(steps)
        while True:
            call = steps.send(caller.call(call.kind, call.role, call.messages, more_room=call.more_room))
    except StopIteration as done:
        return TextResult(text=message_text(done.value), metrics=caller.meter.snapshot())
    except ContractError as error:
        raise ContractError(contract, error.issues, caller.meter.snapshot()) from None


async def ainvoke_text(contract: str, messages: Sequence[BaseMessage], models: ModelSet) -> TextResult:
    """Async twin of :func:`invoke_text`."""
    caller = _Caller(contract, role_for(contract), models)
    steps = _text_steps(contract, messages, caller.role)
    try:
        call = next(steps)
        while True:
            call = steps.send(await caller.acall(call.kind, call.role, call.messages, more_room=call.more_room))
    except StopIteration as done:
        return TextResult(text=message_text(done.value), metrics=caller.meter.snapshot())
    except ContractError as error:
        raise ContractError(contract, error.issues, caller.meter.snapshot()) from None


@dataclass(frozen=True)
class ToolTurn:
    message: AIMessage
    metrics: dict[str, dict[str, int]]


def invoke_tool_turn(
    contract: str,
    messages: Sequence[BaseMessage],
    models: ModelSet,
    tools: Sequence[Any],
    options: Mapping[str, Any] | None = None,
    *,
    more_room: bool = False,
) -> ToolTurn:
    """One native tool-calling turn (the manager's); policy checks happen in the graph, not here.

    ``options`` go to ``bind_tools`` as they are (``tool_choice``, ``parallel_tool_calls``; see
    ``policies.tool_choice``)."""
    caller = _Caller(contract, role_for(contract), models)
    message = caller.call("business_calls", caller.role, messages, tools=tools, options=options, more_room=more_room)
    if not isinstance(message, AIMessage):
        message = AIMessage(content=message_text(message))
    return ToolTurn(message=message, metrics=caller.meter.snapshot())


async def ainvoke_tool_turn(
    contract: str,
    messages: Sequence[BaseMessage],
    models: ModelSet,
    tools: Sequence[Any],
    options: Mapping[str, Any] | None = None,
    *,
    more_room: bool = False,
) -> ToolTurn:
    """Async twin of :func:`invoke_tool_turn`."""
    caller = _Caller(contract, role_for(contract), models)
    message = await caller.acall("business_calls", caller.role, messages, tools=tools, options=options,
                                 more_room=more_room)
    if not isinstance(message, AIMessage):
        message = AIMessage(content=message_text(message))
    return ToolTurn(message=message, metrics=caller.meter.snapshot())


def safe_error(error: BaseException, limit: int = 500) -> str:
    """A redacted, bounded one-line description of an error, fit for traces and users."""
    if isinstance(error, (ContractError, ContractTimeout)):
        return redact(str(error), limit)
    return redact(f"{type(error).__name__}: {error}", limit)

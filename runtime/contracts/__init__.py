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
call mechanics (``reins.runtime.llm.model_calls``: labels, role policy, retries, fallbacks, metrics). Each
algorithm is written once, as a generator of requests (``contract_steps``, ``text_steps``,
``tool_turn_steps``), and runs on the one pair of drivers of ``reins.runtime.execution.driving``: ``invoke_*`` with
``drive``, ``ainvoke_*`` with ``adrive`` (the model's ``invoke`` / ``ainvoke``). Graph nodes reach
both through ``runtime/execution/calls.py``.

The messages may carry the structured inputs they were written from (``reins.runtime.llm.prompt_inputs``):
those travel in every call's metadata beside the contract's name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from reins.policies.models.escalation import CONTRACT_ATTEMPTS, escalation_allowed
from reins.runtime.contracts.checks import (  # noqa: F401 - judging outputs and the repair, named here too
    MAX_REPAIR_ISSUES,
    TRUNCATED_ISSUE,
    TRUNCATION_HINT,
    ContractError,
    ContractIssue,
    _validate,
    draft_repair_message,
    repair_message,
    truncated,
)
from reins.runtime.contracts.roles import (  # noqa: F401 - the contracts' roles, named here too
    CONTRACT_ROLES,
    fallbacks_per_role,
    models_served,
    register_contracts,
    role_for,
)
from reins.runtime.execution.driving import Steps, adrive, drive
from reins.runtime.llm.escalation import escalation_steps
from reins.runtime.llm.messages import message_text
from reins.runtime.llm.model_calls import (  # noqa: F401 - the errors and metrics of contract calls, named here too
    METRIC_FIELDS,
    RUNAWAY_KEY,
    SERVED_PREFIX,
    ContractTimeout,
    _Caller,
    _schema_text,
    empty_metrics,
    merge_metrics,
    metrics_totals,
)
from reins.runtime.llm.models import ModelSet
from reins.runtime.llm.prompt_inputs import inputs_of
from reins.runtime.execution.run_ledger import BudgetCapReached
from reins.runtime.config.settings import CONTRACT_MODES

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class Contracted(Generic[T]):
    """A validated contract output and the metrics of the calls that produced it."""

    value: T
    metrics: dict[str, dict[str, int]]


@dataclass(frozen=True)
class TextResult:
    text: str
    metrics: dict[str, dict[str, int]]


@dataclass(frozen=True)
class ToolTurn:
    message: AIMessage
    metrics: dict[str, dict[str, int]]


ENCODER_INSTRUCTION = (
    "You encode a draft into JSON. Return exactly one JSON object that satisfies the JSON schema below, "
    "taking every value from the draft; add nothing the draft does not say.\n<schema>\n{schema}\n</schema>"
)


def _encoder_messages(schema: type[BaseModel], draft: str) -> list[BaseMessage]:
    return [
        SystemMessage(content=ENCODER_INSTRUCTION.format(schema=_schema_text(schema))),
        HumanMessage(content=f"<draft>\n{draft}\n</draft>"),
    ]


def _caller(contract: str, models: ModelSet, messages: Sequence[BaseMessage]) -> _Caller:
    return _Caller(contract, role_for(contract), models, inputs_of(messages))


def _metered(caller: _Caller, steps: Steps) -> Steps:
    """``steps``, with a ``ContractError`` it raises carrying the metrics of every call made so far."""
    try:
        return (yield from steps)
    except ContractError as error:
        raise ContractError(caller.contract, error.issues, caller.meter.snapshot()) from None


def _draft(caller: _Caller, messages: Sequence[BaseMessage]) -> Steps:
    """A free-text answer of the role's model. A draft cut off at the token limit — or stopped early
    because it ran away in a loop (``reins.policies.models.runaway_text``) — is never returned as a draft: it gets
    the one repair (asked again, shorter, with more room, told why); a second cut-off raises
    ``ContractError`` with the code ``truncated``."""
    message = yield from caller.steps("business_calls", caller.role, list(messages))
    if truncated(message):
        looped = bool(getattr(message, "response_metadata", {}).get(RUNAWAY_KEY))
        repair = [*messages, draft_repair_message(caller.contract, looped)]
        message = yield from caller.steps("repair_calls", caller.role, repair, more_room=True)
        if truncated(message):
            raise ContractError(caller.contract, [TRUNCATED_ISSUE])
    return message


def _structured(caller: _Caller, schema: type[T], messages: Sequence[BaseMessage], mode: str, method: str) -> Steps:
    """direct: structured call → validate → (one repair → validate). two_step: a free-text draft by
    the role's model first (``_draft``), then the same steps on the encoder with the draft as its
    only input."""
    if mode not in CONTRACT_MODES:
        raise ValueError(f"contract mode {mode!r} is not valid; allowed: {', '.join(CONTRACT_MODES)}")
    ask, kind, role = list(messages), "business_calls", caller.role
    if mode == "two_step":
        draft = yield from _draft(caller, messages)
        ask, kind, role = _encoder_messages(schema, message_text(draft)), "encoder_calls", "encoder"
    value, issues = _validate(schema, (yield from caller.steps(kind, role, ask, schema=schema, method=method)))
    if value is None:
        repair = [*ask, repair_message(caller.contract, issues)]
        raw = yield from caller.steps("repair_calls", role, repair, schema=schema, method=method,
                                      more_room=TRUNCATED_ISSUE in issues)
        value, issues = _validate(schema, raw)
        if value is None:
            value, issues = yield from _escalated(caller, role, ask, schema, method, issues)
        if value is None:
            raise ContractError(caller.contract, issues)
    return value


def _escalated(caller: _Caller, role: str, ask: list[BaseMessage], schema: type[T], method: str,
               issues: list[ContractIssue]) -> Steps:
    """A contract still invalid after its repair: the same request once on the role's escalation
    model, validated by the same schema (``reins.policies.models.escalation``). Returns ``(value, issues)``; when
    no escalation is configured, or its model fails or answers invalidly too, value is None."""
    if not escalation_allowed(configured=caller.models.escalation(role) is not None, failed_attempts=CONTRACT_ATTEMPTS,
                              allowed_attempts=CONTRACT_ATTEMPTS, escalated=False):
        return None, issues
    try:
        raw = yield from escalation_steps(caller, role, ask, schema=schema, method=method)
    except Exception:  # noqa: BLE001 - a provider failure of the escalation: the contract's failure stands
        return None, issues
    return _validate(schema, raw)


def contract_steps(
    contract: str,
    schema: type[T],
    messages: Sequence[BaseMessage],
    models: ModelSet,
    *,
    mode: str = "direct",
    method: str | None = None,
) -> Steps:
    """The contract algorithm as a generator of requests; returns a ``Contracted``."""
    caller = _caller(contract, models, messages)
    value = yield from _metered(caller, _structured(caller, schema, messages, mode, method or models.structured_method))
    return Contracted(value=value, metrics=caller.meter.snapshot())


def text_steps(contract: str, messages: Sequence[BaseMessage], models: ModelSet) -> Steps:
    """The free-text algorithm as a generator of requests; returns a ``TextResult``."""
    caller = _caller(contract, models, messages)
    message = yield from _metered(caller, _draft(caller, messages))
    return TextResult(text=message_text(message), metrics=caller.meter.snapshot())


def tool_turn_steps(
    contract: str,
    messages: Sequence[BaseMessage],
    models: ModelSet,
    tools: Sequence[Any],
    options: Mapping[str, Any] | None = None,
    *,
    more_room: bool = False,
) -> Steps:
    """One native tool-calling turn as a generator of requests; returns a ``ToolTurn``."""
    caller = _caller(contract, models, messages)
    message = yield from caller.steps("business_calls", caller.role, messages, tools=tools, options=options,
                                      more_room=more_room)
    if not isinstance(message, AIMessage):
        message = AIMessage(content=message_text(message))
    return ToolTurn(message=message, metrics=caller.meter.snapshot())


def invoke_contract(contract: str, schema: type[T], messages: Sequence[BaseMessage], models: ModelSet, *,
                    mode: str = "direct", method: str | None = None) -> Contracted[T]:
    """Call the contract's role model and return validated output (see the module docstring)."""
    return drive(contract_steps(contract, schema, messages, models, mode=mode, method=method))


async def ainvoke_contract(contract: str, schema: type[T], messages: Sequence[BaseMessage], models: ModelSet, *,
                           mode: str = "direct", method: str | None = None) -> Contracted[T]:
    """:func:`invoke_contract` on the model's ``ainvoke`` (the same steps, the same metrics)."""
    return await adrive(contract_steps(contract, schema, messages, models, mode=mode, method=method))


def invoke_text(contract: str, messages: Sequence[BaseMessage], models: ModelSet) -> TextResult:
    """A free-text call (e.g. a task-list draft); the caller validates the text by rules."""
    return drive(text_steps(contract, messages, models))


async def ainvoke_text(contract: str, messages: Sequence[BaseMessage], models: ModelSet) -> TextResult:
    """:func:`invoke_text` on the model's ``ainvoke``."""
    return await adrive(text_steps(contract, messages, models))


def invoke_tool_turn(contract: str, messages: Sequence[BaseMessage], models: ModelSet, tools: Sequence[Any],
                     options: Mapping[str, Any] | None = None, *, more_room: bool = False) -> ToolTurn:
    """One native tool-calling turn (the manager's); policy checks happen in the graph, not here.

    ``options`` go to ``bind_tools`` as they are (``tool_choice``, ``parallel_tool_calls``; see
    ``reins.policies.models.tool_choice``)."""
    return drive(tool_turn_steps(contract, messages, models, tools, options, more_room=more_room))


async def ainvoke_tool_turn(contract: str, messages: Sequence[BaseMessage], models: ModelSet, tools: Sequence[Any],
                            options: Mapping[str, Any] | None = None, *, more_room: bool = False) -> ToolTurn:
    """:func:`invoke_tool_turn` on the model's ``ainvoke``."""
    return await adrive(tool_turn_steps(contract, messages, models, tools, options, more_room=more_room))

"""Contract acceptance re-decided (pure): a recorded contract output validated again by its strict
schema, under the current limits or ones changed with ``--set contract.<contract>.<field>=N``.

A run keeps the outputs the runtime accepted (the delivery plan and tasks, their revisions, the
reviews, the supervisor's pre-decision). Replay validates each again exactly as the contract layer
would (JSON limits, then the strict schema) and labels the result: ``accepted`` or ``repaired`` (as
recorded: accepted on the first answer or after the one repair), or ``rejected (<code> at <path>)``.
A limit change is applied to the schema's own declaration (a list's or a text's ``max_length``), so the bound a
replay checks is the one the runtime would declare; nothing restates a number.

A stored output may be compact (``elided``): a long string kept only as its length and a short
digest. Every check a contract makes of such a string is a length bound or an equality with another
string (a key and the dependencies naming it), so ``restored`` (as many characters, equal exactly
when the originals were) validates as the original did.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, get_args

from annotated_types import MaxLen
from pydantic import BaseModel, StringConstraints, ValidationError, create_model

from reins.policies.text.json_limits import JsonLimitError, check_json_value
from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS, Reviewers
from reins.schemas.assistant import AssistantAnswer
from reins.schemas.delivery import DeliveryPlan, DeliveryTasks, pre_decision_schema
from reins.schemas.tasklist import PlanningDecision, TasklistStrategy

ACCEPTED, REPAIRED = "accepted", "repaired"  # what the runtime recorded: the first answer, or the repair's
PRE_DECISION = "delivery.supervisor_pre"
# The contracts whose accepted output a run keeps, beside the reviewers' (one per reviewer spec).
WORK_SCHEMAS: Mapping[str, type[BaseModel]] = {
    "delivery.plan": DeliveryPlan,
    "delivery.plan_revision": DeliveryPlan,
    "delivery.tasks": DeliveryTasks,
    "delivery.task_revision": DeliveryTasks,
    "tasklist.planning_decision": PlanningDecision,
    "tasklist.strategy": TasklistStrategy,
    "assistant.answer": AssistantAnswer,
}
ELIDED_OVER = 40  # characters: a longer string is kept in a compact record as its length only
_CHARS, _DIGEST = "chars", "id"

Limit = tuple[str, str, int]  # (contract, top-level field, its max_length)


def recorded_label(metrics: Mapping[str, Any] | None, contract: str) -> str:
    """How the runtime accepted a kept output, from the run's contract metrics: on the first answer,
    or after the one repair."""
    repairs = ((metrics or {}).get(contract) or {}).get("repair_calls") or 0
    return REPAIRED if int(repairs) > 0 else ACCEPTED


def schema_for(contract: str, reviewers: Reviewers = DEFAULT_REVIEWERS) -> type[BaseModel] | None:
    """The strict schema the runtime validates ``contract`` with, for this reviewer table."""
    if contract == PRE_DECISION:
        return pre_decision_schema(tuple((spec.role, spec.focus) for spec in reviewers))
    if contract in WORK_SCHEMAS:
        return WORK_SCHEMAS[contract]
    return next((spec.schema for spec in (*reviewers, *DEFAULT_REVIEWERS) if spec.contract == contract), None)


def declared_bound(contract: str, field: str) -> int | None:
    """The ``max_length`` the contract's schema declares for a top-level field (None: no such bound)."""
    schema = schema_for(contract)
    info = schema.model_fields.get(field) if schema else None
    return next((item.max_length for item in (info.metadata if info else ()) if _is_bound(item)), None)


def _is_bound(item: Any) -> bool:
    """A length bound as pydantic keeps it: a list's ``MaxLen``, a bounded text's ``StringConstraints``."""
    return isinstance(item, MaxLen) or (isinstance(item, StringConstraints) and item.max_length is not None)


def _rebound(item: Any, bound: int) -> Any:
    if isinstance(item, MaxLen):
        return MaxLen(bound)
    return dataclasses.replace(item, max_length=bound) if _is_bound(item) else item


def bounded_fields(contract: str) -> list[str]:
    schema = schema_for(contract)
    return sorted(name for name in (schema.model_fields if schema else ()) if declared_bound(contract, name) is not None)


def replay_contracts() -> list[str]:
    """The contracts a ``--set contract.…`` change may name."""
    return sorted({PRE_DECISION, *WORK_SCHEMAS, *(spec.contract for spec in DEFAULT_REVIEWERS)})


@lru_cache(maxsize=64)
def limited(schema: type[BaseModel], bounds: tuple[tuple[str, int], ...]) -> type[BaseModel]:
    """``schema`` with the given top-level fields' ``max_length`` changed (its validators kept)."""
    if not bounds:
        return schema
    fields: dict[str, Any] = {}
    for name, bound in bounds:
        info = schema.model_fields[name]
        changed = copy.copy(info)  # the declaration itself, with one bound replaced
        changed.metadata = [_rebound(item, bound) for item in info.metadata]
        fields[name] = (info.annotation, changed)
    return create_model(schema.__name__, __base__=schema, __doc__=schema.__doc__, **fields)


def _bounds(schema: type[BaseModel], limits: Iterable[Limit], reviewers: Reviewers) -> tuple[tuple[str, int], ...]:
    """The changes that touch ``schema``: a limit is the schema's, so it binds every contract sharing it."""
    changed = {field: bound for contract, field, bound in limits if schema_for(contract, reviewers) is schema}
    return tuple(sorted(changed.items()))


def revalidate(contract: str, value: Any, recorded: str, limits: Iterable[Limit] = (),
               reviewers: Reviewers = DEFAULT_REVIEWERS) -> str:
    """The label of ``value`` under the current schema and ``limits``: ``recorded`` when it is
    accepted again, ``rejected (<code> at <path>)`` otherwise. A limit on a schema also binds it
    where it is a field of this one (a planning decision's strategy)."""
    schema = schema_for(contract, reviewers)
    if schema is None:
        return "rejected (unknown_contract at $)"
    limits, value = tuple(limits), restored(value)
    try:
        check_json_value(value)
    except JsonLimitError as error:
        return f"rejected ({error.code} at $)"
    issue = _first_issue(limited(schema, _bounds(schema, limits, reviewers)), value)
    for name, inner in _nested(schema, limits, reviewers):
        if issue is None and isinstance(value, Mapping) and value.get(name) is not None:
            issue = _first_issue(limited(inner, _bounds(inner, limits, reviewers)), value[name], (name,))
    return recorded if issue is None else f"rejected ({issue[1]} at {issue[0]})"


def _first_issue(schema: type[BaseModel], value: Any, under: tuple[str, ...] = ()) -> tuple[str, str] | None:
    """The first ``(path, code)`` the schema finds in ``value`` (its paths under ``under``), or None."""
    try:
        schema.model_validate(value)
    except ValidationError as error:
        first = error.errors()[0]
        return ".".join(str(part) for part in (*under, *first.get("loc", ()))) or "$", str(first.get("type", "invalid"))
    return None


def _nested(schema: type[BaseModel], limits: tuple[Limit, ...], reviewers: Reviewers) -> list[tuple[str, type[BaseModel]]]:
    """The top-level fields of ``schema`` typed by another schema some limit changes."""
    changed = {schema_for(contract, reviewers) for contract, _, _ in limits} - {schema, None}
    return [(name, inner) for name, info in schema.model_fields.items() for inner in changed
            if info.annotation is inner or inner in get_args(info.annotation)]


def after_rejection(contract: str, recorded: str) -> str:
    """What a newly rejected output would have led to (replay makes no call)."""
    if recorded == ACCEPTED:
        return f"needs a new model call: the repair of {contract}"
    return (f"needs a new model call: the repair of {contract} was spent, so the contract fails "
            "unless its role's escalation model answers")


def elided(value: Any) -> Any:
    """``value`` with every string longer than ``ELIDED_OVER`` kept as its length and digest."""
    if isinstance(value, str):
        if len(value) <= ELIDED_OVER:
            return value
        return {_CHARS: len(value), _DIGEST: hashlib.blake2s(value.encode(), digest_size=4).hexdigest()}
    if isinstance(value, list):
        return [elided(item) for item in value]
    if isinstance(value, dict):
        return {key: elided(item) for key, item in value.items()}
    return value


def restored(value: Any) -> Any:
    """An elided value with each kept string made one of that many characters again (its digest
    first, so two strings are equal exactly when their originals were)."""
    if isinstance(value, dict):
        if set(value) == {_CHARS, _DIGEST} and isinstance(value[_CHARS], int) and isinstance(value[_DIGEST], str):
            return (value[_DIGEST] + "x" * value[_CHARS])[: value[_CHARS]]
        return {key: restored(item) for key, item in value.items()}
    if isinstance(value, list):
        return [restored(item) for item in value]
    return value

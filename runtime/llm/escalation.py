"""The escalation call: one request of a role sent once more, to the role's escalation model.

``reins.policies.models.escalation`` decides when; this module makes the call. The escalated request is the same
request — the same messages, schema or tools and options — on a model set in which the role is
served by its escalation model alone (no fallbacks, no further escalation), so the role's policy
(temperature, output bound, timeout, retries) applies as to any call of the role, and the answer goes
through the same checks. The call is counted as ``escalations`` and under the model that answered.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from langchain_core.messages import BaseMessage

from reins.runtime.execution.driving import Steps
from reins.runtime.llm.model_calls import _Caller
from reins.runtime.llm.models import ModelSet

ESCALATIONS = "escalations"  # the metric counting escalated calls

# id(model set) → role → its escalated set; dropped with the model set (a ModelSet is not hashable).
_ESCALATED: dict[int, dict[str, ModelSet]] = {}


def escalation_label(models: ModelSet, role: str) -> str | None:
    """The label of the role's escalation model, or None when the role has none."""
    chosen = models.escalation(role)
    return chosen[0] if chosen else None


def escalated(models: ModelSet, role: str) -> ModelSet:
    """``models`` with ``role`` served by its escalation model alone (the same set per role, so its
    bound runnables are built once)."""
    if id(models) not in _ESCALATED:
        weakref.finalize(models, _ESCALATED.pop, id(models), None)
    per_role = _ESCALATED.setdefault(id(models), {})
    if role not in per_role:
        label, model = models.escalation(role)
        per_role[role] = replace(
            models, models={**models.models, role: model}, labels={**models.labels, role: label},
            fallbacks={**models.fallbacks, role: ()},
            escalations={name: value for name, value in models.escalations.items() if name != role},
        )
    return per_role[role]


def escalation_steps(caller: _Caller, role: str, messages: Sequence[BaseMessage], **request: Any) -> Steps:
    """The request once on ``role``'s escalation model, metered on ``caller``'s meter; returns what
    the model answered (the caller checks it as it checks any answer)."""
    meter = caller.meter
    meter.values.setdefault(ESCALATIONS, 0)
    escalation = _Caller(caller.contract, role, escalated(caller.models, role))
    escalation.meter, escalation.inputs = meter, caller.inputs
    return (yield from escalation.steps(ESCALATIONS, role, messages, **request))

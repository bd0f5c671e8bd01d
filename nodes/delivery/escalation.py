"""A manager turn the primary model keeps getting refused goes once to the escalation model.

When the delegation policy refuses a turn again after its re-ask budget is spent, and the manager
role has an escalation model (``REINS_MODEL_ESCALATE``), ``escalate_refused_turn`` records the
refusal as escalated and sends the run back to ``manager``, which asks the same turn — the same
prompt, tools and options, without the re-ask's hotter temperature — of the escalation model
(``escalating``). Its proposal meets the same delegation policy; a refusal of it fails closed, as the
turn is never escalated twice (``reins.policies.models.escalation``).
"""

from __future__ import annotations

from langgraph.types import Command

from reins.policies.models.escalation import escalation_allowed
from reins.runtime.llm.escalation import escalated, escalation_label
from reins.runtime.llm.models import ModelSet
from reins.nodes.delivery.common import trace
from reins.nodes.delivery.routing import refusals_in_turn
from reins.nodes.delivery.state import DeliveryState, ManagerRefusal

ROLE = "manager"


def _turn_records(state: DeliveryState) -> list[ManagerRefusal]:
    executed = len(state.get("delegated", []))
    return [record for record in state.get("manager_refusals", []) if record["executed"] == executed]


def escalating(state: DeliveryState) -> bool:
    """Whether the manager turn now open is the escalated one."""
    records = _turn_records(state)
    return bool(records and records[-1].get("escalated"))


def turn_models(state: DeliveryState, models: ModelSet) -> ModelSet:
    """The models the open manager turn is asked of: the escalation model on the escalated turn."""
    return escalated(models, ROLE) if escalating(state) else models


def escalate_refused_turn(state: DeliveryState, record: ManagerRefusal, models: ModelSet,
                          max_reasks: int) -> Command | None:
    """The refused turn sent to the escalation model, or None when the policy does not allow it."""
    label = escalation_label(models, ROLE)
    already = any(r.get("escalated") for r in _turn_records(state)) or escalating(state)
    if not escalation_allowed(configured=label is not None, failed_attempts=refusals_in_turn(state) + 1,
                              allowed_attempts=1 + max_reasks, escalated=already):
        return None
    summary = f"turn {record['turn']} refused ({record['code']}) after its re-ask; escalated to {label}"
    return Command(update={"manager_refusals": [{**record, "escalated": True}],
                           "trace": trace("manager-refused", summary)}, goto="manager")

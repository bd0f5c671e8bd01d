"""``manager_refused``: records a manager turn the delegation policy refused, then either asks the
same turn again or fails closed.

Nothing of the refusal goes back to the model: the record lives in state, the trace and the metrics
only, and the next manager turn is built from exactly the same inputs as the refused one. The
refused call itself never runs. Whether the turn is asked again is the policy's re-ask budget
(``reask_allowed``); a spent budget stops the run with the violation the manager recorded.
"""

from __future__ import annotations

from langgraph.runtime import Runtime
from langgraph.types import Command

from policies.delegation import reask_allowed
from nodes.delivery.common import DeliveryDeps, trace
from nodes.delivery.context import DeliveryContext
from nodes.delivery.escalation import escalate_refused_turn
from nodes.delivery.routing import refusals_in_turn, stopped_by_policy
from nodes.delivery.state import AfterRefusal, DeliveryState


def manager_refused(state: DeliveryState, runtime: Runtime[DeliveryContext], *,
                    deps: DeliveryDeps) -> Command[AfterRefusal]:
    violation = state["delegation"]["violation"]  # the manager routes here only with one
    code = violation["code"]
    turn = state.get("manager_turns", 0)
    count = refusals_in_turn(state) + 1  # this refusal included
    reasked = reask_allowed(count, deps.policy)
    record = {"turn": turn, "executed": len(state.get("delegated", [])), "code": code, "reasked": reasked}
    if reasked:
        summary = f"turn {turn} refused ({code}); asked again unchanged ({count} of {deps.policy.max_manager_reasks})"
        return Command(update={"manager_refusals": [record], "trace": trace("manager-refused", summary)},
                       goto="manager")
    escalation = escalate_refused_turn(state, record, deps.models_for(runtime), deps.policy.max_manager_reasks)
    if escalation is not None:
        return escalation
    summary = f"turn {turn} refused ({code}); re-ask budget spent"
    return Command(
        update={"manager_refusals": [record], "trace": trace("manager-refused", summary),
                **stopped_by_policy("delegation", violation)},
        goto="fail_closed",
    )

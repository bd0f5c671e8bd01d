"""``manager_refused``: records a manager turn the delegation policy refused, before the run either
asks the same turn again or fails closed.

Nothing of the refusal goes back to the model: the record lives in state, the trace and the metrics
only, and the next manager turn is built from exactly the same inputs as the refused one. The
refused call itself never runs. Whether the turn is asked again is the policy's re-ask budget
(``reask_allowed``), applied in the edge after this node.
"""

from __future__ import annotations

from typing import Any

from policies.delegation import reask_allowed
from nodes.delivery.common import DeliveryDeps, trace
from nodes.delivery.routing import delegation_violation, refusals_in_turn
from nodes.delivery.state import DeliveryState


def make_manager_refused(deps: DeliveryDeps):
    def manager_refused(state: DeliveryState) -> dict[str, Any]:
        violation = delegation_violation(state, deps.policy)
        code = violation.code if violation else "unexpected_route"
        turn = state.get("manager_turns", 0)
        count = refusals_in_turn(state) + 1  # this refusal included
        reasked = reask_allowed(count, deps.policy)
        record = {"turn": turn, "executed": len(state.get("delegated", [])), "code": code, "reasked": reasked}
        if reasked:
            summary = f"turn {turn} refused ({code}); asked again unchanged ({count} of {deps.policy.max_manager_reasks})"
        else:
            summary = f"turn {turn} refused ({code}); re-ask budget spent"
        return {"manager_refusals": [record], "trace": trace("manager-refused", summary)}

    return manager_refused

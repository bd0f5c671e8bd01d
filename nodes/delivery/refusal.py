"""``manager_refused``: records a manager turn the delegation policy refused, then either asks the
same turn again or fails closed.

The record names the refusal's reason as ``{path, code}`` pairs (``reins.policies.models.manager_reask``): the
re-ask tells the model exactly these (never its refused answer), at a higher temperature and, after a
cut-off, with more room; the trace says what changed. The refused call itself never runs. Whether the
turn is asked again is the policy's re-ask budget (``reask_allowed``); a spent budget stops the run
with the violation the manager recorded.
"""

from __future__ import annotations

from langgraph.runtime import Runtime
from langgraph.types import Command

from reins.policies.delivery.delegation import reask_allowed
from reins.policies.audit.guard_coverage import declare
from reins.policies.models.manager_reask import describe_issues, refusal_issues
from reins.policies.models.second_attempt import reask_temperature, repair_output_bound
from reins.policies.text.truncation import TRUNCATED
from reins.runtime.llm.models import RolePolicy
from reins.nodes.delivery.common import DeliveryDeps, trace
from reins.nodes.delivery.context import DeliveryContext
from reins.nodes.delivery.escalation import escalate_refused_turn
from reins.nodes.delivery.routing import refusals_in_turn, stopped_by_policy
from reins.nodes.delivery.state import AfterRefusal, DeliveryState


def reask_change(code: str, issues: list[dict[str, str]], policy: RolePolicy) -> str:
    """What the re-ask changes, for the trace: the reason told, the temperature and the output bound."""
    temperature = reask_temperature(policy.temperature, policy.reask_temperature_step)
    bound = policy.max_tokens
    if code == TRUNCATED:
        bound = repair_output_bound(policy.max_tokens, policy.max_tokens_limit)
    return (f"asked again with the reason [{describe_issues(issues)}], temperature {policy.temperature:g} → "
            f"{temperature:g}, output bound {policy.max_tokens} → {bound}")


@declare(guards=("delegation",))
def manager_refused(state: DeliveryState, runtime: Runtime[DeliveryContext], *,
                    deps: DeliveryDeps) -> Command[AfterRefusal]:
    violation = state["delegation"]["violation"]  # the manager routes here only with one
    code = violation["code"]
    turn = state.get("manager_turns", 0)
    count = refusals_in_turn(state) + 1  # this refusal included
    reasked = reask_allowed(count, deps.policy)
    issues = refusal_issues(code, state.get("pending_calls") or [])
    record = {"turn": turn, "executed": len(state.get("delegated", [])), "code": code, "reasked": reasked,
              "issues": issues}
    if reasked:
        change = reask_change(code, issues, deps.models_for(runtime).policy("manager"))
        summary = f"turn {turn} refused ({code}); {change} ({count} of {deps.policy.max_manager_reasks})"
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

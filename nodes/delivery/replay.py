"""Counterfactual replay: a recorded delivery run re-decided by another policy, without a model call.

Every decision of the delivery chain is a pure function of what the models proposed, and the
checkpointer keeps each step's state. ``replay_delivery`` walks a thread's checkpoints in order and,
at every recorded decision, asks the given policy again with exactly the state the run had then:

- each manager turn's proposal → the delegation verdict (``delegation``);
- each refused turn → ask again or fail closed (``reask``);
- the review outcomes → the review bundle's status (``review_status``);
- the bundle → the post-review decision's revision targets (``revision``);
- each contract output the run kept (pre-decision, plan, tasks, reviews, revisions) → accepted
  again by its strict schema and limits, or rejected (``contract:<name>``,
  ``reins.nodes.delivery.replay_contracts``), where the run made it.

The first decision that comes out differently is where the run would have gone another way. What
follows it depended on that decision, so replay stops there, and says whether going on would have
needed a new model call (a worker, a reviewer or a re-asked turn) or only rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from reins.nodes.delivery.replay_contracts import contract_outputs
from reins.nodes.delivery.routing import delegation_verdict, refusals_in_turn
from reins.policies.audit.contract_replay import after_rejection, revalidate
from reins.policies.delivery.delegation import DelegationPolicy, for_reviewers, reask_allowed
from reins.policies.audit.replay import DEFAULT_OVERRIDES, Decision, Overrides, Replay
from reins.policies.delivery.review_bundle import build_review_bundle
from reins.policies.delivery.revision import derive_post_review_decision
from reins.policies.delivery.reviewers import Reviewers, ReviewerSpec, reviewer_table

__all__ = ["Decision", "Replay", "replay_delivery", "replay_values"]


def _label(verdict: Mapping[str, Any]) -> str:
    violation = verdict.get("violation")
    return f"{verdict['next']}" + (f" ({violation['code']})" if violation else "")


def _turn_state(proposal: Mapping[str, Any], refusals: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The state the policy read at a recorded turn: what had run, which artifacts existed and the
    refusals of the same turn before it."""
    executed = len(proposal["executed"])
    earlier = [r for r in refusals if r["executed"] == executed and r["turn"] < proposal["turn"]]
    return {"delegated": list(proposal["executed"]), "manager_refusals": earlier,
            **{kind: True for kind in proposal["artifacts"]}}


def replay_values(values: Mapping[str, Any], thread_id: str = "", *, overrides: Overrides = DEFAULT_OVERRIDES,
                  policy: DelegationPolicy | None = None,
                  reviewers: Reviewers | Iterable[ReviewerSpec] | None = None) -> Replay:
    """Re-decide a finished (or paused) delivery run from its recorded state alone: with
    ``overrides`` (``--set``), or a given delegation ``policy`` and reviewer table."""
    table = reviewer_table(reviewers if reviewers is not None else overrides.reviewers)
    policy = for_reviewers(policy or overrides.delegation, table)
    result = Replay(thread_id, recorded_status=values.get("run_status"))
    refusals = list(values.get("manager_refusals") or [])
    decisions: list[tuple[Decision, dict[str, Any]]] = []
    outputs = values["contract_outputs"] if "contract_outputs" in values else contract_outputs(values)

    def contracts_at(*places: str | int | None) -> None:
        for output in (o for o in outputs if o["at"] in places):
            replayed = revalidate(output["contract"], output["value"], output["recorded"], overrides.contracts, table)
            decisions.append((Decision(len(decisions), f"contract:{output['contract']}", output["recorded"], replayed), {}))

    contracts_at("start")
    turns: set[int] = set()
    for proposal in values.get("manager_proposals") or []:
        state = _turn_state(proposal, refusals)
        replayed = delegation_verdict(proposal["calls"], state, policy, cut_off=proposal["cut_off"])
        decisions.append((Decision(proposal["turn"], "delegation", _label(proposal["verdict"]), _label(replayed)),
                          state))
        for refusal in (r for r in refusals if r["turn"] == proposal["turn"]):
            earlier = [r for r in refusals if r["executed"] == refusal["executed"] and r["turn"] <= refusal["turn"]]
            again = reask_allowed(len(earlier), policy)
            # a spent re-ask may go once to the escalation model: configuration, not the policy's call
            spent = "manager (escalated)" if refusal.get("escalated") else "fail_closed"
            decisions.append((Decision(refusal["turn"], "reask", "manager" if refusal["reasked"] else spent,
                                       "manager" if again else spent), {**state, "manager_refusals": earlier[:-1]}))
        turns.add(proposal["turn"])
        contracts_at(proposal["turn"])
    # a worker whose turn the record does not hold: after the turns
    contracts_at(None, *({o["at"] for o in outputs if isinstance(o["at"], int)} - turns))
    contracts_at("reviews")
    bundle = values.get("review_bundle")
    if bundle and values.get("review_outcomes") is not None:
        status = build_review_bundle(values["review_outcomes"], table)["status"]
        decisions.append((Decision(len(decisions), "review_status", bundle["status"], status), {}))
    decision = values.get("post_review_decision")
    if bundle and decision:
        # The targets come from the findings alone (the model's guidance only words the requests).
        again = derive_post_review_decision(bundle["status"], bundle["findings"])
        decisions.append((Decision(len(decisions), "revision", _targets(decision), _targets(again)), {}))
    contracts_at("revision")
    for decision_made, state in decisions:
        result.decisions.append(decision_made)
        if decision_made.flipped:
            result.replayed_status, result.stopped = _after_flip(decision_made, state, policy)
            return result
    result.replayed_status = result.recorded_status
    return result


def _targets(decision: Mapping[str, Any]) -> str:
    return f"{decision['action']}: {','.join(decision.get('revision_targets') or [])}"


def replay_delivery(graph: Any, thread_id: str, **options: Any) -> Replay:
    """Re-decide the run stored under ``thread_id`` (``graph`` compiled with its checkpointer)."""
    snapshot = graph.get_state({"configurable": {"thread_id": thread_id}})
    return replay_values(snapshot.values or {}, thread_id, **options)


def _went(replayed: str) -> str:
    return replayed.split(" ", 1)[0]


def _after_flip(decision: Decision, state: Mapping[str, Any], policy: DelegationPolicy) -> tuple[str | None, str]:
    """Where the run goes from a flipped decision: a status rules alone give, or the new model call
    it would need (replay makes none)."""
    if decision.kind.startswith("contract:"):
        return None, after_rejection(decision.kind.removeprefix("contract:"), decision.recorded)
    target = _went(decision.replayed)
    if decision.kind == "delegation" and target == "manager_refused":
        if reask_allowed(refusals_in_turn(dict(state)) + 1, policy):
            return None, "needs a new model call: the refused turn would be asked again"
        return "failed", "the refused turn fails closed: the re-ask budget is spent"
    if decision.kind == "reask" and target == "fail_closed":
        return "failed", "the refused turn fails closed: the re-ask budget is spent"
    if decision.kind == "review_status":
        return None, f"the reviews now give {decision.replayed}: the post-review steps would need new model calls"
    return None, f"needs a new model call: {target}"

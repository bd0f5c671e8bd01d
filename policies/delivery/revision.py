"""The post-review decision and the status after a revision (pure).

The runtime, not the supervisor, decides whether to revise and what: targets come only from
validated ``issue`` + ``required`` findings. The supervisor's optional guidance may add wording to
a request for a target the findings already chose; it can never add, drop or reorder a target.
One revision at most, plan before tasks, then ``needs_review`` — never pass, never a second review.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from reins.policies.delivery.review_bundle import is_actionable
from reins.schemas.delivery import WORK_ARTIFACTS

MAX_REQUEST_ITEMS = 20


def post_review_allowed(bundle: Mapping[str, Any]) -> bool:
    """Post-review guidance (and so a revision) only when every review completed and the run is
    neither failed nor blocked; a partial review set ends at needs_review without a revision."""
    complete = bool(bundle.get("coverage")) and all(o == "completed" for o in bundle["coverage"].values())
    return complete and bundle.get("status") in ("pass", "needs_changes")


def derive_post_review_decision(
    status: str, findings: Sequence[Mapping[str, Any]], guidance: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``finalize`` | ``revise`` (requests per target, plan first) | ``blocked``."""
    if status in ("blocked", "failed"):
        return {"action": "blocked" if status == "blocked" else "finalize", "requests": [], "revision_targets": []}
    actionable = [f for f in findings if is_actionable(f)]
    if status != "needs_changes" or not actionable:
        return {"action": "finalize", "requests": [], "revision_targets": []}
    advice = {r["target"]: r for r in (guidance or {}).get("recommendations", [])}
    requests = []
    for target in WORK_ARTIFACTS:  # tasks are aligned to the (revised) plan
        chosen = [f for f in actionable if target in f["target_artifacts"]]
        if not chosen:
            continue  # guidance for a target no finding chose is ignored
        actions = [f["suggested_action"] for f in chosen]
        recommendation = advice.get(target)
        if recommendation:
            actions += list(recommendation["required_actions"])
        summary = (
            recommendation["summary"]
            if recommendation
            else f"Address {len(chosen)} required finding(s) in the {target}."
        )
        requests.append(
            {
                "request_key": f"runtime-{target}-revision",
                "targets": [target],
                "source_finding_ids": [f["finding_id"] for f in chosen][:MAX_REQUEST_ITEMS],
                "required_actions": list(dict.fromkeys(actions))[:MAX_REQUEST_ITEMS],
                "summary": summary,
                "guidance_used": bool(recommendation),
            }
        )
    return {"action": "revise", "requests": requests, "revision_targets": [r["targets"][0] for r in requests]}


def status_after_revision(status: str, outcomes: Sequence[Mapping[str, Any]]) -> str:
    """After any successful revision the run needs a person (no re-review, so never pass)."""
    if any(o.get("status") == "revised" for o in outcomes):
        return "needs_review"
    return status


def next_steps(status: str, revised: bool) -> list[str]:
    """What the report tells a person to do next, per status."""
    if revised:
        return ["Confirm the revised plan and tasks by hand: the revision was not re-reviewed."]
    return {
        "pass": ["Proceed with implementation following the tasks in order."],
        "clarification_required": ["Answer the open questions and submit the requirement again."],
        "needs_changes": ["Address the required findings, then run the delivery chain again."],
        "needs_review": ["Have a person review the parts whose automated review is missing."],
        "blocked": ["Resolve the blockers listed above before any implementation starts."],
        "failed": ["Check the failure reason, then run the delivery chain again."],
    }[status]

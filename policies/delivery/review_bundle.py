"""Rule-first synthesis of the reviews (pure): coverage, merged findings, conflicts, status.

Input is structured data only — validated review contracts and reviewer outcomes — never markdown.
Every rule reads the reviewer table (``policies/delivery/reviewers.py``; the default three unless a table is
given): each reviewer's verdict means ok, concern or blocker. ``resolve_run_status`` is the status
matrix; the priority chain is fixed: 0 completed → failed; a blocker verdict → blocked; a review not
completed → needs_review; a concern that asks for a person (risk ``high``, boundary
``needs_review``) → needs_review; a concern that asks for changes (general ``needs_changes`` or
``misaligned``) or a required issue → needs_changes; else pass. ``status_reasons`` names why a run
did not pass, for the report.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, get_args

from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS, ConcernStatus, Reviewers
from reins.schemas.delivery import SEVERITIES

SEVERITY_RANK: Mapping[str, int] = {severity: rank for rank, severity in enumerate(SEVERITIES)}
Reviews = Mapping[str, Mapping[str, Any]]


def coverage_of(outcomes: Sequence[Mapping[str, Any]], reviewers: Reviewers = DEFAULT_REVIEWERS) -> dict[str, str]:
    """Outcome per required role; a role no reviewer reported for is ``missing``."""
    coverage = dict.fromkeys(reviewers.roles, "missing")
    for outcome in outcomes:
        if outcome.get("role") in coverage:
            coverage[outcome["role"]] = outcome["outcome"]
    return coverage


def completed_reviews(outcomes: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    return {o["role"]: o["review"] for o in outcomes if o.get("outcome") == "completed" and o.get("review")}


def normalise(description: str) -> str:
    """Dedupe key text: lower case, punctuation dropped, whitespace collapsed."""
    return " ".join(re.sub(r"[^\w\s]", " ", description.lower()).split())


def _rank_key(finding: Mapping[str, Any]) -> tuple[int, int, int, int]:
    return (
        SEVERITY_RANK[finding["severity"]],
        0 if finding["finding_type"] == "issue" else 1,
        0 if finding["requirement"] == "required" else 1,
        finding["_order"],
    )


def merge_findings(reviews: Reviews, reviewers: Reviewers = DEFAULT_REVIEWERS) -> list[dict[str, Any]]:
    """Findings of all completed reviews: deduplicated (same targets + normalised description) with
    every source kept, the strongest classification of the duplicates kept, ranked by severity, then
    numbered ``F01``… in rank order."""
    merged: dict[tuple[tuple[str, ...], str], dict[str, Any]] = {}
    order = 0
    for role in reviewers.roles:
        for finding in (reviews.get(role) or {}).get("findings", []):
            key = (tuple(sorted(finding["target_artifacts"])), normalise(finding["description"]))
            entry = merged.get(key)
            if entry is None:
                merged[key] = {
                    "description": finding["description"],
                    "evidence": list(finding["evidence"])[:10],
                    "finding_type": finding["finding_type"],
                    "requirement": finding["requirement"],
                    "severity": finding["severity"],
                    "suggested_action": finding["suggested_action"],
                    "target_artifacts": sorted(finding["target_artifacts"]),
                    "sources": [role],
                    "source_classifications": [_classification(role, finding)],
                    "_order": order,
                }
                order += 1
                continue
            entry["sources"].append(role)
            entry["source_classifications"].append(_classification(role, finding))
            entry["evidence"] = list(dict.fromkeys([*entry["evidence"], *finding["evidence"]]))[:10]
            if SEVERITY_RANK[finding["severity"]] < SEVERITY_RANK[entry["severity"]]:
                entry["severity"] = finding["severity"]
            if finding["finding_type"] == "issue":
                entry["finding_type"] = "issue"
            if finding["requirement"] == "required":
                entry["requirement"] = "required"
    ranked = sorted(merged.values(), key=_rank_key)
    result = []
    for number, entry in enumerate(ranked, start=1):
        entry.pop("_order")
        result.append({"finding_id": f"F{number:02d}", **entry})
    return result


def _classification(role: str, finding: Mapping[str, Any]) -> dict[str, str]:
    return {
        "role": role,
        "severity": finding["severity"],
        "finding_type": finding["finding_type"],
        "requirement": finding["requirement"],
    }


def _verdict_levels(reviews: Reviews, reviewers: Reviewers) -> dict[str, str]:
    return {spec.role: spec.verdict_level(reviews[spec.role]) for spec in reviewers if spec.role in reviews}


def find_conflicts(
    reviews: Reviews, findings: Sequence[Mapping[str, Any]], reviewers: Reviewers = DEFAULT_REVIEWERS
) -> list[dict]:
    """Disagreements worth a person's attention: one reviewer blocks while another sees no problem;
    reviewers raising the same finding classify it differently (required vs advisory, or severities
    two or more levels apart)."""
    conflicts: list[dict[str, Any]] = []
    levels = _verdict_levels(reviews, reviewers)
    blockers = [spec for spec in reviewers if levels.get(spec.role) == "blocker"]
    clear = [spec for spec in reviewers if levels.get(spec.role) == "ok"]
    for blocker in blockers:
        for other in clear:
            conflicts.append(
                {
                    "kind": "verdict",
                    "roles": [blocker.role, other.role],
                    "detail": f"{blocker.role} review blocks ({blocker.verdict(reviews[blocker.role])}) while "
                    f"{other.role} review reports {other.verdict(reviews[other.role])}; the block stands.",
                }
            )
    for finding in findings:
        classes = finding["source_classifications"]
        if len(classes) < 2:
            continue
        requirements = {c["requirement"] for c in classes}
        ranks = [SEVERITY_RANK[c["severity"]] for c in classes]
        if len(requirements) > 1 or max(ranks) - min(ranks) >= 2:
            conflicts.append(
                {
                    "kind": "finding",
                    "roles": [c["role"] for c in classes],
                    "finding_id": finding["finding_id"],
                    "detail": "reviewers classify this finding differently; the stricter classification is kept.",
                }
            )
    return conflicts


def blocking_reviewers(reviews: Reviews, reviewers: Reviewers = DEFAULT_REVIEWERS) -> list[str]:
    """Roles whose completed review has a blocker verdict, in table order."""
    return [role for role, level in _verdict_levels(reviews, reviewers).items() if level == "blocker"]


def has_hard_blocker(reviews: Reviews, reviewers: Reviewers = DEFAULT_REVIEWERS) -> bool:
    return bool(blocking_reviewers(reviews, reviewers))


def is_actionable(finding: Mapping[str, Any]) -> bool:
    """Only a validated issue that is required drives changes or a revision."""
    return finding["finding_type"] == "issue" and finding["requirement"] == "required"


def concerns(reviews: Reviews, reviewers: Reviewers = DEFAULT_REVIEWERS, asks: str = "needs_review") -> list[str]:
    """Roles whose completed review raises a concern that asks for ``asks``: ``needs_review`` (a
    person decides; never ``pass``) or ``needs_changes`` (the plan or tasks must change)."""
    return [spec.role for spec in reviewers
            if spec.concern == asks and spec.role in reviews and spec.raises_concern(reviews[spec.role])]


def caution_verdicts(reviews: Reviews, reviewers: Reviewers = DEFAULT_REVIEWERS) -> list[str]:
    """Completed verdicts that are not blockers but must not end in ``pass``: a person decides."""
    return concerns(reviews, reviewers, "needs_review")


def _completed(coverage: Mapping[str, str], reviewers: Reviewers) -> int:
    return sum(1 for role in reviewers.roles if coverage.get(role) == "completed")


def resolve_run_status(
    coverage: Mapping[str, str], reviews: Reviews, findings: Sequence[Mapping[str, Any]],
    reviewers: Reviewers = DEFAULT_REVIEWERS,
) -> str:
    """The status matrix. Reads structured verdicts only; no reviewer text is parsed."""
    completed = _completed(coverage, reviewers)
    if completed == 0:
        return "failed"
    if has_hard_blocker(reviews, reviewers):
        return "blocked"
    if completed != len(reviewers) or caution_verdicts(reviews, reviewers):
        return "needs_review"
    if concerns(reviews, reviewers, "needs_changes") or any(is_actionable(f) for f in findings):
        return "needs_changes"
    return "pass"


def status_reasons(
    coverage: Mapping[str, str], reviews: Reviews, findings: Sequence[Mapping[str, Any]],
    reviewers: Reviewers = DEFAULT_REVIEWERS,
) -> list[str]:
    """Why the matrix did not end in ``pass``, one short line per rule that applied (empty on pass)."""
    if not _completed(coverage, reviewers):
        return ["no review completed"]
    reasons = []
    if has_hard_blocker(reviews, reviewers):
        reasons.append("a review reported a hard blocker")
    missing = [role for role in reviewers.roles if coverage.get(role) != "completed"]
    if missing:
        reasons.append(f"review(s) not completed: {', '.join(missing)}")
    for asks in get_args(ConcernStatus):
        reasons += [reviewers.of_role(role).concern_reason for role in concerns(reviews, reviewers, asks)]
    if any(is_actionable(f) for f in findings):
        reasons.append("required findings")
    return reasons


def blockers_and_high_risks(
    reviews: Reviews, findings: Sequence[Mapping[str, Any]], reviewers: Reviewers = DEFAULT_REVIEWERS
) -> list[dict]:
    """What the report lists under blockers and high risks: blocker verdicts first (the last reviewer
    of the table first), then concerns a reviewer lists as high risks, then findings."""
    items: list[dict[str, Any]] = []
    for role in reversed(blocking_reviewers(reviews, reviewers)):
        items.append({"kind": "blocker", "source": role, "detail": reviewers.of_role(role).blocker_detail})
    for role in caution_verdicts(reviews, reviewers):
        detail = reviewers.of_role(role).high_risk_detail
        if detail and reviewers.of_role(role).verdict_level(reviews[role]) == "concern":
            items.append({"kind": "high_risk", "source": role, "detail": detail})
    for finding in findings:
        if finding["severity"] in ("blocker", "high"):
            items.append(
                {
                    "kind": "blocker" if finding["severity"] == "blocker" else "high_risk",
                    "source": ",".join(finding["sources"]),
                    "finding_id": finding["finding_id"],
                    "detail": finding["description"],
                }
            )
    return items


def build_review_bundle(outcomes: Sequence[Mapping[str, Any]], reviewers: Reviewers = DEFAULT_REVIEWERS) -> dict[str, Any]:
    """Coverage per role, completed reviews, merged findings with sources, conflicts, missing
    reviews, blockers / high risks and the resolved status — all from structured outcomes."""
    coverage = coverage_of(outcomes, reviewers)
    reviews = completed_reviews(outcomes)
    findings = merge_findings(reviews, reviewers)
    return {
        "coverage": coverage,
        "completed": [
            {"role": spec.role, "verdict": spec.verdict(reviews[spec.role]), "summary": reviews[spec.role]["summary"]}
            for spec in reviewers
            if spec.role in reviews
        ],
        "findings": findings,
        "conflicts": find_conflicts(reviews, findings, reviewers),
        "missing": [
            {"role": role, "outcome": coverage[role]} for role in reviewers.roles if coverage[role] != "completed"
        ],
        "blockers_and_high_risks": blockers_and_high_risks(reviews, findings, reviewers),
        "status": resolve_run_status(coverage, reviews, findings, reviewers),
        "status_reasons": status_reasons(coverage, reviews, findings, reviewers),
    }

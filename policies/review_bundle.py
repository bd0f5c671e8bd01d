"""Rule-first synthesis of the three reviews (pure): coverage, merged findings, conflicts, status.

Input is structured data only — validated review contracts and reviewer outcomes — never markdown.
``resolve_run_status`` is the status matrix; the priority chain is fixed:
0 completed → failed; a hard blocker → blocked; fewer than 3 completed → needs_review;
a caution verdict (boundary ``needs_review`` or risk ``high``) → needs_review; required changes →
needs_changes; else pass. ``status_reasons`` names why a run did not pass, for the report.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from schemas.delivery import REVIEWER_ROLES, SEVERITIES

SEVERITY_RANK: Mapping[str, int] = {severity: rank for rank, severity in enumerate(SEVERITIES)}

# Each reviewer's verdict, normalised to one scale so disagreements can be named.
_VERDICT_LEVEL: Mapping[str, Mapping[str, str]] = {
    "general": {"pass": "ok", "needs_changes": "concern", "blocked": "blocked"},
    "risk": {"info": "ok", "low": "ok", "medium": "ok", "high": "concern", "blocker": "blocked"},
    "boundary": {"passed": "ok", "needs_review": "concern", "blocked": "blocked"},
}
_VERDICT_FIELD: Mapping[str, str] = {"general": "disposition", "risk": "severity", "boundary": "boundary_status"}


def verdict_of(role: str, review: Mapping[str, Any]) -> str:
    """The reviewer's own verdict field (disposition / severity / boundary_status)."""
    return str(review[_VERDICT_FIELD[role]])


def coverage_of(outcomes: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Outcome per required role; a role no reviewer reported for is ``missing``."""
    coverage = dict.fromkeys(REVIEWER_ROLES, "missing")
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


def merge_findings(reviews: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Findings of all completed reviews: deduplicated (same targets + normalised description) with
    every source kept, the strongest classification of the duplicates kept, ranked by severity, then
    numbered ``F01``… in rank order."""
    merged: dict[tuple[tuple[str, ...], str], dict[str, Any]] = {}
    order = 0
    for role in REVIEWER_ROLES:
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


def find_conflicts(reviews: Mapping[str, Mapping[str, Any]], findings: Sequence[Mapping[str, Any]]) -> list[dict]:
    """Disagreements worth a person's attention: one reviewer blocks while another sees no problem;
    reviewers raising the same finding classify it differently (required vs advisory, or severities
    two or more levels apart)."""
    conflicts: list[dict[str, Any]] = []
    levels = {role: _VERDICT_LEVEL[role][verdict_of(role, review)] for role, review in reviews.items()}
    blockers = [role for role in REVIEWER_ROLES if levels.get(role) == "blocked"]
    clear = [role for role in REVIEWER_ROLES if levels.get(role) == "ok"]
    for blocker in blockers:
        for other in clear:
            conflicts.append(
                {
                    "kind": "verdict",
                    "roles": [blocker, other],
                    "detail": f"{blocker} review blocks ({verdict_of(blocker, reviews[blocker])}) while "
                    f"{other} review reports {verdict_of(other, reviews[other])}; the block stands.",
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


def has_hard_blocker(reviews: Mapping[str, Mapping[str, Any]]) -> bool:
    general, risk, boundary = (reviews.get(role) for role in REVIEWER_ROLES)
    return bool(
        (general and general["disposition"] == "blocked")
        or (risk and risk["severity"] == "blocker")
        or (boundary and boundary["boundary_status"] == "blocked")
    )


def is_actionable(finding: Mapping[str, Any]) -> bool:
    """Only a validated issue that is required drives changes or a revision."""
    return finding["finding_type"] == "issue" and finding["requirement"] == "required"


def caution_verdicts(reviews: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Completed verdicts that are not blockers but must not end in ``pass``: a person decides."""
    risk, boundary = reviews.get("risk"), reviews.get("boundary")
    found = []
    if risk and risk["severity"] == "high":
        found.append("risk")
    if boundary and boundary["boundary_status"] == "needs_review":
        found.append("boundary")
    return found


def resolve_run_status(
    coverage: Mapping[str, str], reviews: Mapping[str, Mapping[str, Any]], findings: Sequence[Mapping[str, Any]]
) -> str:
    """The status matrix. Reads structured verdicts only; no reviewer text is parsed."""
    completed = sum(1 for role in REVIEWER_ROLES if coverage.get(role) == "completed")
    if completed == 0:
        return "failed"
    if has_hard_blocker(reviews):
        return "blocked"
    if completed != len(REVIEWER_ROLES):
        return "needs_review"
    if caution_verdicts(reviews):
        return "needs_review"
    general = reviews["general"]
    if (
        general["disposition"] == "needs_changes"
        or general["plan_task_alignment"] == "misaligned"
        or any(is_actionable(f) for f in findings)
    ):
        return "needs_changes"
    return "pass"


CAUTION_REASONS: Mapping[str, str] = {
    "risk": "the risk review rated the delivery high risk",
    "boundary": "the boundary review asks for a person to review a guarded area",
}


def status_reasons(
    coverage: Mapping[str, str], reviews: Mapping[str, Mapping[str, Any]], findings: Sequence[Mapping[str, Any]]
) -> list[str]:
    """Why the matrix did not end in ``pass``, one short line per rule that applied (empty on pass)."""
    reasons = []
    if not any(coverage.get(role) == "completed" for role in REVIEWER_ROLES):
        return ["no review completed"]
    if has_hard_blocker(reviews):
        reasons.append("a review reported a hard blocker")
    missing = [role for role in REVIEWER_ROLES if coverage.get(role) != "completed"]
    if missing:
        reasons.append(f"review(s) not completed: {', '.join(missing)}")
    reasons += [CAUTION_REASONS[role] for role in caution_verdicts(reviews)]
    general = reviews.get("general")
    if general and (general["disposition"] == "needs_changes" or general["plan_task_alignment"] == "misaligned"):
        reasons.append("the general review asks for changes")
    if any(is_actionable(f) for f in findings):
        reasons.append("required findings")
    return reasons


def blockers_and_high_risks(reviews: Mapping[str, Mapping[str, Any]], findings: Sequence[Mapping[str, Any]]) -> list[dict]:
    """What the report lists under blockers and high risks: hard verdicts first, then findings."""
    items: list[dict[str, Any]] = []
    general, risk, boundary = (reviews.get(role) for role in REVIEWER_ROLES)
    if boundary and boundary["boundary_status"] == "blocked":
        items.append({"kind": "blocker", "source": "boundary", "detail": "boundary review blocked the delivery"})
    if risk and risk["severity"] == "blocker":
        items.append({"kind": "blocker", "source": "risk", "detail": "risk review rated the delivery a blocker"})
    if general and general["disposition"] == "blocked":
        items.append({"kind": "blocker", "source": "general", "detail": "general review blocked the delivery"})
    if risk and risk["severity"] == "high":
        items.append({"kind": "high_risk", "source": "risk", "detail": "risk review rated the delivery high risk"})
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


def build_review_bundle(outcomes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Coverage per role, completed reviews, merged findings with sources, conflicts, missing
    reviews, blockers / high risks and the resolved status — all from structured outcomes."""
    coverage = coverage_of(outcomes)
    reviews = completed_reviews(outcomes)
    findings = merge_findings(reviews)
    return {
        "coverage": coverage,
        "completed": [
            {"role": role, "verdict": verdict_of(role, reviews[role]), "summary": reviews[role]["summary"]}
            for role in REVIEWER_ROLES
            if role in reviews
        ],
        "findings": findings,
        "conflicts": find_conflicts(reviews, findings),
        "missing": [
            {"role": role, "outcome": coverage[role]} for role in REVIEWER_ROLES if coverage[role] != "completed"
        ],
        "blockers_and_high_risks": blockers_and_high_risks(reviews, findings),
        "status": resolve_run_status(coverage, reviews, findings),
        "status_reasons": status_reasons(coverage, reviews, findings),
    }

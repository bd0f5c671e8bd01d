"""After validation: warning disposition, revision effect, the final decision and human-review decisions.

Pure rules. Only structural hard faults and a few auto-fixable weak items are
fixed now (and only those go to the revision prompt); everything else becomes a manual review item
for a person. Whether a revision helped is decided by comparing stable issue ids, never by asking a
model. A reviewer's answer is checked against the decisions allowed at that point before the run
consumes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from reins.policies.text.redaction import redact
from reins.policies.tasklist.structure import StructureValidation
from reins.schemas.tasklist import REVISION_REVIEW_DECISIONS, STRATEGY_REVIEW_DECISIONS, review_decision_adapter

FIX_NOW_WEAK_CODES: frozenset[str] = frozenset(
    {
        "missing_goals",
        "missing_engineering_verification",
        "missing_execution_discipline",
        "missing_non_goals",
        "step_missing_verification",
    }
)

# Titles for manual review items (≤ 80 chars): what a person should look at, by issue code.
MANUAL_ITEM_TITLES: Mapping[str, str] = {
    "missing_test_plan": "Task list has no test plan section",
    "missing_pause_point": "No pause point for human confirmation",
    "weak_risks": "Risks and confirmation points are missing",
    "step_too_few_tasks": "A step has fewer than two tasks",
    "step_too_many_tasks": "A step has more than twelve tasks",
}
CONTEXT_READ_FAILED_TITLE = "optional context read failed"


def manual_item(title: str, detail: str, severity: str = "info") -> dict[str, str]:
    return {"title": redact(title, 80), "detail": redact(detail, 500), "severity": severity}


@dataclass(frozen=True)
class WarningDisposition:
    fix_now: tuple[str, ...]
    manual_review_items: tuple[Mapping[str, str], ...]
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "fix_now": list(self.fix_now),
            "manual_review_items": [dict(item) for item in self.manual_review_items],
            "reason": self.reason,
        }


def decide_warning_disposition(validation: StructureValidation) -> WarningDisposition:
    """fixNow = every blocking issue + the auto-fix weak codes; every other weak item goes to a person."""
    fix_now = [f.issue_id for f in validation.blocking]
    items = []
    for finding in validation.weak:
        if finding.code in FIX_NOW_WEAK_CODES:
            fix_now.append(finding.issue_id)
            continue
        title = MANUAL_ITEM_TITLES.get(finding.code, finding.code.replace("_", " "))
        where = f" (step {finding.step})" if finding.step is not None else ""
        detail = f"Structural check {finding.issue_id}{where}: not fixed automatically; please review."
        items.append(manual_item(title, detail, "warning" if finding.code == "weak_risks" else "info"))
    if fix_now:
        reason = f"{len(fix_now)} finding(s) to fix now, {len(items)} for manual review."
    elif items:
        reason = f"Nothing to fix automatically; {len(items)} item(s) for manual review."
    else:
        reason = "The draft passed every structural check."
    return WarningDisposition(tuple(fix_now), tuple(items), reason)


@dataclass(frozen=True)
class RevisionEffect:
    fixed_issues: tuple[str, ...]
    remaining_issues: tuple[str, ...]
    improved: bool
    score_before: int
    score_after: int
    final_decision: str
    unresolved_fix_now: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "fixed_issues": list(self.fixed_issues),
            "remaining_issues": list(self.remaining_issues),
            "improved": self.improved,
            "score_before": self.score_before,
            "score_after": self.score_after,
            "final_decision": self.final_decision,
            "unresolved_fix_now": list(self.unresolved_fix_now),
        }


def final_decision_for(after_status: str, manual_item_count: int) -> str:
    if after_status == "fail":
        return "blocked"
    if after_status == "warning" or manual_item_count > 0:
        return "final_with_manual_review_items"
    return "final"


def evaluate_revision_effect(
    before: StructureValidation,
    after: StructureValidation | None,
    fix_now: Sequence[str],
    manual_item_count: int,
) -> RevisionEffect:
    """Compare v1 and v2 by issue ids; without a v2, "after" is v1."""
    after = after or before
    before_ids, after_ids = before.issue_ids, after.issue_ids
    unresolved = tuple(issue for issue in fix_now if issue in after_ids) if after is not before else ()
    return RevisionEffect(
        fixed_issues=tuple(issue for issue in before_ids if issue not in after_ids),
        remaining_issues=tuple(after_ids),
        improved=after.score > before.score,
        score_before=before.score,
        score_after=after.score,
        final_decision=final_decision_for(after.status, manual_item_count + len(unresolved)),
        unresolved_fix_now=unresolved,
    )


# ---------------------------------------------------------------------------------- human review


def strategy_review_options(regenerations_used: int, max_regenerations: int) -> tuple[str, ...]:
    """approve | edit | reject | respond; after the one regeneration, respond is no longer offered."""
    if regenerations_used >= max_regenerations:
        return tuple(d for d in STRATEGY_REVIEW_DECISIONS if d != "respond")
    return STRATEGY_REVIEW_DECISIONS


def revision_review_options() -> tuple[str, ...]:
    return REVISION_REVIEW_DECISIONS


@dataclass(frozen=True)
class ReviewCheck:
    decision: dict[str, Any] | None
    error: str | None


def check_review_decision(kind: str, allowed: Sequence[str], raw: Any) -> ReviewCheck:
    """Validate a reviewer's answer against the decisions allowed now; a clear, redacted error otherwise."""
    listed = ", ".join(allowed)
    if not isinstance(raw, Mapping):
        return ReviewCheck(None, f"a {kind} decision must be a JSON object with a type; allowed types: {listed}")
    chosen = raw.get("type")
    if chosen not in allowed:
        shown = redact(chosen, 40) if isinstance(chosen, str) else "missing"
        return ReviewCheck(None, f"decision type {shown!s} is not allowed for {kind} now; allowed types: {listed}")
    try:
        value = review_decision_adapter(kind, allowed).validate_python(dict(raw))
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in item.get('loc', ())) or '$'}: {item.get('type', 'invalid')}"
            for item in error.errors()[:5]
        )
        return ReviewCheck(None, redact(f"the {chosen} decision is not valid ({problems})", 500))
    return ReviewCheck(value.model_dump(mode="json"), None)

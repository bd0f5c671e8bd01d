"""How the two simpler baselines read a model's free text (pure): marker lines, and the status they
derive from them. This is deliberately the usual "parse the last line" approach, with tolerant
spelling (case, spaces, hyphens, a trailing full stop) but no synonyms and no schema: a verdict that
is rephrased or renamed is simply not found.

Single agent: ``STATUS`` gives the status; ``GENERAL`` / ``RISK`` / ``BOUNDARY`` are its reviews.
Fixed pipeline: the plan's ``READINESS`` and each review's ``VERDICT``; the status is derived from
the verdicts that were found — a review without a recognisable verdict raises no objection (that
pipeline has no coverage rule: that is what "without feedback" means here).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS

# A review's marker is its role in capitals, its vocabulary the verdicts of its spec.
REVIEW_LABELS: Mapping[str, str] = {role: role.upper() for role in DEFAULT_REVIEWERS.roles}
VOCABULARY: Mapping[str, frozenset[str]] = {
    "STATUS": frozenset({"pass", "needs_changes", "blocked", "clarification_required"}),
    "READINESS": frozenset({"ready", "clarification_required"}),
    **{REVIEW_LABELS[spec.role]: frozenset(spec.levels) for spec in DEFAULT_REVIEWERS},
}
BLOCKING: Mapping[str, str] = {
    spec.role: next(verdict for verdict, level in spec.levels.items() if level == "blocker") for spec in DEFAULT_REVIEWERS
}

_MARKER = re.compile(r"^[ \t]*(?P<label>[A-Z][A-Z_ ]{0,30}?)[ \t]*:[ \t]*(?P<value>\S.*?)[ \t]*$", re.M)


def normalise(value: str) -> str:
    """``Needs Changes.`` → ``needs_changes``; ``PASS`` → ``pass``."""
    return re.sub(r"[\s\-]+", "_", value.strip().strip("*`").rstrip(".!").strip().lower())


def read_marker(text: str, label: str, vocabulary: frozenset[str] | None = None) -> str | None:
    """The value of the last ``LABEL: value`` line, if it is in the vocabulary; else None."""
    allowed = vocabulary if vocabulary is not None else VOCABULARY[label]
    values = [normalise(m["value"]) for m in _MARKER.finditer(text or "") if m["label"] == label]
    return values[-1] if values and values[-1] in allowed else None


def review_verdict(role: str, text: str | None) -> str | None:
    """A fixed-pipeline review's ``VERDICT`` in its role's vocabulary."""
    return read_marker(text or "", "VERDICT", VOCABULARY[REVIEW_LABELS[role]])


def single_agent_reading(text: str) -> dict[str, object]:
    """Status, review verdicts found, and whether a review blocked, from the single agent's text."""
    verdicts = {role: read_marker(text, label) for role, label in REVIEW_LABELS.items()}
    return {
        "status": read_marker(text, "STATUS"),
        "verdicts": verdicts,
        "blocker_seen": any(verdicts[role] == BLOCKING[role] for role in verdicts),
    }


def fixed_status(readiness: str | None, verdicts: Mapping[str, str | None]) -> str:
    """The fixed pipeline's status: a blocking verdict → blocked; a plan that asks for clarification →
    clarification_required; a general needs_changes → needs_changes; otherwise pass. Missing or
    unreadable verdicts are skipped."""
    if any(verdicts.get(role) == value for role, value in BLOCKING.items()):
        return "blocked"
    if readiness == "clarification_required":
        return "clarification_required"
    if verdicts.get("general") == "needs_changes":
        return "needs_changes"
    return "pass"

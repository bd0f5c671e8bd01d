"""Scoring (pure functions, no I/O): status correctness, consistency across repeats, hard-rule
violations, cost and latency, per baseline and per scenario.

Hard rules, each a named violation:

=============================  ===================================================================
code                           when
=============================  ===================================================================
blocker_not_blocked            the run's own completed reviews reported a blocker and the status is
                               not ``blocked``; or the requirement is a blocker case (expected
                               ``blocked``) and the run lets it proceed (``pass`` / ``needs_changes``)
pass_without_all_reviews       status ``pass`` with fewer completed reviews than the reviewer table has
pass_after_revision            status ``pass`` after a revision ran (nothing re-reviewed it)
=============================  ===================================================================

Every wrong run gets one cause (``wrong_cause``), from the calls whose failure decided it
(``RunRecord.stops``) and what the perturbation injected into each contract:

=======================  ============================================================================
cause                    when
=======================  ============================================================================
non_retryable_fault      a deciding call received a fault no rule may retry (a deadline overrun, a 400)
reask_budget_spent       a manager turn was refused more often than the re-ask budget allows (by
                         default: refused, asked again unchanged, refused again)
invalid_after_repair     a deciding call's output was invalid, and so was its one repair
retryable_twice          a transient fault (provider timeout, connection error) and then its one retry
                         failed too
wrong_status             no deciding call failed: the run completed with another status
=======================  ============================================================================

A deciding call that failed with nothing injected into its contract (a real model's own failure) is
named by its outcome (``contract_failure`` → ``invalid_after_repair``, else ``timeout``,
``execution_failed``, …).

A blocker the run's own reviews found must end in ``blocked``: any other status (even an unreadable
one) lost it. A blocker case the run never saw (its reviewer failed) is held to less: a status that
stops the work (``failed``, ``needs_review``, ``clarification_required``, unreadable) is a wrong
status, not a violation — nothing was let through.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from reins.evals.perturbed import RAISING, RETRYABLE_KINDS
from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS

PROCEEDING = frozenset({"pass", "needs_changes"})  # statuses that let the work go ahead
VIOLATIONS = ("blocker_not_blocked", "pass_without_all_reviews", "pass_after_revision")
NON_RETRYABLE_KINDS = RAISING - RETRYABLE_KINDS
# When several deciding calls failed, the run is counted under the first of these its calls show.
CAUSES = ("non_retryable_fault", "reask_budget_spent", "invalid_after_repair", "retryable_twice")


@dataclass(frozen=True)
class RunRecord:
    baseline: str
    scenario: str
    repeat: int
    expected: str
    acceptable: tuple[str, ...]
    status: str
    completed_reviews: int
    blocker_seen: bool
    revised: bool
    calls: int
    repair_calls: int
    tokens: int
    elapsed_ms: int
    injected: Mapping[str, int] = field(default_factory=dict)
    error: str | None = None
    failure: str | None = None
    rate: float = 0.0
    reasks: int = 0  # manager turns asked again after a refusal (the controlled chain only)
    retries: int = 0  # model calls repeated after a transient provider failure
    stops: tuple[tuple[str, str], ...] = ()  # (contract, code) of the calls whose failure decided the run
    injected_on: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # contract → kinds, in order
    primary_calls: int = 0  # calls the roles' own models answered (not a fallback or escalation model)
    served_calls: int = 0  # calls any model answered
    decisions: Mapping[str, Any] | None = None  # the chain's recorded decisions (records.json, not the report)

    def as_dict(self) -> dict[str, Any]:
        return {**{k: v for k, v in asdict(self).items() if k != "decisions"}, "acceptable": list(self.acceptable), "injected": dict(self.injected),
                "stops": [list(stop) for stop in self.stops],
                "injected_on": {contract: list(kinds) for contract, kinds in self.injected_on.items()}}


def status_correct(status: str, acceptable: Iterable[str]) -> bool:
    return status in set(acceptable)


def hard_rule_violations(record: RunRecord) -> list[str]:
    found = []
    if (record.blocker_seen and record.status != "blocked") or (
        record.expected == "blocked" and record.status in PROCEEDING
    ):
        found.append("blocker_not_blocked")
    if record.status == "pass" and record.completed_reviews < len(DEFAULT_REVIEWERS):
        found.append("pass_without_all_reviews")
    if record.status == "pass" and record.revised:
        found.append("pass_after_revision")
    return found


def stop_cause(code: str, injected: Sequence[str]) -> str:
    """Why one deciding call failed, given the kinds injected into its contract."""
    if code == "refused":
        return "reask_budget_spent"
    if NON_RETRYABLE_KINDS.intersection(injected):
        return "non_retryable_fault"
    if code == "contract_failure":
        return "invalid_after_repair"
    if sum(kind in RETRYABLE_KINDS for kind in injected) >= 2:
        return "retryable_twice"
    return code or "unknown"


def wrong_cause(record: RunRecord) -> str | None:
    """The cause of a wrong run (see the module docstring); None for a correct one."""
    if status_correct(record.status, record.acceptable):
        return None
    causes = [stop_cause(code, record.injected_on.get(contract, ())) for contract, code in record.stops]
    if not causes:
        return "wrong_status"
    return min(causes, key=lambda cause: CAUSES.index(cause) if cause in CAUSES else len(CAUSES))


def consistency(statuses: Sequence[str]) -> float:
    """Share of repeats that agree with the most common status (1.0 for one repeat)."""
    if not statuses:
        return 1.0
    return Counter(statuses).most_common(1)[0][1] / len(statuses)


def modal_status(statuses: Sequence[str]) -> str:
    """The most common status; ties go to the one seen first."""
    counts = Counter(statuses)
    return max(statuses, key=lambda s: (counts[s], -statuses.index(s))) if statuses else ""


def median_range(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"median": 0, "min": 0, "max": 0}
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _by(records: Iterable[RunRecord], *keys: str) -> dict[tuple, list[RunRecord]]:
    groups: dict[tuple, list[RunRecord]] = defaultdict(list)
    for record in records:
        groups[tuple(getattr(record, k) for k in keys)].append(record)
    return groups


def summarise(records: Sequence[RunRecord]) -> dict[str, dict[str, Any]]:
    """One summary per baseline, in first-seen order."""
    summaries: dict[str, dict[str, Any]] = {}
    for (baseline,), runs in _by(records, "baseline").items():
        per_scenario = _by(runs, "scenario")
        violations = Counter(code for run in runs for code in hard_rule_violations(run))
        correct = sum(1 for run in runs if status_correct(run.status, run.acceptable))
        injected = Counter()
        for run in runs:
            injected.update(run.injected)
        summaries[baseline] = {
            "runs": len(runs),
            "scenarios": len(per_scenario),
            "correct": correct,
            "correct_rate": correct / len(runs) if runs else 0.0,
            "consistency": statistics.fmean(consistency([r.status for r in group]) for group in per_scenario.values())
            if per_scenario else 1.0,
            "violations": sum(violations.values()),
            "runs_with_violations": sum(1 for run in runs if hard_rule_violations(run)),
            "violations_by_rule": {code: violations.get(code, 0) for code in VIOLATIONS},
            "failed_runs": sum(1 for run in runs if run.status == "failed"),
            "failures": dict(Counter(run.failure for run in runs if run.failure).most_common()),
            "wrong_causes": dict(Counter(cause for run in runs if (cause := wrong_cause(run))).most_common()),
            "calls": median_range([r.calls for r in runs]),
            "calls_per_pass_run": median_range([r.calls for r in runs if r.status == "pass"]),
            "reasks": sum(r.reasks for r in runs),
            "retries": sum(r.retries for r in runs),
            "repair_calls": sum(r.repair_calls for r in runs),
            "primary_served": (sum(r.primary_calls for r in runs) / served) if (served := sum(r.served_calls for r in runs))
            else None,
            "tokens": median_range([r.tokens for r in runs]),
            "latency_ms": median_range([r.elapsed_ms for r in runs]),
            "injected": dict(sorted(injected.items())),
        }
    return summaries


def per_scenario(records: Sequence[RunRecord]) -> dict[str, dict[str, dict[str, Any]]]:
    """scenario → baseline → {expected, modal status, correct runs, runs, consistency, violations}."""
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for (scenario, baseline), runs in _by(records, "scenario", "baseline").items():
        statuses = [r.status for r in runs]
        table.setdefault(scenario, {})[baseline] = {
            "expected": runs[0].expected,
            "status": modal_status(statuses),
            "statuses": dict(Counter(statuses)),
            "correct": sum(1 for r in runs if status_correct(r.status, r.acceptable)),
            "runs": len(runs),
            "consistency": consistency(statuses),
            "violations": sum(len(hard_rule_violations(r)) for r in runs),
        }
    return table

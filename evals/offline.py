"""Offline responders for the evaluation's two simpler baselines (``evals/baselines.py``), registered
with the offline model whenever the ``evals`` package is imported.

Not a language model: the same kind of rules as the delivery responders (requirement statements,
acceptance-criteria coverage, the rubric's risk signals, the governance document's boundary
signals), but answering in free text, as those baselines ask — markdown with marker lines such as
``STATUS: blocked`` or ``VERDICT: needs_changes`` that the baseline then reads.

- ``eval.single_agent``: one answer with plan, tasks, three review verdicts and a final status.
- ``eval.fixed_plan``: a markdown plan (one acceptance criterion per requirement statement) and a
  ``READINESS`` line; ``eval.fixed_tasks``: one task per criterion of the plan it is shown.
- ``eval.fixed_general_review`` / ``_risk_review`` / ``_boundary_review``: one review each, read from
  the markdown plan and tasks in the prompt, ending in a ``VERDICT`` line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from reins.runtime.standins.offline.text_rules import (
    FALLBACK_BOUNDARY,
    FALLBACK_RISK,
    Requirement,
    _short,
    _signals,
    covers,
    matched,
    parse_requirement,
)
from reins.runtime.standins.offline.framework import OfflineRequest, responder
from reins.schemas.delivery import SEVERITIES

_CRITERION = re.compile(r"^-\s+(?P<key>AC-[A-Za-z0-9_-]+):\s+(?P<text>.+)$")
_TASK = re.compile(r"^-\s+\[ \]\s+(?P<id>T-?[A-Za-z0-9_-]+):\s+(?P<text>.+)$")

Signal = tuple[str, str]  # (label, matched phrase)


# ------------------------------------------------------------------------------------ shared rules


def _risk_signals(req: OfflineRequest) -> dict[str, list[Signal]]:
    text = req.block("requirement")
    return {
        level: matched(text, _signals(req, "rubric", "Risk rubric", [level], FALLBACK_RISK[level]))
        for level in ("blocker", "high", "medium")
    }


def _boundary_signals(req: OfflineRequest, *, with_remit: bool) -> tuple[list[Signal], list[Signal]]:
    """Hard and guarded-area signals in the requirement; the out-of-remit list counts as hard when
    no supervisor ran before the review (the fixed pipeline has none)."""
    text = req.block("requirement")
    hard = matched(text, _signals(req, "governance", "Delivery boundaries", ["hard"], FALLBACK_BOUNDARY["blocked"]))
    if with_remit:
        hard += matched(text, _signals(req, "governance", "Delivery boundaries", ["out of remit"], FALLBACK_BOUNDARY["remit"]))
    soft = matched(text, _signals(req, "governance", "Delivery boundaries", ["needs review"],
                                  FALLBACK_BOUNDARY["needs_review"]))
    return hard, soft


def _risk_severity(signals: dict[str, list[Signal]]) -> str:
    return next((level for level in SEVERITIES if signals.get(level)), "low")


def _uncovered(requirement: Requirement, criteria: Sequence[str]) -> list[str]:
    """Requirement statements (list items and must/should sentences) no criterion covers."""
    return [s for s in requirement.reviewer_statements() if not any(covers(s, c) for c in criteria)]


def _section_lines(markdown: str, pattern: re.Pattern[str]) -> list[re.Match[str]]:
    return [m for m in (pattern.match(line.strip()) for line in markdown.splitlines()) if m]


def _signal_lines(signals: Sequence[Signal]) -> list[str]:
    return [f"- {label} (signal: \"{phrase}\")" for label, phrase in signals]


# ------------------------------------------------------------------------------------ single agent


@responder("eval.single_agent")
def single_agent(req: OfflineRequest) -> str:
    text = req.block("requirement")
    requirement = parse_requirement(text)
    head = [f"# Delivery: {requirement.label()}", ""]
    remit = matched(text, _signals(req, "governance", "Delivery boundaries", ["out of remit"], FALLBACK_BOUNDARY["remit"]))
    if remit:
        return "\n".join([*head, "The requirement asks to switch off the delivery controls themselves:",
                          *_signal_lines(remit), "", "STATUS: blocked"])
    statements = requirement.planner_statements()
    if not statements:
        return "\n".join([*head, "The requirement names no concrete, checkable behaviour; please say what "
                          "should change and how to tell it is done.", "", "STATUS: clarification_required"])
    criteria = [_short(s, 300) for s in statements]
    missing = _uncovered(requirement, criteria)
    risks = _risk_signals(req)
    severity = _risk_severity(risks)
    hard, soft = _boundary_signals(req, with_remit=False)
    general = "needs_changes" if missing else "pass"
    boundary = "blocked" if hard else "needs_review" if soft else "passed"
    if severity == "blocker" or boundary == "blocked":
        status = "blocked"
    else:
        status = general  # pass | needs_changes
    lines = [*head, "## Plan"]
    lines += [f"- AC-R{i}: {c}" for i, c in enumerate(criteria, start=1)]
    lines += ["", "## Tasks"]
    lines += [f"- [ ] T{i}: deliver AC-R{i}" for i in range(1, len(criteria) + 1)]
    lines += [f"- [ ] T{len(criteria) + 1}: test every acceptance criterion", "", "## Reviews"]
    lines += [f"GENERAL: {general}", *[f"- not covered: {_short(s, 200)}" for s in missing]]
    lines += [f"RISK: {severity}", *_signal_lines([s for level in ("blocker", "high") for s in risks[level]])]
    lines += [f"BOUNDARY: {boundary}", *_signal_lines(hard + soft), "", f"STATUS: {status}"]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------ fixed pipeline


@responder("eval.fixed_plan")
def fixed_plan(req: OfflineRequest) -> str:
    requirement = parse_requirement(req.block("requirement"))
    statements = requirement.planner_statements()
    lines = [f"# Plan: {requirement.label()}", "", "## Acceptance criteria"]
    lines += [f"- AC-R{i}: {_short(s, 300)}" for i, s in enumerate(statements, start=1)] or ["- none"]
    lines += ["", f"READINESS: {'ready' if statements else 'clarification_required'}"]
    return "\n".join(lines)


@responder("eval.fixed_tasks")
def fixed_tasks(req: OfflineRequest) -> str:
    criteria = _section_lines(req.block("plan_markdown"), _CRITERION)
    lines = ["# Tasks", ""]
    lines += [f"- [ ] T-{m['key'][3:]}: {m['text']}" for m in criteria]
    lines.append(f"- [ ] T-verify: test {', '.join(m['key'] for m in criteria) or 'the change'}")
    return "\n".join(lines)


@responder("eval.fixed_general_review")
def fixed_general_review(req: OfflineRequest) -> str:
    requirement = parse_requirement(req.block("requirement"))
    criteria = [m["text"] for m in _section_lines(req.block("plan_markdown"), _CRITERION)]
    tasks = " ".join(m["text"] for m in _section_lines(req.block("tasks_markdown"), _TASK))
    findings = [f"- No acceptance criterion covers: {_short(s, 200)}" for s in _uncovered(requirement, criteria)]
    findings += [f"- No task delivers: {_short(c, 200)}" for c in criteria if not covers(c, tasks)]
    verdict = "needs_changes" if findings else "pass"
    return "\n".join(["# General review", "", *(findings or ["- No findings."]), "", f"VERDICT: {verdict}"])


@responder("eval.fixed_risk_review")
def fixed_risk_review(req: OfflineRequest) -> str:
    risks = _risk_signals(req)
    found = [f"- [{level}] {label} (signal: \"{phrase}\")" for level in ("blocker", "high", "medium")
             for label, phrase in risks[level]]
    return "\n".join(["# Risk review", "", *(found or ["- No risk signals."]), "", f"VERDICT: {_risk_severity(risks)}"])


@responder("eval.fixed_boundary_review")
def fixed_boundary_review(req: OfflineRequest) -> str:
    hard, soft = _boundary_signals(req, with_remit=True)
    verdict = "blocked" if hard else "needs_review" if soft else "passed"
    lines = ["# Boundary review", "", *(_signal_lines(hard + soft) or ["- No boundary signals."])]
    return "\n".join([*lines, "", f"VERDICT: {verdict}"])

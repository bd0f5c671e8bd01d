"""The markdown the offline stand-in writes for its plans, task lists and reviews (each cut to the
bound of its schema's ``markdown`` field)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from reins.policies.text.redaction import truncate
from reins.runtime.standins.offline.bounds import limit
from reins.schemas.delivery import DeliveryPlan, DeliveryTasks, GeneralReview


def plan_markdown(plan: Mapping[str, Any], title: str) -> str:
    lines = [f"# Plan: {title}", "", plan["summary"], "", "## Phases"]
    for phase in plan["delivery_phases"]:
        deps = ", ".join(phase["depends_on_phase_keys"]) or "none"
        lines.append(f"- **{phase['phase_key']}** {phase['title']} (after: {deps}) — {phase['objective']}")
    lines += ["", "## Acceptance criteria"]
    lines += [f"- **{c['criterion_key']}** {c['description']}" for c in plan["acceptance_criteria"]]
    return truncate("\n".join(lines), limit(DeliveryPlan, "markdown"))


def tasks_markdown(tasks: Sequence[Mapping[str, Any]], summary: str) -> str:
    lines = ["# Tasks", "", summary, ""]
    for task in tasks:
        deps = ", ".join(task["depends_on_task_ids"]) or "none"
        lines.append(f"- [ ] **{task['task_id']}** {task['title']} [{task['target_area']}] (after: {deps})")
        lines += [f"  - {c}" for c in task["acceptance_criteria"]]
    return truncate("\n".join(lines), limit(DeliveryTasks, "markdown"))


def review_markdown(title: str, verdict: str, findings: Sequence[Mapping[str, Any]]) -> str:
    lines = [f"# {title}", "", f"Verdict: {verdict}", ""]
    lines += [f"- [{f['severity']}] {f['description']}" for f in findings] or ["- No findings."]
    return truncate("\n".join(lines), limit(GeneralReview, "markdown"))

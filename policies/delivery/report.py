"""The delivery report, rendered deterministically from structured run data (pure).

No model writes this report and no markdown from an artifact is pasted into it: every line comes
from validated structured fields, each flattened to one line so no field can inject a heading.
The only replaceable part is the narrative summary (see ``narrative``): optional polish may swap
it; the status, coverage, blockers and everything else are always rendered here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from reins.policies.models.model_notice import STAND_IN_NOTICE, models_line
from reins.policies.text.redaction import redact
from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS, Reviewers, count_word
from reins.policies.delivery.revision import next_steps

REPORT_LIMIT = 30_000

STATUS_LINES: Mapping[str, str] = {
    "pass": "Pass — the plan and tasks passed all {count} reviews with no required changes.",
    "clarification_required": "Clarification required — the requirement is not specific enough to plan.",
    "needs_changes": "Needs changes — reviews found required changes that were not revised.",
    "needs_review": "Needs review — a person must confirm the result before implementation.",
    "blocked": "Blocked — a hard blocker stops this delivery.",
    "failed": "Failed — the run stopped safely before producing a reviewed delivery.",
}


def status_line(status: str, reviewers: Reviewers = DEFAULT_REVIEWERS) -> str:
    return STATUS_LINES[status].format(count=count_word(len(reviewers)))


def _line(text: object, limit: int = 400) -> str:
    """One line of model-authored text: whitespace collapsed, bounded, redacted."""
    return redact(" ".join(str(text).split()), limit)


def _bullets(items: Sequence[object], empty: str) -> list[str]:
    return [f"- {_line(item)}" for item in items] or [f"- {empty}"]


def narrative(data: Mapping[str, Any], reviewers: Reviewers = DEFAULT_REVIEWERS) -> str:
    """The default narrative summary: a deterministic sentence or two from the structured data."""
    plan, tasks = data.get("plan"), data.get("tasks")
    bundle = data.get("review_bundle") or {}
    parts = []
    if plan:
        parts.append(f"The plan has {len(plan['delivery_phases'])} phase(s) and "
                     f"{len(plan['acceptance_criteria'])} acceptance criteria")
    if tasks:
        parts.append(f"the breakdown has {len(tasks['tasks'])} task(s)")
    if bundle.get("coverage"):
        done = sum(1 for role in reviewers.roles if bundle["coverage"].get(role) == "completed")
        parts.append(f"{done} of {len(reviewers)} reviews completed with {len(bundle.get('findings', []))} merged finding(s)")
    if not parts:
        pre = data.get("pre_decision") or {}
        if pre.get("reason"):
            return _line(f"No plan was produced: {pre['reason']}", 600)
        return "No plan was produced."
    sentence = "; ".join(parts) + "."
    revision = data.get("revision") or {}
    revised = [o["target"] for o in revision.get("outcomes", []) if o.get("status") == "revised"]
    if revised:
        sentence += f" One revision was applied to: {', '.join(revised)} (not re-reviewed)."
    return sentence[0].upper() + sentence[1:]


def _plan_section(plan: Mapping[str, Any] | None) -> list[str]:
    if not plan:
        return ["No plan was produced."]
    lines = [f"{_line(plan['summary'])} (revision {plan.get('revision', 1)})", "", "Phases:"]
    for phase in plan["delivery_phases"]:
        deps = ", ".join(phase["depends_on_phase_keys"]) or "none"
        lines.append(f"- `{_line(phase['phase_key'], 120)}` {_line(phase['title'], 200)} — depends on: {_line(deps)}")
    lines += ["", "Acceptance criteria:"]
    lines += [f"- `{_line(c['criterion_key'], 120)}` {_line(c['description'])}" for c in plan["acceptance_criteria"]]
    return lines


def _tasks_section(tasks: Mapping[str, Any] | None) -> list[str]:
    if not tasks:
        return ["No tasks were produced."]
    lines = [f"{_line(tasks['summary'])} (revision {tasks.get('revision', 1)})", ""]
    for task in tasks["tasks"]:
        deps = ", ".join(task["depends_on_task_ids"]) or "none"
        lines.append(
            f"- `{_line(task['task_id'], 120)}` {_line(task['title'], 200)} "
            f"[{_line(task['target_area'], 240)}] — depends on: {_line(deps)}"
        )
    return lines


def _coverage_section(bundle: Mapping[str, Any], reviewers: Reviewers) -> list[str]:
    coverage = bundle.get("coverage") or {}
    if not coverage:
        return ["No reviews ran."]
    verdicts = {entry["role"]: entry["verdict"] for entry in bundle.get("completed", [])}
    lines = ["| reviewer | outcome | verdict |", "|---|---|---|"]
    for spec in reviewers:
        lines.append(f"| {spec.title} | {coverage.get(spec.role, 'missing')} | {verdicts.get(spec.role, '—')} |")
    for missing in bundle.get("missing", []):
        lines.append(f"\n- {reviewers.of_role(missing['role']).title} review is missing ({missing['outcome']}).")
    return lines


def _findings_section(bundle: Mapping[str, Any]) -> list[str]:
    findings = bundle.get("findings") or []
    if not findings:
        return ["No findings."]
    lines = []
    for f in findings:
        lines.append(
            f"- **{f['finding_id']}** [{f['severity']}, {f['finding_type']}, {f['requirement']}] "
            f"{_line(f['description'])} — targets: {', '.join(f['target_artifacts'])}; "
            f"raised by: {', '.join(f['sources'])}; action: {_line(f['suggested_action'])}"
        )
    for conflict in bundle.get("conflicts") or []:
        lines.append(f"- Conflict ({conflict['kind']}, {', '.join(conflict['roles'])}): {_line(conflict['detail'])}")
    return lines


def _blockers_section(bundle: Mapping[str, Any]) -> list[str]:
    items = bundle.get("blockers_and_high_risks") or []
    lines = []
    for item in items:
        ref = f" ({item['finding_id']})" if item.get("finding_id") else ""
        lines.append(f"- {item['kind'].replace('_', ' ')}{ref} from {item['source']}: {_line(item['detail'])}")
    return lines or ["None."]


def _revision_section(revision: Mapping[str, Any] | None) -> list[str]:
    if not revision or not revision.get("decision"):
        return ["No post-review decision was needed."]
    decision = revision["decision"]
    lines = [f"Decision (derived by the runtime from findings): **{decision['action']}**."]
    for request in decision.get("requests", []):
        lines.append(
            f"- {request['request_key']}: based on {', '.join(request['source_finding_ids'])}; "
            f"actions: {'; '.join(_line(a, 200) for a in request['required_actions'])}"
        )
    for outcome in revision.get("outcomes", []):
        lines.append(
            f"- {outcome['target']} {outcome['status']}: revision {outcome['from_revision']} → "
            f"{outcome['to_revision']} (findings {', '.join(outcome['source_finding_ids'])}); not re-reviewed."
        )
    return lines


def governance_line(governance: Mapping[str, Any] | None) -> str:
    """Which governance and rubric documents the run reviewed against."""
    if not governance:
        return "not loaded"
    custom, bundled = list(governance.get("custom") or []), list(governance.get("bundled") or [])
    if not custom:
        return "bundled set"
    line = f"custom set ({_line(', '.join(custom), 300)})"
    return line + (f"; bundled: {_line(', '.join(bundled), 300)}" if bundled else "")


def render_delivery_report(
    data: Mapping[str, Any], summary: str | None = None, reviewers: Reviewers = DEFAULT_REVIEWERS
) -> str:
    """The whole report. ``summary`` (e.g. polished) replaces only the narrative paragraph."""
    status = data["status"]
    pre = data.get("pre_decision") or {}
    bundle = data.get("review_bundle") or {}
    revision = data.get("revision") or {}
    revised = any(o.get("status") == "revised" for o in revision.get("outcomes", []))
    lines = ["# Delivery report", ""]
    if data.get("stand_in"):  # said first: a rule-based stand-in's verdict is not a model's
        lines += [f"> {STAND_IN_NOTICE}", ""]
    lines += [f"Source: {_line(data.get('source_label', 'inline requirement'), 120)}"]
    if data.get("models"):
        lines += [f"Models: {_line(models_line(data['models'], primaries=data.get('primaries')), 600)}"]
    lines += [f"Governance and rubrics: {governance_line(data.get('governance'))}", ""]
    lines += ["## Summary", "", _line(summary, 1200) if summary else narrative(data, reviewers), ""]
    lines += ["## Conclusion", "", f"**Status: {status}** — {status_line(status, reviewers)}", ""]
    reasons = bundle.get("status_reasons") or []
    if reasons:
        lines += [f"Why the reviews did not pass: {_line('; '.join(reasons), 600)}.", ""]
    failure = data.get("failure")
    if failure:
        lines += [f"Stopped at: {failure['stage']} — {_line(failure['message'], 300)}"]
        if failure.get("cause"):
            lines += [f"Cause: {_line(failure['cause'], 200)}"]
        lines += [""]
    if pre.get("branch") == "clarification_required":
        lines += ["Missing information:", *_bullets(pre.get("missing_information", []), "not stated"), ""]
    if pre.get("branch") == "blocked":
        lines += ["Boundary evidence:", *_bullets(pre.get("boundary_evidence", []), "not stated"), ""]
    lines += ["## Assumptions", "", *_bullets(pre.get("assumptions") or [], "None stated."), ""]
    lines += ["## Plan", "", *_plan_section(data.get("plan")), ""]
    lines += ["## Tasks", "", *_tasks_section(data.get("tasks")), ""]
    lines += ["## Review coverage", "", *_coverage_section(bundle, reviewers), ""]
    lines += ["## Merged findings", "", *_findings_section(bundle), ""]
    lines += ["## Blockers and high risks", "", *_blockers_section(bundle), ""]
    lines += ["## Revision", "", *_revision_section(revision), ""]
    lines += ["## Warnings", "", *_bullets(data.get("warnings") or [], "None."), ""]
    steps = ([pre["next_step"]] if pre.get("next_step") and not data.get("plan") else []) + next_steps(status, revised)
    lines += ["## Next steps", "", *_bullets(steps, "None."), ""]
    return redact("\n".join(lines).rstrip(), REPORT_LIMIT)

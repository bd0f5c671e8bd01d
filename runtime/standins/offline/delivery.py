"""Offline responders for the delivery contracts — deterministic rules over the call's structured
inputs (its metadata, ``OfflineRequest.inputs``); answers are cut to the bounds of their schema.

Not a language model. Each answer is computed from the inputs in front of it:

- the requirement is parsed into statements (list items; concrete sentences when there are none);
  a requirement without a concrete statement needs clarification;
- the planner turns the statements into phases and acceptance criteria; the task breakdown follows
  the plan's phases;
- the general review checks that every requirement statement — including "must/should" sentences
  in the prose, which the planner does not read — is covered by an acceptance criterion and that
  every criterion is delivered by a task;
- the risk review applies the risk rubric's signal phrases, the boundary review the governance
  document's signal phrases (with built-in fallbacks when a document is missing). A phrase is found
  by normalised, stemmed tokens, not as a literal substring, so "storing every raw prompt" meets the
  signal "store the prompts" (see ``signal_found``);
- revisions add criteria, phases and tasks for the findings they were given;
- the manager calls the next sub-agent(s) for the artifacts that exist — in the review phase every
  reviewer it is offered; the supervisor declares the reviewer roles its schema admits.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage

from reins.runtime.standins.offline.bounds import limit, resolved
from reins.runtime.standins.offline.delivery_markdown import plan_markdown, review_markdown, tasks_markdown
from reins.runtime.standins.offline.framework import OfflineRequest, responder
from reins.runtime.standins.offline.text_rules import (
    FALLBACK_BOUNDARY,
    FALLBACK_RISK,
    _area,
    _short,
    _signals,
    _unique,
    covers,
    matched,
    parse_requirement,
)
from reins.schemas.delivery import (
    BoundaryReview,
    DeliveryPlan,
    DeliveryTasks,
    GeneralReview,
    SEVERITIES,
    PolishedSummary,
    SupervisorPostGuidance,
    SupervisorPreDecision,
)


def _requirement(req: OfflineRequest) -> str:
    return req.inputs.get("requirement", "")


_CRITERION = limit(DeliveryPlan, "acceptance_criteria", "description")
_TASKS = limit(DeliveryTasks, "tasks")
_TASK_ID = limit(DeliveryTasks, "tasks", "task_id")
_FINDINGS = limit(GeneralReview, "findings")  # every review's findings share one bound
_ACTIONS = limit(SupervisorPostGuidance, "recommendations", "required_actions")
_ACTION = limit(SupervisorPostGuidance, "recommendations", "required_actions", "[]")

# ------------------------------------------------------------------------------------ supervisor


@responder("delivery.supervisor_pre")
def supervisor_pre(req: OfflineRequest) -> dict[str, Any]:
    requirement = parse_requirement(_requirement(req))
    remit = _signals(req, "governance", "Delivery boundaries", ["out of remit"], FALLBACK_BOUNDARY["remit"])
    refused = matched(_requirement(req), remit)
    if refused:
        return {
            "branch": "blocked",
            "boundary_evidence": [f"{label} (signal: \"{phrase}\")" for label, phrase in refused][
                : limit(SupervisorPreDecision, "boundary_evidence")],
            "next_step": "Remove the out-of-remit request; the delivery chain cannot disable its own controls.",
            "reason": "The requirement asks the delivery chain to act outside its remit.",
        }
    statements = requirement.planner_statements()
    if not statements:
        return {
            "branch": "clarification_required",
            "missing_information": [
                "Which concrete behaviour should change, and for whom.",
                "How a reviewer can tell the change is done (observable acceptance criteria).",
            ],
            "next_step": "Rewrite the requirement as concrete statements, one per line, and submit it again.",
            "reason": "The requirement names no concrete, checkable behaviour.",
        }
    n = len(statements)
    return {
        "branch": "execute",
        "assumptions": requirement.assumptions[: limit(SupervisorPreDecision, "assumptions")]
        or ["The requirement text is the complete scope of this delivery."],
        "planning_focus": f"Cover all {n} stated requirement(s) with phases and acceptance criteria.",
        "task_focus": "One task per delivery phase, each with verifiable acceptance criteria.",
        "review_focus": review_focus(req),
        "reviewer_roles": list(review_focus(req)),
        "stage_intents": [
            {"stage": "plan", "objective": f"Plan {_short(requirement.label(), 200)}."},
            {"stage": "tasks", "objective": "Break the plan into ordered, verifiable tasks."},
            {"stage": "review", "objective": "Review plan and tasks for coverage, risk and boundaries."},
        ],
    }


BUILT_IN_FOCUS = {
    "general": "Every requirement statement is covered by an acceptance criterion and a task.",
    "risk": "Security, data handling, unresolved dependencies and test coverage.",
    "boundary": "Governance boundaries of the delivery chain.",
}


def review_focus(req: OfflineRequest) -> dict[str, str]:
    """A focus per reviewer role the call's schema admits (its ``review_focus`` fields, in order):
    the field's own description when it has one, else the built-in focus of a default role."""
    schema = req.schema if isinstance(req.schema, dict) else {}
    fields = resolved(schema, (schema.get("properties") or {}).get("review_focus") or {}).get("properties")
    if not fields:
        return dict(BUILT_IN_FOCUS)
    return {role: field.get("description") or BUILT_IN_FOCUS.get(role) or f"The {role} review's own checklist."
            for role, field in fields.items()}


@responder("delivery.supervisor_post")
def supervisor_post(req: OfflineRequest) -> dict[str, Any]:
    findings = req.inputs.get("findings") or []
    actionable = [f for f in findings if f.get("finding_type") == "issue" and f.get("requirement") == "required"]
    recommendations = []
    for target in ("plan", "tasks"):
        chosen = [f for f in actionable if target in f.get("target_artifacts", [])]
        if chosen:
            recommendations.append(
                {
                    "target": target,
                    "summary": f"Resolve {len(chosen)} required finding(s) in the {target}.",
                    "required_actions": _unique(_short(f["suggested_action"], _ACTION) for f in chosen)[:_ACTIONS],
                    "acceptance_suggestion": "Each listed finding maps to an acceptance criterion a reviewer can check.",
                }
            )
    if not recommendations:
        recommendations.append(
            {
                "target": "plan",
                "summary": "No required changes.",
                "required_actions": ["Keep the plan as reviewed."],
                "acceptance_suggestion": "Implementation follows the reviewed acceptance criteria.",
            }
        )
    return {"rationale": f"{len(actionable)} required finding(s) after review.", "recommendations": recommendations}


# ------------------------------------------------------------------------------------ manager


@responder("delivery.manager")
def manager(req: OfflineRequest) -> AIMessage:
    present = {line.partition(":")[0] for line in req.inputs.get("artifacts", [])}  # "<kind>: <summary>"
    if "plan" not in present:
        names = ["plan-subagent"]
    elif "tasks" not in present:
        names = ["task-subagent"]
    else:  # the review group: every reviewer offered, in one turn
        names = [n for n in req.tool_names if n not in ("plan-subagent", "task-subagent")]
    names = [n for n in names if n in req.tool_names]
    if not names:
        return AIMessage(content="No suitable sub-agent tool is available.")
    calls = [{"name": n, "args": {"note": f"next step: {n}"}, "id": f"call_{i}_{n}", "type": "tool_call"}
             for i, n in enumerate(names)]
    return AIMessage(content="", tool_calls=calls)


# ------------------------------------------------------------------------------------ plan


def _build_phase(key: str, statement: str, ref: str, after: Sequence[str] = ("design",)) -> dict[str, Any]:
    return {
        "phase_key": key,
        "title": _short(f"Build: {statement}", limit(DeliveryPlan, "delivery_phases", "title")),
        "objective": _short(statement, limit(DeliveryPlan, "delivery_phases", "objective")),
        "requirement_refs": [ref],
        "depends_on_phase_keys": list(after),
    }


@responder("delivery.plan")
def plan(req: OfflineRequest) -> dict[str, Any]:
    requirement = parse_requirement(_requirement(req))
    statements = requirement.planner_statements() or [_short(_requirement(req), 300) or "the requirement"]
    refs = [f"R{i}" for i in range(1, len(statements) + 1)]
    builds = [_build_phase(f"build-{ref.lower()}", s, ref) for s, ref in zip(statements, refs, strict=True)]
    phases = [
        {"phase_key": "design", "title": "Design the change", "objective": "Agree interfaces, data shapes and UI states.",
         "requirement_refs": refs, "depends_on_phase_keys": []},
        *builds,
        {"phase_key": "verify", "title": "Verify and hand over", "objective": "Test every acceptance criterion.",
         "requirement_refs": refs, "depends_on_phase_keys": [b["phase_key"] for b in builds]},
    ]
    criteria = [
        {"criterion_key": f"AC-{ref}", "description": _short(s, _CRITERION), "requirement_refs": [ref]}
        for s, ref in zip(statements, refs, strict=True)
    ]
    title = requirement.label()
    value = {
        "summary": _short(f"Plan for {title}: {len(statements)} requirement(s) in {len(phases)} phases.",
                          limit(DeliveryPlan, "summary")),
        "requirement_refs": refs,
        "scope": {"included": [_short(s, limit(DeliveryPlan, "scope", "included", "[]")) for s in statements],
                  "excluded": requirement.exclusions[: limit(DeliveryPlan, "scope", "excluded")]},
        "assumptions": requirement.assumptions[: limit(DeliveryPlan, "assumptions")],
        "delivery_phases": phases,
        "acceptance_criteria": criteria,
    }
    return {**value, "markdown": plan_markdown(value, title)}


@responder("delivery.plan_revision")
def plan_revision(req: OfflineRequest) -> dict[str, Any]:
    current = req.inputs.get("plan") or {}
    findings = req.inputs.get("findings") or []
    phases = [dict(p) for p in current.get("delivery_phases", [])]
    criteria = [dict(c) for c in current.get("acceptance_criteria", [])]
    refs = list(current.get("requirement_refs", []))
    added = []
    for finding in findings:
        statement = (finding.get("evidence") or [finding["suggested_action"]])[0]
        if any(covers(statement, c["description"]) for c in criteria):
            continue
        ref = f"R{len(refs) + 1}"
        refs.append(ref)
        key = f"fix-{finding['finding_id'].lower()}"
        criteria.append({"criterion_key": f"AC-{ref}", "description": _short(statement, _CRITERION), "requirement_refs": [ref]})
        after = ["design"] if any(p["phase_key"] == "design" for p in phases) else []
        phases.insert(len(phases) - 1 if phases else 0, _build_phase(key, statement, ref, after))
        added.append(finding["finding_id"])
    for phase in phases:
        if phase["phase_key"] in ("verify",):
            phase["requirement_refs"] = refs[: limit(DeliveryPlan, "delivery_phases", "requirement_refs")]
            phase["depends_on_phase_keys"] = [p["phase_key"] for p in phases if p["phase_key"] not in ("design", "verify")][
                : limit(DeliveryPlan, "delivery_phases", "depends_on_phase_keys")]
        if phase["phase_key"] == "design":
            phase["requirement_refs"] = refs[: limit(DeliveryPlan, "delivery_phases", "requirement_refs")]
    label = parse_requirement(_requirement(req)).label()
    summary = (f"Plan for {label}: {len(refs)} requirement(s) in {len(phases)} phases, "
               f"revised for findings {', '.join(added) or 'none'}.")
    value = {
        "summary": _short(summary, limit(DeliveryPlan, "summary")),
        "requirement_refs": refs[: limit(DeliveryPlan, "requirement_refs")],
        "scope": current.get("scope") or {"included": ["the requirement"], "excluded": []},
        "assumptions": current.get("assumptions", []),
        "delivery_phases": phases[: limit(DeliveryPlan, "delivery_phases")],
        "acceptance_criteria": criteria[: limit(DeliveryPlan, "acceptance_criteria")],
    }
    return {**value, "markdown": plan_markdown(value, label)}


# ------------------------------------------------------------------------------------ tasks


def tasks_for_plan(plan_value: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One task per phase, in phase order, with the criteria of the phase's requirements."""
    criteria = plan_value.get("acceptance_criteria", [])
    tasks = []
    for phase in plan_value.get("delivery_phases", []):
        refs = phase["requirement_refs"]
        own = [c["description"] for c in criteria if len(refs) == 1 and set(c["requirement_refs"]) & set(refs)]
        key = phase["phase_key"].lower()
        if "verif" in key or "test" in key:
            own = [f"Automated tests cover {', '.join(c['criterion_key'] for c in criteria[:10])}."]
        tasks.append(
            {
                "task_id": f"T-{phase['phase_key']}"[:_TASK_ID],
                "title": _short(phase["title"], limit(DeliveryTasks, "tasks", "title")),
                "target_area": _area(phase["objective"] + " " + phase["title"]),
                "acceptance_criteria": (own or [phase["objective"]])[: limit(DeliveryTasks, "tasks", "acceptance_criteria")],
                "requirement_refs": refs[: limit(DeliveryTasks, "tasks", "requirement_refs")],
                "depends_on_task_ids": [f"T-{d}"[:_TASK_ID] for d in phase["depends_on_phase_keys"]][
                    : limit(DeliveryTasks, "tasks", "depends_on_task_ids")],
            }
        )
    return tasks[:_TASKS]


@responder("delivery.tasks")
def tasks(req: OfflineRequest) -> dict[str, Any]:
    plan_value = req.inputs.get("plan") or {}
    items = tasks_for_plan(plan_value) or [
        {"task_id": "T-1", "title": "Implement the requirement", "target_area": "application",
         "acceptance_criteria": ["The requirement is met."], "requirement_refs": ["R1"], "depends_on_task_ids": []}
    ]
    summary = f"{len(items)} task(s) following the plan's phases."
    return {"summary": summary, "markdown": tasks_markdown(items, summary), "tasks": items}


@responder("delivery.task_revision")
def task_revision(req: OfflineRequest) -> dict[str, Any]:
    plan_value = req.inputs.get("plan") or {}
    current = req.inputs.get("tasks") or {}
    findings = req.inputs.get("findings") or []
    items = [dict(t) for t in current.get("tasks", [])]
    known = {t["task_id"] for t in items}
    # Tasks follow the (possibly revised) plan: add the tasks of phases that have none yet.
    for task in tasks_for_plan(plan_value):
        if task["task_id"] not in known:
            task["depends_on_task_ids"] = [d for d in task["depends_on_task_ids"] if d in known or d == "T-design"]
            items.insert(max(len(items) - 1, 0), task)
            known.add(task["task_id"])
    for finding in findings:
        text = " ".join([finding["description"], *finding.get("evidence", [])])
        if any(covers(finding["suggested_action"], " ".join(t["acceptance_criteria"])) for t in items):
            continue
        if any(covers(e, " ".join(t["acceptance_criteria"])) for e in finding.get("evidence", []) for t in items):
            continue
        items.insert(
            max(len(items) - 1, 0),
            {
                "task_id": f"T-fix-{finding['finding_id'].lower()}",
                "title": _short(f"Address {finding['finding_id']}: {finding['description']}",
                                limit(DeliveryTasks, "tasks", "title")),
                "target_area": _area(text),
                "acceptance_criteria": [_short(finding["suggested_action"], limit(DeliveryTasks, "tasks", "acceptance_criteria", "[]"))],
                "requirement_refs": [f"finding {finding['finding_id']}"],
                "depends_on_task_ids": ["T-design"] if "T-design" in known else [],
            },
        )
    ids = {t["task_id"] for t in items}
    for task in items:
        task["depends_on_task_ids"] = [d for d in task["depends_on_task_ids"] if d in ids and d != task["task_id"]]
    verify = next((t for t in items if t["task_id"] == "T-verify"), None)
    if verify:
        verify["depends_on_task_ids"] = [t["task_id"] for t in items if t["task_id"] not in ("T-design", "T-verify")][
            : limit(DeliveryTasks, "tasks", "depends_on_task_ids")]
    summary = f"{len(items)} task(s), revised for findings {', '.join(f['finding_id'] for f in findings) or 'none'}."
    return {"summary": summary, "markdown": tasks_markdown(items[:_TASKS], summary), "tasks": items[:_TASKS]}


# ------------------------------------------------------------------------------------ reviews


def _finding(description: str, evidence: list[str], kind: str, requirement: str, severity: str,
             action: str, targets: list[str]) -> dict[str, Any]:
    return {
        "description": _short(description, limit(GeneralReview, "findings", "description")),
        "evidence": [_short(e, limit(GeneralReview, "findings", "evidence", "[]")) for e in evidence][
            : limit(GeneralReview, "findings", "evidence")],
        "finding_type": kind,
        "requirement": requirement,
        "severity": severity,
        "suggested_action": _short(action, limit(GeneralReview, "findings", "suggested_action")),
        "target_artifacts": targets,
    }


@responder("delivery.general_review")
def general_review(req: OfflineRequest) -> dict[str, Any]:
    requirement = parse_requirement(_requirement(req))
    plan_value = req.inputs.get("plan") or {}
    task_list = (req.inputs.get("tasks") or {}).get("tasks", [])
    criteria = plan_value.get("acceptance_criteria", [])
    findings = []
    for statement in requirement.reviewer_statements():
        if not any(covers(statement, c["description"]) for c in criteria):
            findings.append(_finding(
                f"No acceptance criterion covers a stated requirement: {_short(statement, 200)}",
                [statement], "issue", "required", "medium",
                f"Add an acceptance criterion and a task for: {_short(statement, 300)}", ["plan", "tasks"],
            ))
    task_text = " ".join(" ".join(t["acceptance_criteria"]) for t in task_list)
    for criterion in criteria:
        if not covers(criterion["description"], task_text):
            findings.append(_finding(
                f"No task delivers acceptance criterion {criterion['criterion_key']}.",
                [criterion["description"]], "issue", "required", "medium",
                f"Add a task whose acceptance criteria include {criterion['criterion_key']}.", ["tasks"],
            ))
    task_refs = {r for t in task_list for r in t["requirement_refs"]}
    misaligned = [r for r in plan_value.get("requirement_refs", []) if r not in task_refs]
    verification = " ".join(t["title"] + " " + " ".join(t["acceptance_criteria"]) for t in task_list)
    if not re.search(r"\b(test|tests|verify|verification)\b", verification, re.I):
        findings.append(_finding("The tasks contain no explicit verification step.", [], "observation", "advisory",
                                 "low", "Add a task that tests the acceptance criteria.", ["tasks"]))
    required = any(f["finding_type"] == "issue" and f["requirement"] == "required" for f in findings)
    disposition = "needs_changes" if required or misaligned else "pass"
    return {
        "role": "general",
        "disposition": disposition,
        "plan_task_alignment": "misaligned" if misaligned else "aligned",
        "findings": findings[:_FINDINGS],
        "markdown": review_markdown("General review", disposition, findings),
        "summary": f"{len(findings)} finding(s); {len(criteria)} criteria checked against {len(task_list)} task(s).",
    }


@responder("delivery.risk_review")
def risk_review(req: OfflineRequest) -> dict[str, Any]:
    text = _requirement(req)
    levels = {
        level: _signals(req, "rubric", "Risk rubric", [level], FALLBACK_RISK[level])
        for level in ("blocker", "high", "medium")
    }
    findings = []
    for level, items in levels.items():
        for label, phrase in matched(text, items):
            if level == "blocker":
                findings.append(_finding(f"{label}.", [f"requirement mentions \"{phrase}\""], "issue", "required",
                                         "blocker", f"Resolve before implementation: {label.lower()}.", ["plan"]))
            else:
                findings.append(_finding(f"{label}.", [f"requirement mentions \"{phrase}\""], "observation",
                                         "advisory", level, f"Plan mitigations and tests for: {label.lower()}.", ["plan"]))
    task_list = (req.inputs.get("tasks") or {}).get("tasks", [])
    if task_list and not any(re.search(r"\btests?\b", " ".join(t["acceptance_criteria"]), re.I) for t in task_list):
        findings.append(_finding("No task states how the change is tested.", [], "observation", "advisory", "medium",
                                 "Add automated tests to the tasks.", ["tasks"]))
    severity = min((f["severity"] for f in findings), key=SEVERITIES.index, default="low")
    return {
        "role": "risk",
        "severity": severity,
        "findings": findings[:_FINDINGS],
        "markdown": review_markdown("Risk review", severity, findings),
        "summary": f"Overall risk {severity}; {len(findings)} finding(s).",
    }


@responder("delivery.boundary_review")
def boundary_review(req: OfflineRequest) -> dict[str, Any]:
    text = _requirement(req)
    hard = matched(text, _signals(req, "governance", "Delivery boundaries", ["hard"], FALLBACK_BOUNDARY["blocked"]))
    soft = matched(text, _signals(req, "governance", "Delivery boundaries", ["needs review"], FALLBACK_BOUNDARY["needs_review"]))
    findings = [
        _finding(f"The requirement crosses a hard boundary: {label}.", [f"signal \"{phrase}\""], "issue", "required",
                 "blocker", "Remove this part of the requirement or take it outside the delivery chain.", ["plan"])
        for label, phrase in hard
    ] + [
        _finding(f"The requirement touches a guarded area: {label}.", [f"signal \"{phrase}\""], "observation",
                 "advisory", "medium", "Have the owners of this area review the plan.", ["plan"])
        for label, phrase in soft
    ]
    status = "blocked" if hard else "needs_review" if soft else "passed"
    return {
        "role": "boundary",
        "boundary_status": status,
        "violations": [_short(label, limit(BoundaryReview, "violations", "[]")) for label, _ in hard][
            : limit(BoundaryReview, "violations")],
        "findings": findings[:_FINDINGS],
        "markdown": review_markdown("Boundary review", status, findings),
        "summary": f"Boundary {status}; {len(hard)} violation(s), {len(soft)} guarded area(s).",
    }


# ------------------------------------------------------------------------------------ polish


@responder("delivery.report_polish")
def report_polish(req: OfflineRequest) -> dict[str, Any]:
    summary = " ".join(req.inputs.get("summary", "").split()) or "The delivery chain finished."
    return {"summary": _short(f"In short: {summary[0].lower()}{summary[1:]}", limit(PolishedSummary, "summary"))}


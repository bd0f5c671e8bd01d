"""Valid delivery contract outputs for ScriptedModel scripts, with small knobs for each test."""

from __future__ import annotations

import copy
from typing import Any

from langchain_core.messages import AIMessage

from reins.graphs.delivery_chain import build_graph
from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS, ReviewerSpec
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.scripted import ScriptedModel

OUTPUT_KEYS = ("run_status", "report", "artifacts", "review_bundle", "post_review_decision", "revision",
               "policy_violation", "failure", "metrics", "trace")
REVIEW_TOOL = {spec.role: spec.tool for spec in DEFAULT_REVIEWERS}
FOCUS = {"general": "coverage", "risk": "security", "boundary": "governance"}


def pre_execute(**overrides: Any) -> dict[str, Any]:
    value = {
        "branch": "execute",
        "assumptions": ["The banner reuses the existing notification component."],
        "planning_focus": "Cover every requirement with acceptance criteria.",
        "task_focus": "Small ordered tasks.",
        "review_focus": {role: FOCUS.get(role, f"{role} focus") for role in DEFAULT_REVIEWERS.roles},
        "reviewer_roles": list(DEFAULT_REVIEWERS.roles),
        "stage_intents": [
            {"stage": "plan", "objective": "Plan the banner."},
            {"stage": "tasks", "objective": "Break it down."},
            {"stage": "review", "objective": "Review it."},
        ],
    }
    value.update(overrides)
    return value


def pre_clarification() -> dict[str, Any]:
    return {
        "branch": "clarification_required",
        "missing_information": ["Which page should change."],
        "next_step": "Name the page and the expected behaviour.",
        "reason": "The requirement is vague.",
    }


def pre_blocked() -> dict[str, Any]:
    return {
        "branch": "blocked",
        "boundary_evidence": ["Asks to disable the review."],
        "next_step": "Remove the request to bypass reviews.",
        "reason": "Out of remit.",
    }


def plan(**overrides: Any) -> dict[str, Any]:
    value = {
        "summary": "Show a banner at the request limit.",
        "markdown": "# Plan\n\n- design\n- build\n- verify",
        "requirement_refs": ["R1", "R2"],
        "scope": {"included": ["banner"], "excluded": []},
        "assumptions": [],
        "delivery_phases": [
            {"phase_key": "design", "title": "Design", "objective": "Agree the UI.", "requirement_refs": ["R1"],
             "depends_on_phase_keys": []},
            {"phase_key": "build", "title": "Build", "objective": "Build it.", "requirement_refs": ["R1", "R2"],
             "depends_on_phase_keys": ["design"]},
        ],
        "acceptance_criteria": [
            {"criterion_key": "AC-1", "description": "A banner appears at the limit.", "requirement_refs": ["R1"]},
            {"criterion_key": "AC-2", "description": "The banner shows the retry time.", "requirement_refs": ["R2"]},
        ],
    }
    value.update(overrides)
    return value


def tasks(**overrides: Any) -> dict[str, Any]:
    value = {
        "summary": "Two tasks.",
        "markdown": "# Tasks\n\n- [ ] T1\n- [ ] T2",
        "tasks": [
            {"task_id": "T1", "title": "Banner component", "target_area": "web UI",
             "acceptance_criteria": ["A banner appears at the limit."], "requirement_refs": ["R1"],
             "depends_on_task_ids": []},
            {"task_id": "T2", "title": "Retry time", "target_area": "web UI",
             "acceptance_criteria": ["The banner shows the retry time."], "requirement_refs": ["R2"],
             "depends_on_task_ids": ["T1"]},
        ],
    }
    value.update(overrides)
    return value


def finding(description: str = "Recovery state has no acceptance criterion.", *, kind: str = "issue",
            requirement: str = "required", severity: str = "medium", targets: tuple[str, ...] = ("plan",),
            action: str = "Add an acceptance criterion for the recovery state.") -> dict[str, Any]:
    return {
        "description": description,
        "evidence": ["requirement paragraph 2"],
        "finding_type": kind,
        "requirement": requirement,
        "severity": severity,
        "suggested_action": action,
        "target_artifacts": list(targets),
    }


def general(disposition: str = "pass", alignment: str = "aligned", findings: list | None = None) -> dict[str, Any]:
    return {"role": "general", "disposition": disposition, "plan_task_alignment": alignment,
            "findings": findings or [], "markdown": "# General review", "summary": f"general {disposition}"}


def risk(severity: str = "low", findings: list | None = None) -> dict[str, Any]:
    return {"role": "risk", "severity": severity, "findings": findings or [], "markdown": "# Risk review",
            "summary": f"risk {severity}"}


def boundary(status: str = "passed", findings: list | None = None, violations: list | None = None) -> dict[str, Any]:
    if violations is None:
        violations = ["persists raw artifacts"] if status == "blocked" else []
    return {"role": "boundary", "boundary_status": status, "violations": violations, "findings": findings or [],
            "markdown": "# Boundary review", "summary": f"boundary {status}"}


def post(target: str = "plan", *others: str) -> dict[str, Any]:
    return {
        "rationale": "Findings need changes.",
        "recommendations": [
            {"target": t, "summary": f"Revise the {t}.", "required_actions": [f"Fix the {t}."],
             "acceptance_suggestion": "A person checks it."}
            for t in (target, *others)
        ],
    }


def call(name: str, index: int = 0, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"call_{index}_{name}", "type": "tool_call"}


def turn(*names: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[call(name, i) for i, name in enumerate(names)])


def honest_manager() -> list[AIMessage]:
    return [turn("plan-subagent"), turn("task-subagent"), turn(*DEFAULT_REVIEWERS.tools)]


def passing_review(spec: ReviewerSpec) -> dict[str, Any]:
    """A passing review from any reviewer of the table (its first ``ok`` verdict)."""
    known = {"general": general, "risk": risk, "boundary": boundary}
    if spec.role in known:
        return known[spec.role]()
    verdict = next(value for value, level in spec.levels.items() if level == "ok")
    return {"role": spec.role, spec.verdict_field: verdict, "findings": [], "markdown": f"# {spec.title} review",
            "summary": f"{spec.role} {verdict}"}


def script(**overrides: Any) -> dict[str, Any]:
    """A full pass-run script; override any contract's responses by keyword (dots → underscores)."""
    base = {
        "delivery.supervisor_pre": [pre_execute()],
        "delivery.manager": honest_manager(),
        "delivery.plan": [plan()],
        "delivery.tasks": [tasks()],
        **{spec.contract: [passing_review(spec)] for spec in DEFAULT_REVIEWERS},
        "delivery.supervisor_post": [post()],
    }
    for key, value in overrides.items():
        name = "delivery." + key
        if value is None:
            base.pop(name, None)
        else:
            base[name] = value
    return copy.copy(base)


def run(model: ScriptedModel, requirement: str = "Show a banner when the request limit is reached.", **options: Any):
    graph = build_graph(ModelSet.uniform(model), **options)
    return graph.invoke({"requirement": requirement})


def stream(model: ScriptedModel, payload: dict[str, Any], **options: Any) -> tuple[dict[str, Any], list[dict]]:
    graph = build_graph(ModelSet.uniform(model), **options)
    events: list[dict] = []
    final: dict[str, Any] = {}
    for mode, chunk in graph.stream(payload, stream_mode=["custom", "values"]):
        if mode == "custom":
            events.append(chunk)
        else:
            final = chunk
    return {k: v for k, v in final.items() if k in OUTPUT_KEYS}, events

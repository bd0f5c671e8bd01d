"""Prompts of the two simpler baselines. Inputs are tagged like the delivery chain's
(``<requirement>``, ``<governance>``, ``<rubric>``, ``<plan_markdown>`` …) and every answer is free
text that ends in marker lines — the only thing those baselines read back."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from reins.evals.markers import REVIEW_LABELS
from reins.nodes.delivery.prompts import render_blocks
from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS, ReviewerSpec
from reins.runtime.resources import PROMPT_CHARS, cut_for_prompt


def _choices(spec: ReviewerSpec) -> str:
    return " | ".join(spec.levels)


SINGLE_AGENT = f"""You are a delivery assistant. For the requirement below, write in markdown:
a plan (one acceptance criterion per requirement statement, as "- AC-R<n>: ..."), a task list
("- [ ] T<n>: ..."), then review your own work and end with these marker lines, one per line:
{chr(10).join(f"{REVIEW_LABELS[spec.role]}: {_choices(spec)}" for spec in DEFAULT_REVIEWERS)}
STATUS: pass | needs_changes | blocked | clarification_required
Use STATUS: clarification_required (and no reviews) when the requirement is too vague to plan, and
STATUS: blocked when a review blocks or the requirement asks to bypass the delivery controls."""

FIXED_PLAN = """You are the planner of a fixed delivery pipeline. Write a markdown plan with a section
"## Acceptance criteria" listing one criterion per requirement statement as "- AC-R<n>: ...".
End with one marker line: READINESS: ready | clarification_required."""

FIXED_TASKS = """You are the task writer of a fixed delivery pipeline. Break the plan into tasks, one per
acceptance criterion, as "- [ ] T-R<n>: ...", plus a final verification task."""

# Each reviewer of the table, as the fixed pipeline asks it: the chain reviewer's instruction, answered in text.
FIXED_REVIEW = {
    spec.role: f"You are the {spec.title.lower()} reviewer. {spec.instruction}\n"
               f"List findings, then end with one marker line: VERDICT: {_choices(spec)}"
    for spec in DEFAULT_REVIEWERS
}

# Which context documents each baseline call sees (the same documents the chain's stages see).
CONTEXT_OF = {
    "single": ("governance", "rubric"),
    "plan": ("Plan rubric", "Engineering rules"),
    "tasks": ("Task rubric", "Engineering rules"),
    **{spec.role: spec.context for spec in DEFAULT_REVIEWERS},
}


def _context(stage: str, blocks: Sequence[Mapping[str, str]]) -> str:
    wanted = CONTEXT_OF[stage]
    return render_blocks([b for b in blocks if b["kind"] in wanted or b["title"] in wanted])


def _requirement(text: str) -> str:
    return f"<requirement>\n{cut_for_prompt(text, PROMPT_CHARS)}\n</requirement>"


def single_agent_messages(requirement: str, blocks: Sequence[Mapping[str, str]]) -> list[BaseMessage]:
    return [SystemMessage(content=SINGLE_AGENT),
            HumanMessage(content=f"{_requirement(requirement)}\n{_context('single', blocks)}")]


def fixed_plan_messages(requirement: str, blocks: Sequence[Mapping[str, str]]) -> list[BaseMessage]:
    return [SystemMessage(content=FIXED_PLAN),
            HumanMessage(content=f"{_requirement(requirement)}\n{_context('plan', blocks)}")]


def fixed_tasks_messages(requirement: str, blocks: Sequence[Mapping[str, str]], plan: str) -> list[BaseMessage]:
    body = f"{_requirement(requirement)}\n{_context('tasks', blocks)}\n<plan_markdown>\n{plan}\n</plan_markdown>"
    return [SystemMessage(content=FIXED_TASKS), HumanMessage(content=body)]


def fixed_review_messages(
    role: str, requirement: str, blocks: Sequence[Mapping[str, str]], plan: str, tasks: str
) -> list[BaseMessage]:
    body = (f"{_requirement(requirement)}\n{_context(role, blocks)}\n<plan_markdown>\n{plan}\n</plan_markdown>\n"
            f"<tasks_markdown>\n{tasks}\n</tasks_markdown>")
    return [SystemMessage(content=FIXED_REVIEW[role]), HumanMessage(content=body)]

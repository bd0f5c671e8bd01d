"""Prompts of the tasklist agent's four contracts.

Inputs are tagged (``<plan>``, ``<readiness>``, ``<allowed_actions>``, ...) so any model can find
them, and travel as structured values in the call's metadata too (``reins.runtime.llm.prompt_inputs``), where
the offline stand-in reads them. System prompts name the blocks in words, never as tags, so a tag
appears only around its real content. The split strategy reaches the draft prompt twice: as JSON and
as explicit, binding constraints.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from reins.policies.tasklist.plan import OPTIONAL_CONTEXT_ALLOWLIST
from reins.runtime.llm.prompt_inputs import Prompt
from reins.runtime.resources import PLAN_PROMPT_CHARS, PROMPT_CHARS, cut_for_prompt
from reins.nodes.tasklist.state import Strategy, TasklistState

PLANNING_SYSTEM = """You are the planning step of a controlled tasklist agent. The runtime has read a \
version plan and judged its readiness by rules. Choose exactly ONE next action, and only one listed in \
the allowed_actions block; any other action stops the run.

Actions (field "type" of "decision"):
- proceed_to_tasklist_strategy {reason}: the plan is complete enough to split into a task list.
- proceed_with_manual_review_items {review_items: 1..5 of {title <=80, detail <=500, severity info|warning}, reason}:
  the plan is usable but has weak spots a person must confirm.
- read_optional_context {resource_uri, reason}: one extra document would make the split safer; the URI \
must be one of the optional_context_allowlist block. At most one read per run.
- ask_clarification {question <=300, reason}: a key answer is missing (e.g. the version or the goals).
- stop_with_boundary_message {message <=800, reason}: the request is outside this agent's boundary \
(scanning source code or directories, writing files or docs, reading old task lists, planning from a bare goal).

Both proceed_* actions MUST include "strategy" {granularity coarse|medium|detailed, \
expected_step_range [min 1..20, max 1..30], grouping 1..8 short strings, priority 1..8 short strings, \
reason}; the other three MUST NOT include it. Write "type" first; every reason is one short sentence. \
Answer with one JSON object {"decision": {...}, "strategy": {...}?}."""

STRATEGY_SYSTEM = """You decide how to split a version plan into a task list. Answer with one JSON object \
{granularity coarse|medium|detailed, expected_step_range [min 1..20, max 1..30] with min <= max, \
grouping 1..8 strings <=120 (how steps are grouped), priority 1..8 strings <=120 (what comes first), \
reason <=500}. Use only the plan's own scope; the optional context, when given, is background only. \
If a reviewer's feedback is given, revise the previous strategy to answer it."""

# The shape the structure rules accept, as the model is to fill it: a small model copies a shape far more
# reliably than it follows a list of rules, and a line per item keeps the answer short (a draft written
# as prose ran to thousands of characters and still missed sections). A test fills it and validates it.
DRAFT_SHAPE = """# <short title>
Source plan: <plan URI>
## Goals
- <a goal of the plan, one line>
## Non-goals
- <a non-goal of the plan, one line>
## Steps
### Step 1: <title>
- [ ] <task, one line>
- [ ] <test to add or run for it>
### Step 2: <title>
- [ ] <task, one line>
- [ ] <test to add or run for it>
## Test plan
- <lint, typecheck, build and the tests to run>
## Risks and confirmation points
- <a risk a person must confirm, one line>
## Execution discipline: pause for review after each step
- Pause for review after each step."""

DRAFT_SYSTEM = f"""Write the task list (markdown) for the version plan, in exactly this shape:

{DRAFT_SHAPE}

Rules: 2..6 checklist items per step, at least one of them a test; \
every line short (under 20 words), no paragraphs; the title line is replaced by the runtime's header; \
do not add capabilities the plan does not contain. Answer with the markdown only."""

REVISION_SYSTEM = """You revise a task-list draft once. Fix ONLY the findings in the findings block; keep \
everything else as it is; do not add capabilities the plan does not contain. Answer with the full \
revised markdown only."""

FINDING_HINTS: Mapping[str, str] = {
    "missing_title": "add a level-1 title",
    "missing_plan_uri": "mention the source plan URI",
    "missing_steps": "organise the work into '### Step N: ...' sections",
    "missing_checklist": "write tasks as '- [ ] ...' checklist items",
    "missing_verification": "add verification items (tests, build, lint)",
    "missing_goals": "add a Goals section taken from the plan",
    "missing_non_goals": "add a Non-goals section taken from the plan",
    "missing_execution_discipline": "add an Execution discipline section (pause for review after each step)",
    "missing_engineering_verification": "add engineering verification (lint, typecheck, build, test)",
    "step_missing_verification": "add a verification item (a test to add or run) to this step",
}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1)


def _block(name: str, content: Any) -> str:
    return f"<{name}>\n{content if isinstance(content, str) else _json(content)}\n</{name}>"


AGENT_PREAMBLE = """You are one step of a controlled tasklist agent that turns a version plan into a \
task list a person reviews. The runtime reads the plan, judges its readiness by rules, validates every \
answer and decides what happens next. The inputs of this call come first, then your step's instruction."""


def _prompt(instruction: str, parts: Sequence[str | tuple[str, Any]]) -> Prompt:
    """The messages of one call, from what changes least to what changes most, so a server's prefix cache
    serves each call's start from the previous one: the system message is the same for every call of
    every run; the plan comes first in the user turn (every call of a run has it), then this call's own
    inputs, and the step's instruction last. Free-text parts go as they are, ``(name, value)`` parts as
    tagged blocks; the named values are the call's structured inputs too."""
    inputs = dict(part for part in parts if isinstance(part, tuple))
    text = "\n\n".join([*(part if isinstance(part, str) else _block(*part) for part in parts),
                         f"<your_step>\n{instruction}\n</your_step>"])
    return Prompt([SystemMessage(content=AGENT_PREAMBLE), HumanMessage(content=text)], inputs)


def strategy_constraints(strategy: Strategy) -> str:
    """The strategy as explicit, binding draft constraints (not a suggestion)."""
    low, high = strategy["expected_step_range"]
    return "\n".join(
        [
            "Task-list split strategy (binding constraints):",
            f"- Keep the number of steps between {low} and {high}.",
            f"- Organise step titles and their order around: {'; '.join(strategy['grouping'])}.",
            f"- Order checklist items inside each step by: {'; '.join(strategy['priority'])}.",
            f"- Granularity: {strategy['granularity']}.",
            "- Do not add any capability the version plan does not contain.",
        ]
    )


def _plan_blocks(state: TasklistState) -> list[tuple[str, Any]]:
    return [
        ("plan_uri", state["plan_uri"]),
        ("target_version", state["plan"]["target_version"]),
        ("plan_sections", state["plan"]["sections"]),
        ("plan", cut_for_prompt(state["plan_text"], PLAN_PROMPT_CHARS)),
    ]


def _context_blocks(state: TasklistState) -> list[tuple[str, Any]]:
    context = state.get("context_doc") or {}
    if not context.get("text"):
        return []
    return [("context_uri", context["uri"]), ("context", cut_for_prompt(context["text"], PROMPT_CHARS))]


def planning_messages(state: TasklistState) -> list[BaseMessage]:
    return _prompt(PLANNING_SYSTEM, [
        *_plan_blocks(state),
        ("optional_context_allowlist", list(OPTIONAL_CONTEXT_ALLOWLIST)),
        ("user_goal", state.get("user_goal") or "(none)"),
        ("readiness", state["readiness"]),
        ("allowed_actions", list(state["allowed_actions"])),
    ])


def strategy_messages(state: TasklistState, feedback: str | None) -> list[BaseMessage]:
    parts = [*_plan_blocks(state), *_context_blocks(state)]
    if feedback:
        parts += [("previous_strategy", state.get("strategy") or {}), ("feedback", feedback)]
    return _prompt(STRATEGY_SYSTEM, parts)


def draft_messages(state: TasklistState) -> list[BaseMessage]:
    strategy = state["strategy"]
    return _prompt(DRAFT_SYSTEM, [
        *_plan_blocks(state),
        *_context_blocks(state),
        ("strategy", strategy),
        strategy_constraints(strategy),
    ])


def revision_messages(state: TasklistState, fix_now: Sequence[str]) -> list[BaseMessage]:
    findings = [
        {"id": issue, "fix": FINDING_HINTS.get(issue.split(":", 1)[0], "fix this structural finding")}
        for issue in fix_now
    ]
    return _prompt(REVISION_SYSTEM, [
        *_plan_blocks(state),
        ("strategy", state["strategy"]),
        strategy_constraints(state["strategy"]),
        ("draft", state["drafts"]["v1"]),
        ("findings", findings),
    ])

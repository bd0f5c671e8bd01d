"""Shared builders for the tasklist tests: scripted responses, drafts, graphs."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reins.graphs.tasklist_agent import build_graph
from reins.runtime.llm.models import ModelSet
from reins.runtime.resources import ResourceResolver
from reins.runtime.standins.scripted import ScriptedModel

READY = "docs://versions/v0.2.0-ready.md"
NEEDS_REVIEW = "docs://versions/v0.3.0-needs-review.md"
BLOCKED = "docs://versions/draft-ideas.md"

STRATEGY: dict[str, Any] = {
    "granularity": "medium",
    "expected_step_range": [2, 4],
    "grouping": ["Filtering", "Export"],
    "priority": ["Interfaces first"],
    "reason": "Two groups of work.",
}


def proceed(strategy: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {"decision": {"type": "proceed_to_tasklist_strategy", "reason": "ready"}, "strategy": dict(strategy or STRATEGY)}


def proceed_with_items(*titles: str) -> dict[str, Any]:
    items = [{"title": t, "detail": f"{t}: confirm with the owner.", "severity": "warning"} for t in titles]
    return {
        "decision": {"type": "proceed_with_manual_review_items", "review_items": items, "reason": "weak sections"},
        "strategy": dict(STRATEGY),
    }


def read_context(uri: str) -> dict[str, Any]:
    return {"decision": {"type": "read_optional_context", "resource_uri": uri, "reason": "background"}}


def ask(question: str = "Which version is this for?") -> dict[str, Any]:
    return {"decision": {"type": "ask_clarification", "question": question, "reason": "no version"}}


def boundary(message: str = "Scanning source code is outside this agent.") -> dict[str, Any]:
    return {"decision": {"type": "stop_with_boundary_message", "message": message, "reason": "out of scope"}}


SECTIONS = {
    "goals": "## Goals\n- Export the audit log.\n",
    "non_goals": "## Non-goals\n- No scheduled exports.\n",
    "steps": (
        "## Steps\n\n### Step 1: Filter\n- [ ] Implement the date filter\n- [ ] Add unit tests for the filter\n\n"
        "### Step 2: Export\n- [ ] Implement the CSV export\n- [ ] Run the e2e test for the export\n"
    ),
    "test_plan": "## Test plan\n- Unit and e2e tests.\n",
    "risks": "## Risks\n- Large exports may be slow.\n",
    "discipline": "## Execution discipline (pause for review)\n- Pause after each step and wait for review; run lint and build.\n",
}


def draft(*without: str, title: str = "# Draft", extra: str = "") -> str:
    """A task-list draft with every section except ``without`` (a complete one passes validation)."""
    parts = [title, *(text for name, text in SECTIONS.items() if name not in without), extra]
    return "\n\n".join(p for p in parts if p)


PASSING = draft()
NEEDS_NON_GOALS = draft("non_goals")  # missing_non_goals: fixed now
MANUAL_ONLY = draft("risks")  # weak_risks: manual review only
FAILING = "# Notes\n\nWe will do the export somehow.\n"  # no steps, checklist or verification


def scripted(**script: Any) -> ScriptedModel:
    return ScriptedModel({name.replace("__", "."): value for name, value in script.items()})


def tasklist_script(decision: Any = None, draft_text: str = PASSING, **more: Any) -> ScriptedModel:
    responses: dict[str, Any] = {
        "tasklist.planning_decision": [decision or proceed()],
        "tasklist.draft": [draft_text],
    }
    responses.update({name.replace("__", "."): value for name, value in more.items()})
    return ScriptedModel(responses)


def graph_for(model: ScriptedModel, **options: Any):
    return build_graph(models=ModelSet.uniform(model), **options)


def docs_root(tmp_path: Path, files: Mapping[str, str]) -> ResourceResolver:
    """A docs root of our own (plans and notes), for context-read tests."""
    for relative, text in files.items():
        target = tmp_path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return ResourceResolver(docs_root=tmp_path)


def steps_of(result: Mapping[str, Any]) -> list[str]:
    return [entry["step"] for entry in result["trace"]]

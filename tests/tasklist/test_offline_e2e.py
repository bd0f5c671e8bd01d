"""Every bundled version plan reaches its intended final decision on the offline model, end to end."""

from __future__ import annotations

import pytest

from reins.graphs.tasklist_agent import build_graph
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.offline import OfflineModel
from reins.runtime.resources import ResourceResolver
from tests.tasklist.builders import steps_of

# plan → (final decision, what happened on the way)
BUNDLED = {
    "v0.2.0-ready.md": ("final", "proceed_to_tasklist_strategy", 1),
    "v0.2.1-zh-ready.md": ("final", "proceed_to_tasklist_strategy", 1),
    "v0.3.0-needs-review.md": ("final_with_manual_review_items", "proceed_with_manual_review_items", 1),
    "draft-ideas.md": ("stopped", "ask_clarification", None),
    "v0.4.0-overscoped.md": ("stopped", "stop_with_boundary_message", None),
    "v0.2.2-needs-revision.md": ("final", "proceed_to_tasklist_strategy", 2),
    "v0.2.3-runtime-context.md": ("final", "read_optional_context", 1),
}


@pytest.fixture(scope="module")
def offline_graph():
    return build_graph(models=ModelSet.uniform(OfflineModel()), resolver=ResourceResolver())


def test_every_bundled_plan_is_covered():
    listed = {p.name for p in ResourceResolver().docs_root.joinpath("versions").glob("*.md")}
    assert listed == set(BUNDLED)


@pytest.mark.parametrize("plan", sorted(BUNDLED))
def test_bundled_plan_reaches_its_intended_final_decision(offline_graph, plan):
    decision, action, revision = BUNDLED[plan]
    result = offline_graph.invoke({"request": f"/tasklist docs://versions/{plan}"})
    assert result["final_decision"] == decision, result["summary"]
    assert result["decision"]["decision"]["type"] == action
    if revision is None:
        assert result["artifact"] is None and result["message"]
    else:
        assert result["artifact"]["metadata"]["revision"] == revision
        assert result["artifact"]["metadata"]["validated"] is True


def test_the_chinese_plan_gets_a_chinese_task_list(offline_graph):
    result = offline_graph.invoke({"plan_uri": "docs://versions/v0.2.1-zh-ready.md"})
    markdown = result["artifact"]["markdown"]
    assert "## 版本目标" in markdown and "### 第 1 步" in markdown and "## 执行纪律" in markdown


def test_the_revision_plan_fixes_exactly_the_step_without_verification(offline_graph):
    result = offline_graph.invoke({"plan_uri": "docs://versions/v0.2.2-needs-revision.md"})
    assert result["validation"]["v1"]["issue_ids"] == ["step_missing_verification:step-4"]
    assert result["revision_effect"]["fixed_issues"] == ["step_missing_verification:step-4"]
    assert result["validation"]["v2"]["status"] == "pass"


def test_the_context_plan_reads_its_architecture_note(offline_graph):
    result = offline_graph.invoke({"plan_uri": "docs://versions/v0.2.3-runtime-context.md"})
    assert "read-optional-context" in steps_of(result)
    assert "runtime-boundary.md considered" in result["strategy"]["reason"]


def test_needs_review_plan_lists_its_weak_sections_for_a_person(offline_graph):
    result = offline_graph.invoke({"plan_uri": "docs://versions/v0.3.0-needs-review.md"})
    titles = [item["title"] for item in result["manual_review_items"]]
    assert titles[:2] == ["Plan states no non-goals", "Plan has no test plan"]
    assert "Task list has no test plan section" in titles


def test_two_step_mode_reaches_the_same_decision(offline_graph):
    result = offline_graph.invoke({"plan_uri": "docs://versions/v0.2.0-ready.md"}, context={"contract_mode": "two_step"})
    assert result["final_decision"] == "final"
    assert result["contract_metrics"]["tasklist.planning_decision"]["encoder_calls"] == 1

"""Entry, extraction, readiness and allowed-action rules (policies/tasklist/plan.py)."""

from __future__ import annotations

import pytest

from reins.policies.tasklist.plan import (
    allowed_actions,
    assess_readiness,
    extract_plan,
    find_version,
    plan_reference,
    section_for_heading,
)
from reins.schemas.tasklist import PLANNING_ACTIONS


@pytest.mark.parametrize(
    ("request_text", "plan_uri", "uri", "error"),
    [
        ("/tasklist docs://versions/v1.md", None, "docs://versions/v1.md", None),
        ("/tasklist docs://versions/v1.md please, v2.0.0", None, "docs://versions/v1.md", None),
        ("/tasklist (docs://versions/sub/v1.md).", None, "docs://versions/sub/v1.md", None),
        (None, "docs://versions/v1.md", "docs://versions/v1.md", None),
        ("/tasklist", None, None, "missing_reference"),
        ("", None, None, "missing_reference"),
        ("/tasklist make me a task list for the login page", None, None, "missing_reference"),
        ("/tasklist docs://README.md", None, None, "not_a_version_plan"),
        ("/tasklist docs://architecture/stream-core.md", None, None, "not_a_version_plan"),
        ("/tasklist https://example.com/plan.md", None, None, "not_a_version_plan"),
        ("/tasklist docs://versions/v1.txt", None, None, "not_a_version_plan"),
        ("/tasklist docs://versions/", None, None, "path_escape"),
        ("/tasklist docs://versions/../secrets.md", None, None, "path_escape"),
        ("/tasklist docs://versions/a/../../x.md", None, None, "path_escape"),
        ("/tasklist docs://versions//etc/passwd.md", None, None, "path_escape"),
        (None, "docs://versions/./v1.md", None, "path_escape"),
        ("/tasklist docs://versions/a.md docs://versions/b.md", None, None, "several_references"),
        ("/tasklist docs://versions/a.md project://latest-context", None, None, "several_references"),
    ],
)
def test_plan_reference(request_text, plan_uri, uri, error):
    reference = plan_reference(request_text, plan_uri)
    assert (reference.uri, reference.error) == (uri, error)
    if error:
        # Static messages: nothing the user typed is echoed back.
        assert reference.message and "secrets" not in reference.message and "passwd" not in reference.message


def test_user_goal_is_the_request_without_command_and_uri():
    reference = plan_reference("/tasklist docs://versions/a.md   for v1.2.3 please")
    assert reference.user_goal == "for v1.2.3 please"


@pytest.mark.parametrize(
    ("heading", "field"),
    [
        ("Goals", "goals"),
        ("Version goals", "goals"),
        ("版本目标", "goals"),
        ("目标", "goals"),
        ("Non-goals", "non_goals"),
        ("Non goals", "non_goals"),
        ("非目标", "non_goals"),
        ("本版不做", "non_goals"),
        ("明确不做", "non_goals"),
        ("Key Changes", "key_changes"),
        ("关键实现变更", "key_changes"),
        ("核心改动", "key_changes"),
        ("主要改动", "key_changes"),
        ("Important Interface Changes", "interface_changes"),
        ("接口变化", "interface_changes"),
        ("协议变化", "interface_changes"),
        ("Test Plan", "test_plan"),
        ("验证计划", "test_plan"),
        ("测试方案", "test_plan"),
        ("Summary", "summary"),
        ("摘要", "summary"),
        ("目标说明", "summary"),
        ("Risks", None),
        ("Background", None),
    ],
)
def test_section_for_heading(heading, field):
    assert section_for_heading(heading) == field


PLAN = """# v1.2.0 — Export

Intro paragraph.

## Goals
- First goal
* Second goal
1. Third goal
- [ ] Fourth goal

## Key Changes
```
- not an item, inside a fence
```
+ Only change

## Summary
A paragraph that
spans two lines.

Another paragraph.

## Risks
- ignored here
"""


def test_extract_plan_items_fences_and_paragraph_fallback():
    plan = extract_plan(PLAN, "docs://versions/x.md")
    assert plan.title == "v1.2.0 — Export"
    assert plan.items("goals") == ("First goal", "Second goal", "Third goal", "Fourth goal")
    assert plan.items("key_changes") == ("Only change",)
    assert plan.items("summary") == ("A paragraph that spans two lines.", "Another paragraph.")
    assert plan.items("non_goals") == ()
    assert plan.other_headings == ("Risks",)
    assert plan.target_version == "v1.2.0"


def test_extract_plan_with_chinese_headings():
    text = "# 方案\n\n## 版本目标\n- 目标一\n\n## 非目标\n- 不做甲\n\n## 关键改动\n- 改动一\n\n## 测试计划\n- 单元测试\n"
    plan = extract_plan(text, "docs://versions/v0.9.1.md")
    assert plan.items("goals") == ("目标一",)
    assert plan.items("non_goals") == ("不做甲",)
    assert plan.items("key_changes") == ("改动一",)
    assert plan.items("test_plan") == ("单元测试",)
    assert plan.target_version == "v0.9.1"


@pytest.mark.parametrize(
    ("goal", "uri", "title", "expected"),
    [
        ("for v3.0.0", "docs://versions/v2.0.0.md", "v1.0.0", "v3.0.0"),
        ("", "docs://versions/v2.0.0.md", "v1.0.0", "v2.0.0"),
        ("", "docs://versions/plan.md", "Plan v1.0.0", "v1.0.0"),
        ("", "docs://versions/plan.md", "Plan 1.0", "unknown"),
        ("", "docs://versions/v1.2.md", "", "unknown"),
    ],
)
def test_find_version_order(goal, uri, title, expected):
    assert find_version(goal, uri, title) == expected


FULL = "## Goals\n- g1\n- g2\n## Key Changes\n- k1\n## Non-goals\n- n\n## Interface Changes\n- i\n## Test Plan\n- t\n"


@pytest.mark.parametrize(
    ("text", "uri", "status", "missing", "weak"),
    [
        ("# v1.0.0 plan\n" + FULL, "docs://versions/a.md", "ready", [], []),
        ("# plan\n" + FULL, "docs://versions/a.md", "blocked", ["targetVersion"], []),
        ("# v1.0.0\n## Goals\n- g\n", "docs://versions/a.md", "blocked", ["planContent", "tasklistBasis"],
         ["Key Changes", "Non-goals", "Interface Changes", "Test Plan"]),
        ("# v1.0.0 plan\n" + FULL.replace("## Non-goals\n- n\n", "") + "padding " * 5, "docs://versions/a.md",
         "needs_review", [], ["Non-goals"]),
        ("# v1.0.0 plan\n" + FULL.replace("## Goals\n- g1\n- g2\n", "## Summary\n- s\n") + "## More\n- x\n" * 3,
         "docs://versions/a.md", "needs_review", ["Goals"], []),
        ("# v1.0.0 plan\n## Key Changes\n- only one change\n## Test Plan\n- t\n" + "padding " * 10,
         "docs://versions/a.md", "blocked", ["tasklistBasis", "Goals"], ["Non-goals", "Interface Changes"]),
        ("# v1.0.0 notes\n## Background\n" + "words " * 30, "docs://versions/a.md", "blocked",
         ["tasklistBasis", "summary/goals/keyChanges", "Goals"],
         ["Key Changes", "Non-goals", "Interface Changes", "Test Plan"]),
        # No version signal anywhere: neither title, URI nor content says version / release / vX.Y.Z.
        ("# Notes\n" + FULL + "padding " * 10, "demo://x/plan.md", "blocked", ["targetVersion", "versionPlanSignal"], []),
    ],
)
def test_assess_readiness(text, uri, status, missing, weak):
    plan = extract_plan(text, uri)
    readiness = assess_readiness(plan, text, uri)
    assert readiness.status == status
    assert list(readiness.missing_fields) == missing
    assert list(readiness.weak_fields) == weak
    assert readiness.reason


@pytest.mark.parametrize(
    ("status", "actions"),
    [
        ("ready", PLANNING_ACTIONS),
        ("needs_review", PLANNING_ACTIONS),
        ("blocked", ("ask_clarification", "stop_with_boundary_message")),
        ("unknown", ()),
    ],
)
def test_allowed_actions(status, actions):
    assert allowed_actions(status) == actions

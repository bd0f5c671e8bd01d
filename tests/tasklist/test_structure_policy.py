"""validate_tasklist_structure, issue ids, score and the enforced header (policies/tasklist/structure.py)."""

from __future__ import annotations

import pytest

from reins.policies.tasklist.structure import (
    DRAFT_STATUS_LINE,
    StructureValidation,
    enforce_header,
    parse_issue_id,
    score_for,
    split_steps,
    status_for,
    validate_tasklist_structure,
)
from tests.tasklist.builders import PASSING, draft

URI = "docs://versions/v1.md"


def validate(text: str, uri: str = URI) -> StructureValidation:
    return validate_tasklist_structure(text, uri, "v1.0.0")


def with_uri(text: str) -> str:
    return f"{text}\n\nSource plan: {URI}\n"


def test_complete_draft_passes():
    result = validate(with_uri(PASSING))
    assert (result.status, result.score, result.issue_ids, result.step_count) == ("pass", 100, (), 2)


ONE_TASK_STEP = "## Steps\n\n### Step 1: Tiny\n- [ ] Add unit tests\n\n### Step 2: Fine\n- [ ] Build it\n- [ ] Run the tests\n"
MANY_TASK_STEP = "## Steps\n\n### Step 1: Huge\n" + "".join(f"- [ ] Task {i} with a test\n" for i in range(13))
NO_CHECK_STEP = "## Steps\n\n### Step 1: A\n- [ ] Do A\n- [ ] Add tests for A\n\n### Step 2: B\n- [ ] Do B\n- [ ] Ask the owner\n"


@pytest.mark.parametrize(
    ("text", "blocking", "weak"),
    [
        (with_uri(draft(title="")), ["missing_title"], []),
        (draft(), ["missing_plan_uri"], []),
        (with_uri(draft("steps", extra="- [ ] A loose test item")), ["missing_steps"], []),
        (with_uri(draft("steps", extra="### Step 1: A\n- do a unit test\n- and build")), ["missing_checklist"],
         ["step_too_few_tasks:step-1"]),
        (with_uri("# T\n## Goals\n- g\n## Non-goals\n- n\n### Step 1: A\n- [ ] a\n- [ ] b\n## Risks\n- r\n## 执行纪律\n- 暂停"),
         ["missing_verification"], ["missing_test_plan", "missing_engineering_verification", "step_missing_verification:step-1"]),
        (with_uri(draft("test_plan")), [], ["missing_test_plan"]),
        (with_uri(draft("goals")), [], ["missing_goals"]),
        (with_uri(draft("non_goals")), [], ["missing_non_goals"]),
        (with_uri(draft("risks")), [], ["weak_risks"]),
        (with_uri(draft("discipline")), [], ["missing_execution_discipline", "missing_pause_point"]),
        (with_uri(draft("steps", extra=ONE_TASK_STEP)), [], ["step_too_few_tasks:step-1"]),
        (with_uri(draft("steps", extra=MANY_TASK_STEP)), [], ["step_too_many_tasks:step-1"]),
        (with_uri(draft("steps", extra=NO_CHECK_STEP)), [], ["step_missing_verification:step-2"]),
    ],
)
def test_issue_codes(text, blocking, weak):
    result = validate(text)
    assert [f.issue_id for f in result.blocking] == blocking
    assert [f.issue_id for f in result.weak] == weak
    assert result.score == score_for(len(blocking), len(weak))
    assert result.status == status_for(len(blocking), len(weak))


def test_a_non_goals_heading_is_not_a_goals_heading():
    text = with_uri(draft("goals"))
    assert "missing_goals" in validate(text).issue_ids


def test_the_plan_uri_itself_does_not_count_as_verification():
    uri = "docs://versions/test-build.md"
    text = f"# T\n\nSource: {uri}\n\n### Step 1: A\n- [ ] a\n- [ ] b\n"
    result = validate_tasklist_structure(text, uri)
    assert "missing_verification" in result.issue_ids


def test_code_fences_do_not_count_as_steps_or_tasks():
    text = with_uri("# T\n```\n### Step 1: fake\n- [ ] fake test\n```\n")
    result = validate(text)
    assert {"missing_steps", "missing_checklist", "missing_verification"} <= set(result.issue_ids)


def test_chinese_step_headings_and_sections():
    text = with_uri(
        "# v1 任务清单\n## 版本目标\n- 目标\n## 非目标\n- 不做\n## 实施计划\n### 第 1 步：接口\n- [ ] 改接口\n- [ ] 补充测试\n"
        "### 阶段 2 收尾\n- [ ] 回归验证\n- [ ] 清理\n## 测试计划\n- 单元测试\n## 风险与人工确认点\n- 成本\n## 执行纪律\n- 每步执行工程验证后暂停，等待确认。\n"
    )
    result = validate(text)
    assert (result.status, result.step_count) == ("pass", 2)


@pytest.mark.parametrize(
    ("blocking", "weak", "score", "status"),
    [(0, 0, 100, "pass"), (0, 1, 95, "warning"), (1, 0, 80, "fail"), (2, 3, 45, "fail"), (5, 10, 0, "fail"), (0, 20, 0, "warning")],
)
def test_score_and_status(blocking, weak, score, status):
    assert (score_for(blocking, weak), status_for(blocking, weak)) == (score, status)


@pytest.mark.parametrize(
    ("issue_id", "code", "step"),
    [("missing_goals", "missing_goals", None), ("step_too_few_tasks:step-3", "step_too_few_tasks", 3)],
)
def test_issue_ids_round_trip(issue_id, code, step):
    finding = parse_issue_id(issue_id)
    assert (finding.code, finding.step, finding.issue_id) == (code, step, issue_id)


def test_validation_round_trips_through_plain_state():
    result = validate(with_uri(draft("risks", "goals", extra=NO_CHECK_STEP)))
    again = StructureValidation.from_dict(result.as_dict())
    assert (again.status, again.score, again.issue_ids) == (result.status, result.score, result.issue_ids)


def test_split_steps_ends_a_step_at_the_next_heading_of_its_level():
    steps = split_steps("### Step 1: A\n- [ ] a\n#### detail\n- [ ] b\n### Step 2: B\n- [ ] c\n## Test plan\n- [ ] d\n")
    assert [(s.number, s.task_count) for s in steps] == [(1, 2), (2, 1)]


@pytest.mark.parametrize(
    "markdown",
    [
        "# Whatever the model called it\n\n## Goals\n- g\n",
        "Source plan: docs://versions/wrong.md\nTarget version: v9.9.9\nStatus: final\n\n## Goals\n- g\n",
        "\n\n## Goals\n- g\n",
    ],
)
def test_enforce_header(markdown):
    text = enforce_header(markdown, URI, "v1.0.0")
    lines = text.splitlines()
    assert lines[0] == "# v1.0.0 Tasklist"
    assert f"- Source plan: {URI}" in lines and "- Target version: v1.0.0" in lines
    assert f"- {DRAFT_STATUS_LINE}" in lines
    assert "wrong.md" not in text and "v9.9.9" not in text and "Whatever" not in text
    assert "## Goals" in lines


def test_the_draft_shape_the_prompt_shows_passes_the_rules_once_filled():
    """The shape in the draft prompt (what a small model copies) is one the structure rules accept with no
    finding at all, header enforced as after any draft; a shape that drifted from the rules fails here."""
    import re

    from reins.nodes.tasklist.prompts import DRAFT_SHAPE, DRAFT_SYSTEM

    assert DRAFT_SHAPE in DRAFT_SYSTEM
    filled = DRAFT_SHAPE.replace("<plan URI>", URI)
    filled = re.sub(r"<test to add or run for it>", "add a unit test for it", filled)
    filled = re.sub(r"<[^<>\n]+>", "banner dismissal", filled)
    result = validate(enforce_header(filled, URI, "v1.0.0"))
    assert (result.status, result.issue_ids, result.step_count) == ("pass", (), 2)

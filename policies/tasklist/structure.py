"""``validate_tasklist_structure``: the one tool of the tasklist agent, and the draft header.

Pure rules over a markdown draft: blocking issues, weak sections, per-step checks,
stable issue ids (step-scoped ones as ``<code>:step-N``), a score and a status. The header of a
draft is enforced by code after generation, so the title, plan URI, target version and draft
status never depend on a model remembering them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

DRAFT_TEXT_LIMIT = 100_000

BLOCKING_CODES: tuple[str, ...] = (
    "missing_title",
    "missing_plan_uri",
    "missing_steps",
    "missing_checklist",
    "missing_verification",
)
# Weak codes and whether the automatic revision may fix them (True = auto-fixable).
AUTO_FIXABLE: Mapping[str, bool] = {
    "missing_test_plan": False,
    "missing_goals": True,
    "missing_execution_discipline": True,
    "missing_pause_point": False,
    "missing_engineering_verification": True,
    "missing_non_goals": True,
    "weak_risks": False,
    "step_too_few_tasks": False,
    "step_too_many_tasks": False,
    "step_missing_verification": True,
}
MIN_TASKS_PER_STEP = 2
MAX_TASKS_PER_STEP = 12

STEP_HEADING = re.compile(r"(?:^|\b)(?:step\s*\d+|第\s*\d+\s*步|实施步骤\s*\d*|阶段\s*\d+)", re.I)
VERIFICATION = re.compile(r"验证|测试|校验|检查|回归|smoke|e2e|lint|typecheck|build|test", re.I)
ENGINEERING_VERIFICATION = re.compile(r"工程验证|工程校验|lint|typecheck|build|test", re.I)
DISCIPLINE_HEADING = re.compile(r"执行纪律|实施纪律|执行规则|暂停|等待确认|review", re.I)
GOALS_HEADING = re.compile(r"goals|version goals|版本目标|本版目标|目标", re.I)
NON_GOALS_HEADING = re.compile(r"non-goals|non goals|非目标|本版不做|明确不做", re.I)
RISKS_HEADING = re.compile(r"risks?|风险|人工确认点|确认点", re.I)
TEST_PLAN_HEADING = re.compile(r"test plan|测试计划|验证计划|最小验证", re.I)
PAUSE_POINT = re.compile(r"暂停|等待确认|手动验证|review", re.I)

_HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<text>.+?)\s*#*\s*$")
_CHECKLIST_ITEM = re.compile(r"^\s*[-*+]\s+\[[ xX]\]\s+\S")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class Heading:
    line: int
    level: int
    text: str


@dataclass(frozen=True)
class Step:
    number: int  # 1-based, in order of appearance: the N of ``<code>:step-N``
    heading: str
    start: int  # line index of the heading
    end: int  # line index after the step's last line
    body: tuple[str, ...]

    @property
    def task_count(self) -> int:
        return sum(1 for line in self.body if _CHECKLIST_ITEM.match(line))


def _masked_lines(text: str) -> list[str]:
    """Lines with fenced code blanked, so code never counts as a heading or a task."""
    lines, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            lines.append("")
        else:
            lines.append("" if fenced else line)
    return lines


def headings(lines: Sequence[str]) -> list[Heading]:
    found = []
    for index, line in enumerate(lines):
        match = _HEADING.match(line)
        if match:
            found.append(Heading(index, len(match["hashes"]), match["text"].strip()))
    return found


def split_steps(text: str) -> list[Step]:
    """Step sections: a heading matching the step pattern, up to the next heading of the same or a higher level."""
    lines = _masked_lines(text)
    marks = headings(lines)
    steps: list[Step] = []
    for position, mark in enumerate(marks):
        if not STEP_HEADING.search(mark.text):
            continue
        end = len(lines)
        for later in marks[position + 1 :]:
            if later.level <= mark.level:
                end = later.line
                break
        steps.append(Step(len(steps) + 1, mark.text, mark.line, end, tuple(lines[mark.line + 1 : end])))
    return steps


@dataclass(frozen=True)
class Finding:
    code: str
    step: int | None = None

    @property
    def issue_id(self) -> str:
        return f"{self.code}:step-{self.step}" if self.step is not None else self.code

    @property
    def blocking(self) -> bool:
        return self.code in BLOCKING_CODES

    @property
    def auto_fixable(self) -> bool:
        return AUTO_FIXABLE.get(self.code, False)


def parse_issue_id(issue_id: str) -> Finding:
    """``code`` or ``code:step-N`` back into a finding."""
    code, _, scope = issue_id.partition(":step-")
    return Finding(code, int(scope) if scope.isdigit() else None)


def score_for(blocking: int, weak: int) -> int:
    return max(0, 100 - 20 * blocking - 5 * weak)


def status_for(blocking: int, weak: int) -> str:
    return "fail" if blocking else ("warning" if weak else "pass")


@dataclass(frozen=True)
class StructureValidation:
    status: str  # pass | warning | fail
    score: int
    blocking: tuple[Finding, ...]
    weak: tuple[Finding, ...]
    step_count: int

    @property
    def issue_ids(self) -> tuple[str, ...]:
        return tuple(f.issue_id for f in (*self.blocking, *self.weak))

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> StructureValidation:
        """Rebuild a validation from its ``as_dict`` form (graph state holds plain data)."""
        blocking = tuple(Finding(code) for code in data.get("blocking", ()))  # type: ignore[union-attr]
        weak = tuple(parse_issue_id(item["id"]) for item in data.get("weak", ()))  # type: ignore[union-attr,index]
        return cls(str(data["status"]), int(data["score"]), blocking, weak, int(data.get("step_count", 0)))  # type: ignore[arg-type]

    def as_dict(self) -> dict:
        return {
            "status": self.status,
            "score": self.score,
            "step_count": self.step_count,
            "blocking": [f.issue_id for f in self.blocking],
            "weak": [{"id": f.issue_id, "code": f.code, "auto_fixable": f.auto_fixable} for f in self.weak],
            "issue_ids": list(self.issue_ids),
        }


def _heading_matches(texts: Sequence[str], pattern: re.Pattern[str]) -> bool:
    return any(pattern.search(text) for text in texts)


def _has_goals_heading(texts: Sequence[str]) -> bool:
    # "Non-goals" contains "goals": remove the non-goal words before looking for goals.
    return any(GOALS_HEADING.search(NON_GOALS_HEADING.sub(" ", text)) for text in texts)


def validate_tasklist_structure(draft_text: str, plan_uri: str, target_version: str | None = None) -> StructureValidation:
    """Validate a task-list draft. ``target_version`` is accepted for the tool's contract."""
    text = (draft_text or "")[:DRAFT_TEXT_LIMIT]
    lines = _masked_lines(text)
    texts = [h.text for h in headings(lines)]
    # The plan URI itself may contain words such as "test"; it must not count as verification.
    body = "\n".join(lines).replace(plan_uri, " ") if plan_uri else "\n".join(lines)
    steps = split_steps(text)

    blocking: list[Finding] = []
    if not any(re.match(r"^#\s+\S", line) for line in lines):
        blocking.append(Finding("missing_title"))
    if not plan_uri or plan_uri not in text:
        blocking.append(Finding("missing_plan_uri"))
    if not steps:
        blocking.append(Finding("missing_steps"))
    if not any(_CHECKLIST_ITEM.match(line) for line in lines):
        blocking.append(Finding("missing_checklist"))
    if not VERIFICATION.search(body):
        blocking.append(Finding("missing_verification"))

    weak: list[Finding] = []
    if not _heading_matches(texts, TEST_PLAN_HEADING):
        weak.append(Finding("missing_test_plan"))
    if not _has_goals_heading(texts):
        weak.append(Finding("missing_goals"))
    if not _heading_matches(texts, DISCIPLINE_HEADING):
        weak.append(Finding("missing_execution_discipline"))
    if not PAUSE_POINT.search(body):
        weak.append(Finding("missing_pause_point"))
    if not ENGINEERING_VERIFICATION.search(body):
        weak.append(Finding("missing_engineering_verification"))
    if not _heading_matches(texts, NON_GOALS_HEADING):
        weak.append(Finding("missing_non_goals"))
    if not _heading_matches(texts, RISKS_HEADING):
        weak.append(Finding("weak_risks"))
    for step in steps:
        count = step.task_count
        if count < MIN_TASKS_PER_STEP:
            weak.append(Finding("step_too_few_tasks", step.number))
        if count > MAX_TASKS_PER_STEP:
            weak.append(Finding("step_too_many_tasks", step.number))
        if not VERIFICATION.search("\n".join(step.body)):
            weak.append(Finding("step_missing_verification", step.number))

    return StructureValidation(
        status=status_for(len(blocking), len(weak)),
        score=score_for(len(blocking), len(weak)),
        blocking=tuple(blocking),
        weak=tuple(weak),
        step_count=len(steps),
    )


# ---------------------------------------------------------------------------------- draft header

DRAFT_STATUS_LINE = "Status: draft, awaiting human confirmation"
_HEADER_LINE = re.compile(r"^\s*[-*]?\s*(source plan|target version|status)\s*:", re.I)


def enforce_header(markdown: str, plan_uri: str, target_version: str) -> str:
    """Replace whatever title the model wrote with the runtime's header (title, plan, version, status)."""
    lines = (markdown or "").strip().splitlines()
    # Drop a leading H1 and any header lines a model echoed, up to the first other content.
    while lines and (not lines[0].strip() or lines[0].startswith("# ") or _HEADER_LINE.match(lines[0])):
        lines.pop(0)
    header = [
        f"# {target_version} Tasklist",
        "",
        f"- Source plan: {plan_uri}",
        f"- Target version: {target_version}",
        f"- {DRAFT_STATUS_LINE}",
        "",
    ]
    return "\n".join([*header, *lines]).rstrip() + "\n"

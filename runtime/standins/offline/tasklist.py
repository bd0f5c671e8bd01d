"""Offline responders for the tasklist contracts: rules over the call's structured inputs (its
metadata, ``OfflineRequest.inputs``), not a language model; answers are cut to their schema's bounds.

- ``tasklist.planning_decision``: boundary phrases in the plan's own sections or the user goal →
  boundary stop; blocked readiness → a clarification question naming what is missing; an
  allow-listed context URI mentioned in the plan → read it; needs_review → proceed with manual review
  items for the weak fields; otherwise proceed. Proceed decisions carry a strategy built from the plan.
- ``tasklist.strategy``: the same strategy builder, adjusted by a reviewer's feedback.
- ``tasklist.draft``: a task list assembled from the plan's sections; each step's verification is the
  plan's test-plan items that speak about that step (a plan whose own checks are vague yields a step
  without real verification, which the structural validator then catches).
- ``tasklist.revision``: applies exactly the listed findings to the draft.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from reins.policies.tasklist.plan import section_items
from reins.policies.tasklist.structure import RISKS_HEADING, split_steps
from reins.runtime.standins.offline.bounds import limit
from reins.runtime.standins.offline.framework import OfflineRequest, one_line, responder
from reins.schemas.tasklist import AskClarification, ProceedWithManualReviewItems, TasklistStrategy

BOUNDARY_PHRASES: tuple[str, ...] = (
    "scan the source", "scan source", "scan the repository", "scan the repo", "scan the whole",
    "read the source code", "read source code", "source directory", "source tree",
    "write the docs", "write docs", "write into docs", "write to docs", "write files", "write the generated",
    "historical task list", "old task lists", "previous task lists", "bare goal",
    "扫描源码", "扫描目录", "扫描仓库", "读取源码", "写入 docs", "写入docs", "写入文档", "写文件", "历史任务清单", "裸目标",
)
MISSING_FIELD_WORDS: Mapping[str, str] = {
    "targetVersion": "the target version (vX.Y.Z)",
    "planContent": "enough plan content",
    "versionPlanSignal": "that this is a version plan",
    "tasklistBasis": "at least two goals or key changes",
    "summary/goals/keyChanges": "a summary, goals or key changes",
    "Goals": "the goals",
}
WEAK_ITEM_TEXT: Mapping[str, tuple[str, str, str]] = {
    "Goals": ("Plan states no goals", "The plan has no Goals section; confirm what the version must achieve.", "warning"),
    "Key Changes": ("Plan lists no key changes", "The plan names no key changes; steps follow its goals instead.", "warning"),
    "Non-goals": ("Plan states no non-goals", "The plan names nothing out of scope; confirm the scope boundary.", "warning"),
    "Interface Changes": ("Interface changes not stated", "The plan says nothing about interface changes; confirm there are none.", "info"),
    "Test Plan": ("Plan has no test plan", "The plan has no test plan; agree how each step is verified.", "warning"),
}
_CJK = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"[a-z][a-z0-9\-]{3,}")
_STOPWORDS = frozenset(
    "with that this from into when each after before should must tests test unit check checks verify confirm "
    "make sure works work adds shows show their there them then than also only page user users data "
    "new existing add update remove keep change changes version plan".split()
)


def _sections(request: OfflineRequest) -> dict[str, list[str]]:
    sections = request.inputs.get("plan_sections") or {}
    return {k: [str(i) for i in v] for k, v in sections.items() if isinstance(v, list)}


def _chinese(*texts: str) -> bool:
    joined = "".join(texts)
    return len(_CJK.findall(joined)) > max(10, len(joined) // 10)


_cut = one_line


# ------------------------------------------------------------------------------------ strategy


def build_strategy(sections: Mapping[str, Sequence[str]], feedback: str = "", context_uri: str = "") -> dict[str, Any]:
    changes = list(sections.get("key_changes") or sections.get("goals") or sections.get("summary") or [])
    interfaces = list(sections.get("interface_changes") or [])
    zh = _chinese(*changes, *interfaces)
    work = max(1, len(changes) + (1 if interfaces else 0))
    granularity = "coarse" if work <= 2 else ("medium" if work <= 6 else "detailed")
    wanted = feedback.lower()
    if any(w in wanted for w in ("fewer", "coarse", "merge", "combine", "更少", "合并", "粗")):
        granularity, work = "coarse", max(1, (work + 1) // 2)
    elif any(w in wanted for w in ("more detail", "detailed", "finer", "split", "更细", "拆分")):
        granularity, work = "detailed", min(20, work + 2)
    low = max(1, min(20, work))
    high = min(30, max(low, work + 1))
    grouping = ([("接口变化" if zh else "Interface changes")] if interfaces else []) + [
        _cut(c, limit(TasklistStrategy, "grouping", "[]")) for c in changes]
    priority = (
        ["先完成接口变化", "按方案顺序实现关键改动", "每一步以验证收尾"]
        if zh
        else ["Interface changes before the code that uses them", "Key changes in plan order", "Verification closes each step"]
    )
    reason = f"{len(changes)} key change(s) and {len(interfaces)} interface change(s) in the plan"
    if context_uri:
        reason += f"; background from {context_uri} considered"
    if feedback:
        reason += "; adjusted to the reviewer's feedback"
    return {
        "granularity": granularity,
        "expected_step_range": [low, high],
        "grouping": grouping[: limit(TasklistStrategy, "grouping")],
        "priority": priority,
        "reason": _cut(reason + ".", limit(TasklistStrategy, "reason")),
    }


# ----------------------------------------------------------------------------- planning decision


def _boundary_hit(sections: Mapping[str, Sequence[str]], goal: str) -> str | None:
    # Non-goals are excluded: "we will not scan the source" is the opposite of a boundary request.
    texts = [goal] + [item for name, items in sections.items() if name != "non_goals" for item in items]
    lowered = "\n".join(texts).lower()
    return next((phrase for phrase in BOUNDARY_PHRASES if phrase in lowered), None)


@responder("tasklist.planning_decision")
def planning_decision(request: OfflineRequest) -> dict[str, Any]:
    readiness = request.inputs.get("readiness") or {}
    allowed = request.inputs.get("allowed_actions") or []
    allowlist = request.inputs.get("optional_context_allowlist") or []
    sections = _sections(request)
    goal = request.inputs.get("user_goal", "")
    status = readiness.get("status")

    phrase = _boundary_hit(sections, goal)
    if phrase and "stop_with_boundary_message" in allowed:
        return {
            "decision": {
                "type": "stop_with_boundary_message",
                "message": (
                    "This request asks for work outside the tasklist agent's boundary (it mentions "
                    f"'{phrase}'). The agent only turns one version plan into a task-list draft: it does not "
                    "scan source code or directories, write files or docs, or read old task lists."
                ),
                "reason": f"The plan or request asks for '{phrase}', which no allowed action covers.",
            }
        }
    if status == "blocked" or "proceed_to_tasklist_strategy" not in allowed:
        missing = [MISSING_FIELD_WORDS.get(f, f) for f in readiness.get("missing_fields", [])] or ["the plan's goals"]
        return {
            "decision": {
                "type": "ask_clarification",
                "question": _cut(f"The plan does not state {', '.join(dict.fromkeys(missing))}. "
                                 "Which version does it target, and what must that version achieve?", limit(AskClarification, "question")),
                "reason": _cut("Readiness is blocked: " + ", ".join(readiness.get("missing_fields", [])),
                               limit(AskClarification, "reason")),
            }
        }
    plan_text = request.inputs.get("plan", "")
    mentioned = next((uri for uri in allowlist if uri in plan_text), None)
    if mentioned and "read_optional_context" in allowed:
        return {
            "decision": {
                "type": "read_optional_context",
                "resource_uri": mentioned,
                "reason": f"The plan refers to {mentioned}; reading it keeps the split inside that boundary.",
            }
        }
    strategy = build_strategy(sections)
    weak = [*(f for f in readiness.get("missing_fields", []) if f in WEAK_ITEM_TEXT), *readiness.get("weak_fields", [])]
    if status == "needs_review" and weak:
        items = [
            {"title": WEAK_ITEM_TEXT[f][0], "detail": WEAK_ITEM_TEXT[f][1], "severity": WEAK_ITEM_TEXT[f][2]}
            for f in dict.fromkeys(weak)
            if f in WEAK_ITEM_TEXT
        ][: limit(ProceedWithManualReviewItems, "review_items")]
        return {
            "decision": {
                "type": "proceed_with_manual_review_items",
                "review_items": items,
                "reason": _cut("The plan can be split; weak sections need a person: " + ", ".join(weak),
                               limit(ProceedWithManualReviewItems, "reason")),
            },
            "strategy": strategy,
        }
    return {
        "decision": {"type": "proceed_to_tasklist_strategy", "reason": "The plan is ready to split into a task list."},
        "strategy": strategy,
    }


@responder("tasklist.strategy")
def strategy(request: OfflineRequest) -> dict[str, Any]:
    return build_strategy(_sections(request), request.inputs.get("feedback", ""), request.inputs.get("context_uri", ""))


# ------------------------------------------------------------------------------------------ draft


def _tokens(text: str) -> set[str]:
    lowered = text.lower()
    words = {w for w in _WORD.findall(lowered) if w not in _STOPWORDS}
    cjk = "".join(ch if _CJK.match(ch) else " " for ch in text)
    bigrams = {chunk[i : i + 2] for chunk in cjk.split() for i in range(len(chunk) - 1)}
    return words | (bigrams - {"测试", "验证", "实现", "支持", "新增"})


def _related(item: str, checks: Sequence[str]) -> list[str]:
    mine = _tokens(item)
    return [check for check in checks if mine & _tokens(check)][:3]


def _risk_items(plan_text: str) -> list[str]:
    """Items of any ``## Risks`` section of the raw plan (the extraction keeps only the six fields)."""
    found, current = [], None
    for line in plan_text.splitlines():
        if line.startswith("## "):
            current = [] if RISKS_HEADING.search(line[3:]) else None
            if current is not None:
                found.append(current)
        elif current is not None:
            current.append(line)
    return [item for body in found for item in section_items(body)]


def _groups(changes: list[str], high: int, reserved: int) -> list[list[str]]:
    """Consecutive key changes merged so the step count stays within the strategy's maximum."""
    room = max(1, high - reserved)
    size = max(1, -(-len(changes) // room))
    return [changes[i : i + size] for i in range(0, len(changes), size)]


@responder("tasklist.draft")
def draft(request: OfflineRequest) -> str:
    sections = _sections(request)
    strategy = request.inputs.get("strategy") or {}
    uri, version = request.inputs.get("plan_uri", ""), request.inputs.get("target_version", "")
    goals = sections.get("goals") or sections.get("summary") or []
    changes = sections.get("key_changes") or sections.get("goals") or []
    interfaces = sections.get("interface_changes") or []
    checks = sections.get("test_plan") or []
    zh = _chinese(*goals, *changes, *interfaces)
    t = _ZH if zh else _EN
    lines = [f"# {version} Tasklist", "", f"{t['source']}: {uri}", "", f"## {t['goals']}"]
    lines += [f"- {g}" for g in goals] + ["", f"## {t['non_goals']}"]
    lines += [f"- {n}" for n in sections.get("non_goals") or [t["no_non_goals"]]]
    lines += ["", f"## {t['steps']}"]
    number = 0
    if interfaces:
        number += 1
        lines += ["", t["step"].format(n=number, title=t["interfaces"])]
        lines += [f"- [ ] {t['update_interface']}: {i}" for i in interfaces] + [f"- [ ] {t['contract_tests']}"]
    high = int((strategy.get("expected_step_range") or [1, max(1, len(changes))])[1])
    for group in _groups(list(changes), high, number):
        number += 1
        lines += ["", t["step"].format(n=number, title=_cut(group[0], 80))]
        for change in group:
            lines.append(f"- [ ] {t['implement']}: {change}")
            related = _related(change, checks)
            lines += [f"- [ ] {t['verify']}: {c}" for c in related] or [f"- [ ] {t['add_test']}"]
    if checks:
        lines += ["", f"## {t['test_plan']}"] + [f"- {c}" for c in checks]
    risks = _risk_items(request.inputs.get("plan", "")) + [f"{t['confirm_interface']}: {i}" for i in interfaces]
    if risks:
        lines += ["", f"## {t['risks']}"] + [f"- {r}" for r in risks]
    lines += ["", f"## {t['discipline']}", f"- {t['discipline_1']}", f"- {t['discipline_2']}"]
    return "\n".join(lines) + "\n"


_EN = {
    "source": "Source plan", "goals": "Goals", "non_goals": "Non-goals", "steps": "Implementation steps",
    "no_non_goals": "Nothing beyond the key changes below (the plan states no non-goals; confirm with the owner).",
    "step": "### Step {n}: {title}", "interfaces": "Interface changes",
    "update_interface": "Update the interface", "contract_tests": "Add contract tests for the changed interfaces and run them",
    "implement": "Implement", "verify": "Verify", "add_test": "Add a test that covers this change and run it",
    "test_plan": "Test plan", "risks": "Risks and confirmation points",
    "confirm_interface": "Confirm the interface change with its consumers",
    "discipline": "Execution discipline (pause for review)",
    "discipline_1": "Work one step at a time; after each step run the engineering verification "
                    "(lint, typecheck, build, test), then pause and wait for review.",
    "discipline_2": "Do not add capabilities the version plan does not list.",
    "step_test": "Add an automated test for this step and run it",
    "engineering": "Run lint, typecheck, build and the test suite before the version is marked done.",
}
_ZH = {
    "source": "来源方案", "goals": "版本目标", "non_goals": "非目标", "steps": "实施计划",
    "no_non_goals": "不做关键改动之外的任何事（方案未写明非目标，需与负责人确认）。",
    "step": "### 第 {n} 步：{title}", "interfaces": "接口变化",
    "update_interface": "更新接口", "contract_tests": "补充接口契约测试并运行",
    "implement": "实现", "verify": "验证", "add_test": "补充覆盖该改动的测试并运行",
    "test_plan": "测试计划", "risks": "风险与人工确认点", "confirm_interface": "与使用方确认接口变化",
    "discipline": "执行纪律",
    "discipline_1": "一次只做一步；每步完成后执行工程验证（lint、typecheck、build、test），然后暂停，等待确认。",
    "discipline_2": "不新增版本方案之外的能力。",
    "step_test": "补充并运行本步骤的自动化测试",
    "engineering": "版本完成前执行工程验证：lint、typecheck、build 与全部测试。",
}


# --------------------------------------------------------------------------------------- revision


@responder("tasklist.revision")
def revision(request: OfflineRequest) -> str:
    findings = [str(f.get("id", "")) for f in (request.inputs.get("findings") or []) if isinstance(f, dict)]
    text = request.inputs.get("draft", "")
    sections = _sections(request)
    zh = _chinese(text)
    t = _ZH if zh else _EN
    lines = text.splitlines()

    # Step-scoped fixes first, bottom-up, so earlier line numbers stay valid.
    steps = {step.number: step for step in split_steps(text)}
    wanted = sorted((int(f.rsplit("-", 1)[1]) for f in findings if f.startswith("step_missing_verification:step-")), reverse=True)
    for number in wanted:
        step = steps.get(number)
        if step is None:
            continue
        last = max((step.start + 1 + i for i, line in enumerate(step.body) if line.strip()), default=step.start)
        lines.insert(last + 1, f"- [ ] {t['step_test']}")
    if "missing_checklist" in findings:
        lines = [re.sub(r"^(\s*)[-*+]\s+(?!\[[ xX]\])", r"\1- [ ] ", line) if line.lstrip().startswith(("-", "*", "+")) else line for line in lines]
    additions: list[str] = []
    if "missing_goals" in findings:
        additions += ["", f"## {t['goals']}"] + [f"- {g}" for g in (sections.get("goals") or sections.get("summary") or ["-"])]
    if "missing_non_goals" in findings:
        additions += ["", f"## {t['non_goals']}"] + [f"- {n}" for n in (sections.get("non_goals") or [t["no_non_goals"]])]
    if "missing_steps" in findings:
        changes = sections.get("key_changes") or sections.get("goals") or ["the plan"]
        additions += ["", t["step"].format(n=1, title=_cut(changes[0], 80))]
        additions += [f"- [ ] {t['implement']}: {c}" for c in changes] + [f"- [ ] {t['add_test']}"]
    if "missing_execution_discipline" in findings:
        additions += ["", f"## {t['discipline']}", f"- {t['discipline_1']}", f"- {t['discipline_2']}"]
    if "missing_engineering_verification" in findings or "missing_verification" in findings:
        additions += ["", f"- {t['engineering']}"]
    if "missing_plan_uri" in findings:
        additions += ["", f"{t['source']}: {request.inputs.get('plan_uri', '')}"]
    result = "\n".join(lines + additions)
    if "missing_title" in findings:
        result = f"# {request.inputs.get('target_version', '')} Tasklist\n\n" + result
    return result.rstrip() + "\n"

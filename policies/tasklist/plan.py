"""Tasklist entry and plan rules: the plan reference, plan extraction, readiness, the allowed actions.

All pure. The model never sees a plan the runtime has not first parsed and judged: readiness is
computed here by rules (no model), and the set of planning actions the model may choose from is
derived from it. We enforce ``blocked``: a blocked plan leaves only ``ask_clarification`` and
``stop_with_boundary_message``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from reins.schemas.tasklist import PLANNING_ACTIONS

# ------------------------------------------------------------------------------------ entry rules

COMMAND = "/tasklist"
VERSIONS_PREFIX = "docs://versions/"
LATEST_CONTEXT_URI = "project://latest-context"
OPTIONAL_CONTEXT_ALLOWLIST: tuple[str, ...] = (
    "docs://README.md",
    "docs://architecture/agent-runtime.md",
    "docs://architecture/capability-skill-surface.md",
    "docs://architecture/runtime-boundary.md",
    "docs://architecture/stream-core.md",
    LATEST_CONTEXT_URI,
)

# Static messages: they never echo the input, so nothing a user typed can leak through them.
REFERENCE_MESSAGES: Mapping[str, str] = {
    "missing_reference": (
        "Reference exactly one version plan, for example: /tasklist docs://versions/<plan>.md"
    ),
    "not_a_version_plan": (
        "Only version plans can be turned into a task list: reference docs://versions/<plan>.md"
    ),
    "several_references": "Reference exactly one version plan per request (docs://versions/<plan>.md).",
    "path_escape": "The plan reference must stay inside docs://versions/ (no '..', no absolute paths).",
    "unknown_plan": "The referenced version plan was not found; reference an existing docs://versions/<plan>.md",
}

# A URI: a scheme ("docs"), "://", the rest of the word. A match may start only where a run of
# scheme characters starts (the lookbehind), and the runs are taken whole (possessive): each
# character is looked at a bounded number of times, so a request's reading is linear in its length
# even when one unbroken word is a megabyte long. ``lead``: the digits or signs a run may start
# with before its first letter, which are not part of the scheme.
_URI_TOKEN = re.compile(r"(?<![a-z0-9+.\-])(?P<lead>[0-9+.\-]*+)(?P<uri>[a-z][a-z0-9+.\-]*+://\S+)", re.I)
_PLAN_PATH = re.compile(r"^[\w.\-]+(?:/[\w.\-]+)*\.md$")


@dataclass(frozen=True)
class PlanReference:
    """The outcome of reading a request: the plan URI and the rest of the text, or a refusal code."""

    uri: str | None
    user_goal: str = ""
    error: str | None = None

    @property
    def message(self) -> str:
        return REFERENCE_MESSAGES.get(self.error or "", "")


def _uris_and_rest(text: str) -> tuple[list[str], str]:
    """The URIs in ``text`` (trailing punctuation dropped) and the text without them, in one scan."""
    if "://" not in text:
        return [], text
    uris, rest, end = [], [], 0
    for match in _URI_TOKEN.finditer(text):
        uris.append(match["uri"].rstrip(".,;:!?)\"'"))
        rest += [text[end : match.start("uri")], " "]
        end = match.end()
    rest.append(text[end:])
    return uris, "".join(rest)


def plan_reference(request: str | None = None, plan_uri: str | None = None) -> PlanReference:
    """Exactly one ``docs://versions/*.md`` reference, from ``plan_uri`` or from the request text."""
    if plan_uri is not None and str(plan_uri).strip():
        uris, goal = [str(plan_uri).strip()], (request or "")
    else:
        text = (request or "").strip()
        uris, goal = _uris_and_rest(text)
    goal = re.sub(rf"^\s*{re.escape(COMMAND)}\b", " ", goal.strip(), flags=re.I)
    goal = re.sub(r"\s+", " ", goal).strip()
    if not uris:
        return PlanReference(None, goal, "missing_reference")
    if len(uris) > 1:
        return PlanReference(None, goal, "several_references")
    uri = uris[0]
    if not uri.lower().startswith(VERSIONS_PREFIX):
        return PlanReference(None, goal, "not_a_version_plan")
    path = uri[len(VERSIONS_PREFIX) :]
    parts = path.replace("\\", "/").split("/")
    if path.startswith(("/", "\\")) or ".." in parts or "" in parts or "." in parts:
        return PlanReference(None, goal, "path_escape")
    if not _PLAN_PATH.match(path):
        return PlanReference(None, goal, "not_a_version_plan")
    return PlanReference(VERSIONS_PREFIX + path, goal)


# -------------------------------------------------------------------------------- plan extraction

SECTION_FIELDS: tuple[str, ...] = ("goals", "non_goals", "key_changes", "interface_changes", "test_plan", "summary")
HEADING_ALIASES: Mapping[str, tuple[str, ...]] = {
    "goals": ("goals", "目标", "版本目标"),
    "non_goals": ("non-goals", "non goals", "非目标", "本版不做", "明确不做"),
    "key_changes": ("key changes", "关键改动", "关键实现变更", "核心改动", "主要改动"),
    "interface_changes": ("important interface changes", "interface changes", "接口变化", "重要接口变化", "协议变化"),
    "test_plan": ("test plan", "测试计划", "验证计划", "测试方案"),
    "summary": ("summary", "摘要", "版本说明", "目标说明"),
}
VERSION = re.compile(r"\bv\d+\.\d+\.\d+\b", re.I)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(?P<text>.+?)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class PlanExtraction:
    title: str
    target_version: str
    sections: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    other_headings: tuple[str, ...] = ()

    def items(self, name: str) -> tuple[str, ...]:
        return self.sections.get(name, ())

    def as_dict(self) -> dict:
        return {
            "title": self.title,
            "target_version": self.target_version,
            "sections": {name: list(self.items(name)) for name in SECTION_FIELDS},
            "other_headings": list(self.other_headings),
        }


def section_for_heading(heading: str) -> str | None:
    """The plan field a ``## heading`` belongs to: the longest alias it contains wins.

    Longest-wins keeps "非目标" out of goals ("目标") and "目标说明" in summary, without an order list.
    """
    lowered = heading.lower()
    best: tuple[int, str] | None = None
    for name, aliases in HEADING_ALIASES.items():
        for alias in aliases:
            if alias in lowered and (best is None or len(alias) > best[0]):
                best = (len(alias), name)
    return best[1] if best else None


def _lines_outside_fences(text: str) -> list[str]:
    kept, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            kept.append(line)
    return kept


def section_items(lines: Sequence[str]) -> tuple[str, ...]:
    """List items of a section; a section without a list falls back to its paragraphs."""
    items = [m["text"] for line in lines if (m := _LIST_ITEM.match(line))]
    if items:
        return tuple(items)
    paragraphs, current = [], []
    for line in lines:
        if line.strip() and not line.lstrip().startswith("#"):
            current.append(line.strip())
        elif current:
            paragraphs.append(" ".join(current))
            current = []
    if current:
        paragraphs.append(" ".join(current))
    return tuple(paragraphs)


def find_version(*candidates: str | None) -> str:
    """The first ``vX.Y.Z`` in the candidates, in order (user goal, plan URI, title); else ``unknown``."""
    for candidate in candidates:
        match = VERSION.search(candidate or "")
        if match:
            return match.group(0).lower()
    return "unknown"


def extract_plan(text: str, uri: str = "", user_goal: str = "") -> PlanExtraction:
    """Title (first H1), the six known sections (split on ``## ``) and the target version."""
    lines = _lines_outside_fences(text)
    title = next((line[2:].strip() for line in lines if line.startswith("# ")), "")
    collected: dict[str, list[str]] = {}
    others: list[str] = []
    current: str | None = None
    for line in lines:
        if line.startswith("## "):
            heading = line[3:].strip()
            current = section_for_heading(heading)
            if current is None:
                others.append(heading)
            else:
                collected.setdefault(current, [])
            continue
        if current is not None:
            collected[current].append(line)
    sections = {name: section_items(body) for name, body in collected.items()}
    return PlanExtraction(
        title=title,
        target_version=find_version(user_goal, uri, title),
        sections={name: items for name, items in sections.items() if items},
        other_headings=tuple(others),
    )


# ---------------------------------------------------------------------------------------- readiness

MIN_PLAN_CHARS = 80
VERSION_SIGNAL = re.compile(r"\bversion(?:s| plan)?\b|版本|版本方案|release|v\d+\.\d+\.\d+", re.I)
WEAK_SECTIONS: tuple[tuple[str, str], ...] = (
    ("key_changes", "Key Changes"),
    ("non_goals", "Non-goals"),
    ("interface_changes", "Interface Changes"),
    ("test_plan", "Test Plan"),
)
BLOCKING_FIELDS: frozenset[str] = frozenset(
    {"targetVersion", "planContent", "versionPlanSignal", "tasklistBasis", "summary/goals/keyChanges"}
)


@dataclass(frozen=True)
class Readiness:
    status: str  # ready | needs_review | blocked
    missing_fields: tuple[str, ...]
    weak_fields: tuple[str, ...]
    reason: str

    def as_dict(self) -> dict:
        return {
            "status": self.status,
            "missing_fields": list(self.missing_fields),
            "weak_fields": list(self.weak_fields),
            "reason": self.reason,
        }


def assess_readiness(plan: PlanExtraction, content: str, uri: str) -> Readiness:
    """Whether the plan can be split into a task list, decided without a model."""
    goals, changes, interfaces = plan.items("goals"), plan.items("key_changes"), plan.items("interface_changes")
    missing: list[str] = []
    if plan.target_version == "unknown":
        missing.append("targetVersion")
    if len(content.strip()) < MIN_PLAN_CHARS:
        missing.append("planContent")
    if not VERSION_SIGNAL.search(f"{plan.title}\n{uri}\n{content}"):
        missing.append("versionPlanSignal")
    if not ((goals or changes) and len(goals) + len(changes) + len(interfaces) >= 2):
        missing.append("tasklistBasis")
    if not (goals or changes or plan.items("summary")):
        missing.append("summary/goals/keyChanges")
    if not goals:
        missing.append("Goals")
    weak = [label for name, label in WEAK_SECTIONS if not plan.items(name)]
    if BLOCKING_FIELDS.intersection(missing):
        status = "blocked"
        reason = "The plan cannot be split into a task list: " + ", ".join(missing) + "."
    elif missing or weak:
        status = "needs_review"
        reason = "The plan can be split, but needs review for: " + ", ".join([*missing, *weak]) + "."
    else:
        status, reason = "ready", "The plan has a version, goals, key changes and the supporting sections."
    return Readiness(status, tuple(missing), tuple(weak), reason)


def allowed_actions(readiness_status: str) -> tuple[str, ...]:
    """The planning actions the model may choose from; a blocked plan may only ask or stop."""
    if readiness_status == "blocked":
        return ("ask_clarification", "stop_with_boundary_message")
    if readiness_status in ("ready", "needs_review"):
        return PLANNING_ACTIONS
    return ()

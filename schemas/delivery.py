"""Delivery-chain contracts: the only shapes that cross a model boundary.

Every object is strict (unknown fields and type coercion rejected), every string trimmed and
bounded, every list bounded; cross-field rules (unique keys, existing and acyclic dependencies,
exact counts, branch-specific fields) are validators here, so nothing downstream reads an output
that broke them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Annotated, Any, Literal, get_args

from pydantic import Field, create_model, model_validator

from reins.schemas.rules import Broken, raise_broken
from reins.schemas.strict import Strict
from reins.schemas.strict import bounded_text as _text


Text = _text(1000)
Key = _text(120)
Title = _text(200)
Area = _text(240)
Note = _text(200)
Summary400 = _text(400)
Markdown = _text(14_000)

RunStatus = Literal["pass", "clarification_required", "needs_changes", "needs_review", "blocked", "failed"]
ReviewerRole = Literal["general", "risk", "boundary"]
REVIEWER_ROLES: tuple[str, ...] = get_args(ReviewerRole)  # the default reviewers (policies/delivery/reviewers.py)
ReviewerOutcome = Literal["completed", "contract_failure", "timeout", "execution_failed"]
Severity = Literal["blocker", "high", "medium", "low", "info"]
SEVERITIES: tuple[str, ...] = get_args(Severity)  # most severe first
PreBranch = Literal["execute", "clarification_required", "blocked"]  # the supervisor's pre-decision
WorkArtifact = Literal["plan", "tasks"]  # what the workers make, in this order (tasks follow the plan)
WORK_ARTIFACTS: tuple[str, ...] = get_args(WorkArtifact)
ArtifactKind = Literal["plan", "tasks", "review", "delivery_report"]


def _duplicates(values: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    repeated: list[str] = []
    for value in values:
        if value in seen and value not in repeated:
            repeated.append(value)
        seen.add(value)
    return repeated


def find_cycle(nodes: Mapping[str, Sequence[str]]) -> list[str] | None:
    """A dependency cycle in ``{node: depends_on}`` as a path, or None (iterative DFS, no recursion)."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    for root in nodes:
        if state.get(root):
            continue
        path: list[str] = []
        stack: list[tuple[str, int]] = [(root, 0)]
        while stack:
            node, index = stack.pop()
            if index == 0:
                state[node] = 1
                path.append(node)
            deps = list(nodes.get(node, ()))
            if index < len(deps):
                stack.append((node, index + 1))
                dep = deps[index]
                if state.get(dep) == 1:
                    return path[path.index(dep) :] + [dep]
                if not state.get(dep) and dep in nodes:
                    stack.append((dep, 0))
            else:
                state[node] = 2
                path.pop()
    return None


def _index_of_repeats(values: Sequence[str]) -> list[int]:
    """Positions whose value already appeared earlier in the list."""
    seen: set[str] = set()
    repeats: list[int] = []
    for index, value in enumerate(values):
        if value in seen:
            repeats.append(index)
        seen.add(value)
    return repeats


def _check_graph(field_name: str, items: Sequence[Any], key_name: str, deps_name: str) -> list[Broken]:
    """Unique keys, existing and acyclic dependencies, each as a ``(path, code)`` the repair can name.

    Codes: ``duplicate_key``, ``self_dependency``, ``unknown_<key_name>`` (e.g. ``unknown_phase_key``),
    ``duplicate_dependency`` on an item's path; ``dependency_cycle`` on the list itself.
    """
    keys = [getattr(item, key_name) for item in items]
    broken = [Broken((field_name, i, key_name), "duplicate_key", f"{key_name} must be unique") for i in _index_of_repeats(keys)]
    known = set(keys)
    for index, item in enumerate(items):
        deps = list(getattr(item, deps_name))
        path = (field_name, index, deps_name)
        if getattr(item, key_name) in deps:
            broken.append(Broken(path, "self_dependency", "an item cannot depend on itself"))
        if any(dep not in known for dep in deps):
            broken.append(Broken(path, f"unknown_{key_name}", f"every dependency must name an existing {key_name}"))
        if _duplicates(deps):
            broken.append(Broken(path, "duplicate_dependency", "a dependency is listed twice"))
    if not broken and find_cycle({getattr(item, key_name): list(getattr(item, deps_name)) for item in items}):
        broken.append(Broken((field_name,), "dependency_cycle", "dependencies must not form a cycle"))
    return broken


# ------------------------------------------------------------------------------ supervisor (pre)


class ReviewFocus(Strict):
    general: Text
    risk: Text
    boundary: Text


class StageIntent(Strict):
    stage: Literal["plan", "tasks", "review"]
    objective: Text


PRE_BRANCH_FIELDS: Mapping[str, tuple[str, ...]] = {
    "execute": ("assumptions", "planning_focus", "task_focus", "review_focus", "reviewer_roles", "stage_intents"),
    "clarification_required": ("missing_information", "next_step", "reason"),
    "blocked": ("boundary_evidence", "next_step", "reason"),
}


class SupervisorPreDecision(Strict):
    """One of three branches; the fields of the other branches must be absent.

    A flat object with a discriminating ``branch`` (rather than a top-level union) so every
    structured-output provider accepts the schema; the validator enforces the union.
    """

    branch: PreBranch
    assumptions: Annotated[list[Text], Field(min_length=1, max_length=20)] | None = None
    planning_focus: Text | None = None
    task_focus: Text | None = None
    review_focus: ReviewFocus | None = None
    reviewer_roles: Annotated[list[ReviewerRole], Field(min_length=1, max_length=3)] | None = None
    stage_intents: Annotated[list[StageIntent], Field(min_length=3, max_length=3)] | None = None
    missing_information: Annotated[list[Text], Field(min_length=1, max_length=20)] | None = None
    boundary_evidence: Annotated[list[Text], Field(min_length=1, max_length=20)] | None = None
    next_step: Text | None = None
    reason: Text | None = None

    @model_validator(mode="after")
    def _branch_fields(self) -> SupervisorPreDecision:
        wanted = PRE_BRANCH_FIELDS[self.branch]
        every = {name for names in PRE_BRANCH_FIELDS.values() for name in names}
        broken = [Broken((name,), f"required_for_branch_{self.branch}", f"branch {self.branch} requires this field")
                  for name in wanted if getattr(self, name) is None]
        broken += [Broken((name,), f"forbidden_for_branch_{self.branch}", f"branch {self.branch} forbids this field")
                   for name in sorted(every - set(wanted)) if getattr(self, name) is not None]
        if self.reviewer_roles is not None:
            broken += [Broken(("reviewer_roles", i), "duplicate_value", "reviewer_roles must be unique")
                       for i in _index_of_repeats(self.reviewer_roles)]
        if self.stage_intents is not None:
            broken += [Broken(("stage_intents", i, "stage"), "duplicate_stage", "name plan, tasks and review once each")
                       for i in _index_of_repeats([intent.stage for intent in self.stage_intents])]
        raise_broken(type(self).__name__, broken)
        return self


@lru_cache(maxsize=32)
def pre_decision_schema(focus: tuple[tuple[str, str], ...]) -> type[SupervisorPreDecision]:
    """The pre-decision for a reviewer set, given as ``((role, default focus), …)``: its
    ``reviewer_roles`` admit exactly those roles and its ``review_focus`` has one field per role
    (described by the default focus). The default set is ``SupervisorPreDecision`` itself."""
    roles = tuple(role for role, _ in focus)
    if roles == REVIEWER_ROLES:
        return SupervisorPreDecision
    focus_model = create_model(
        "ReviewFocus", __base__=Strict,
        **{role: (Text, Field(description=description)) for role, description in focus},  # type: ignore[call-overload]
    )
    role_list = Annotated[list[Literal[roles]], Field(min_length=1, max_length=len(roles))]  # type: ignore[valid-type]
    return create_model(  # type: ignore[call-overload]
        "SupervisorPreDecision", __base__=SupervisorPreDecision, __doc__=SupervisorPreDecision.__doc__,
        review_focus=(focus_model | None, None), reviewer_roles=(role_list | None, None),
    )


# ------------------------------------------------------------------------------ manager tool args


class SubagentCallArgs(Strict):
    """What the manager may pass to a sub-agent: a short note, nothing else (the runtime builds inputs)."""

    note: Note | None = None


class ContextBlock(Strict):
    kind: _text(64)
    title: _text(120)
    markdown: Markdown


class SubagentInput(Strict):
    """A worker's input, built by the runtime from artifacts — never from the manager's arguments."""

    instruction: Text
    constraints: Annotated[list[Text], Field(max_length=20)]
    context_blocks: Annotated[list[ContextBlock], Field(max_length=20)]
    input_artifacts: Annotated[list[WorkArtifact], Field(max_length=2)]


class SubagentToolResult(Strict):
    """A sub-agent's result as the manager sees it (a safe summary, never the artifact itself)."""

    status: Literal["completed", "blocked", "failed"]
    markdown: Markdown
    summary_for_manager: Summary400
    warnings: Annotated[list[Text], Field(max_length=20)] = []
    artifact_title: Title | None = None
    metadata: dict[str, str | int | bool] | None = None


# ------------------------------------------------------------------------------ plan and tasks


class PlanScope(Strict):
    included: Annotated[list[Text], Field(min_length=1, max_length=20)]
    excluded: Annotated[list[Text], Field(max_length=20)]


class DeliveryPhase(Strict):
    phase_key: Key
    title: Title
    objective: Text
    requirement_refs: Annotated[list[Text], Field(min_length=1, max_length=20)]
    depends_on_phase_keys: Annotated[list[Key], Field(max_length=40)]


class AcceptanceCriterion(Strict):
    criterion_key: Key
    description: Text
    requirement_refs: Annotated[list[Text], Field(min_length=1, max_length=20)]


class DeliveryPlan(Strict):
    """``delivery.plan`` and ``delivery.plan_revision``."""

    summary: Text
    markdown: Markdown
    requirement_refs: Annotated[list[Text], Field(min_length=1, max_length=20)]
    scope: PlanScope
    assumptions: Annotated[list[Text], Field(max_length=20)]
    delivery_phases: Annotated[list[DeliveryPhase], Field(min_length=1, max_length=40)]
    acceptance_criteria: Annotated[list[AcceptanceCriterion], Field(min_length=1, max_length=40)]

    @model_validator(mode="after")
    def _keys_and_dependencies(self) -> DeliveryPlan:
        broken = _check_graph("delivery_phases", self.delivery_phases, "phase_key", "depends_on_phase_keys")
        broken += [Broken(("acceptance_criteria", i, "criterion_key"), "duplicate_key", "criterion keys must be unique")
                   for i in _index_of_repeats([c.criterion_key for c in self.acceptance_criteria])]
        raise_broken(type(self).__name__, broken)
        return self


class DeliveryTask(Strict):
    task_id: Key
    title: Title
    target_area: Area
    acceptance_criteria: Annotated[list[Text], Field(min_length=1, max_length=20)]
    requirement_refs: Annotated[list[Text], Field(min_length=1, max_length=20)]
    depends_on_task_ids: Annotated[list[Key], Field(max_length=40)]


class DeliveryTasks(Strict):
    """``delivery.tasks`` and ``delivery.task_revision``."""

    summary: Text
    markdown: Markdown
    tasks: Annotated[list[DeliveryTask], Field(min_length=1, max_length=40)]

    @model_validator(mode="after")
    def _ids_and_dependencies(self) -> DeliveryTasks:
        raise_broken(type(self).__name__, _check_graph("tasks", self.tasks, "task_id", "depends_on_task_ids"))
        return self


# ------------------------------------------------------------------------------ reviews


class ReviewFinding(Strict):
    """One finding of a review; a reviewer schema's ``findings`` lists them: ``ReviewFinding.model_validate(data)``."""

    description: Text
    evidence: Annotated[list[Text], Field(max_length=10)]
    finding_type: Literal["issue", "observation"]
    requirement: Literal["required", "advisory"]
    severity: Severity
    suggested_action: Text
    target_artifacts: Annotated[list[WorkArtifact], Field(min_length=1, max_length=2)]

    @model_validator(mode="after")
    def _unique_targets(self) -> ReviewFinding:
        raise_broken(type(self).__name__, [
            Broken(("target_artifacts", i), "duplicate_value", "target_artifacts must be unique")
            for i in _index_of_repeats(self.target_artifacts)])
        return self


Findings = Annotated[list[ReviewFinding], Field(max_length=40)]


class GeneralReview(Strict):
    role: Literal["general"]
    disposition: Literal["pass", "needs_changes", "blocked"]
    plan_task_alignment: Literal["aligned", "misaligned"]
    findings: Findings
    markdown: Markdown
    summary: Text


class RiskReview(Strict):
    role: Literal["risk"]
    severity: Severity
    findings: Findings
    markdown: Markdown
    summary: Text


class BoundaryReview(Strict):
    role: Literal["boundary"]
    boundary_status: Literal["passed", "needs_review", "blocked"]
    violations: Annotated[list[Text], Field(max_length=20)]
    findings: Findings
    markdown: Markdown
    summary: Text

    @model_validator(mode="after")
    def _blocked_names_a_violation(self) -> BoundaryReview:
        if self.boundary_status == "blocked" and not self.violations:
            raise_broken(type(self).__name__, [
                Broken(("violations",), "required_when_blocked", "a blocked boundary review must name a violation")])
        return self



# ------------------------------------------------------------------------------ post-review, polish


class Recommendation(Strict):
    target: WorkArtifact
    summary: Text
    required_actions: Annotated[list[Text], Field(min_length=1, max_length=20)]
    acceptance_suggestion: Text


class SupervisorPostGuidance(Strict):
    rationale: Text
    recommendations: Annotated[list[Recommendation], Field(min_length=1, max_length=2)]

    @model_validator(mode="after")
    def _unique_targets(self) -> SupervisorPostGuidance:
        raise_broken(type(self).__name__, [
            Broken(("recommendations", i, "target"), "duplicate_target", "recommendation targets must be unique")
            for i in _index_of_repeats([r.target for r in self.recommendations])])
        return self


class PolishedSummary(Strict):
    """``delivery.report_polish``: the only thing polish may produce — a plain narrative summary."""

    summary: Text

    @model_validator(mode="after")
    def _plain_prose(self) -> PolishedSummary:
        if any(line.lstrip().startswith(("#", "|", "```")) for line in self.summary.splitlines()):
            raise_broken(type(self).__name__, [
                Broken(("summary",), "not_plain_prose", "the summary must be plain prose (no headings, tables or code)")])
        return self


# ------------------------------------------------------------------------------ public artifact


class RuntimeArtifact(Strict):
    """A run-local artifact as the public output shows it (never persisted beyond the run's state)."""

    artifact_id: Key
    kind: ArtifactKind
    title: Title
    markdown: _text(40_000)
    revision: Annotated[int, Field(ge=1, le=2)]
    metadata: dict[str, Any]

"""The delivery chain's reviewers as data: one ``ReviewerSpec`` per reviewer, one table (pure).

Everything about a reviewer that the chain needs is written here once — its role, sub-agent tool,
contract and schema, the verdict field and what each verdict means for the run (``ok``, ``concern``,
``blocker``), its title, the context documents it reads, its default focus and its prompt. The
exact-set rule, the manager's review group and the run's call budget, the review bundle and status
matrix, the report, the prompts' role lists, ``/help``, the offline stand-in and the evaluation all
read the table. A team adds a reviewer with one spec, one prompt and one schema:
``build_graph(reviewers=(*DEFAULT_REVIEWERS, mine))``, or builds it in by adding its spec to
``DEFAULT_REVIEWERS`` (its schema beside the others, an offline rule for the stand-in). ``model_role``
names the role whose model serves it (and whose deadline and settings apply): ``"reviewer"`` unless
it has its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel

from reins.schemas.delivery import BoundaryReview, GeneralReview, RiskReview

Level = Literal["ok", "concern", "blocker"]
LEVELS: tuple[str, ...] = get_args(Level)
# What a concern verdict asks for: a person's review, or required changes to plan and tasks.
ConcernStatus = Literal["needs_review", "needs_changes"]
REVIEW_FIELDS = ("role", "findings", "markdown", "summary")  # what every review schema carries
_ROLE = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
_TOOL = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")


def literal_values(schema: type[BaseModel], name: str) -> tuple[str, ...]:
    """The values a schema's ``Literal`` field admits (empty when the field is not a Literal)."""
    annotation = schema.model_fields[name].annotation
    return tuple(get_args(annotation)) if get_origin(annotation) is Literal else ()


@dataclass(frozen=True)
class ReviewerSpec:
    """One reviewer. ``levels`` maps every value of ``verdict_field`` to ok | concern | blocker;
    ``concern`` says what a concern asks for (a person's review, or changes); ``also_concern`` names
    other fields whose values raise the same concern (the general review's ``misaligned``).

    Example: ``ReviewerSpec(role="privacy", tool="privacy-subagent", contract="delivery.privacy_review", schema=PrivacyReview, ...)``
    """

    role: str
    tool: str
    contract: str
    schema: type[BaseModel]
    verdict_field: str
    levels: Mapping[str, Level]
    title: str
    instruction: str  # the prompt: what this reviewer checks
    context: tuple[str, ...]  # context blocks it reads (a kind or a document title)
    focus: str  # its default focus when the supervisor gives none
    non_goals: tuple[str, ...] = ()
    concern: ConcernStatus = "needs_review"
    concern_reason: str = ""  # why the run did not pass, for the report; default from the title
    also_concern: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    blocker_detail: str = ""  # the report's blocker line; default "<role> review blocked the delivery"
    high_risk_detail: str | None = None  # a concern listed under high risks, when set
    model_role: str = "reviewer"  # whose model (and its policy) answers this reviewer's contract

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise ValueError(f"reviewer {self.role!r}: {problems[0]}")
        if not self.concern_reason:
            wants = "asks for changes" if self.concern == "needs_changes" else "asks for a person's review"
            object.__setattr__(self, "concern_reason", f"the {self.role} review {wants}")
        if not self.blocker_detail:
            object.__setattr__(self, "blocker_detail", f"{self.role} review blocked the delivery")

    def problems(self) -> list[str]:
        """What makes this spec unusable, first problem first (empty when it is sound)."""
        if not _ROLE.match(self.role):
            return ["role must be snake_case, at most 32 characters"]
        if not _ROLE.match(self.model_role):
            return ["model_role must name a model role"]
        if not _TOOL.match(self.tool):
            return ["tool must be kebab-case"]
        if not self.contract.startswith("delivery.") or not _ROLE.match(self.contract.removeprefix("delivery.")):
            return ["contract must be named delivery.<snake_case>"]
        if not (isinstance(self.schema, type) and issubclass(self.schema, BaseModel)):
            return ["schema must be a pydantic model class"]
        missing = [name for name in (*REVIEW_FIELDS, self.verdict_field) if name not in self.schema.model_fields]
        if missing:
            return [f"schema {self.schema.__name__} lacks the field(s) {', '.join(missing)}"]
        if literal_values(self.schema, "role") != (self.role,):
            return [f"schema {self.schema.__name__} must pin role to Literal[{self.role!r}]"]
        verdicts = literal_values(self.schema, self.verdict_field)
        if not verdicts or set(verdicts) != set(self.levels):
            return [f"levels must name every value of {self.verdict_field} exactly once"]
        if any(level not in LEVELS for level in self.levels.values()):
            return [f"every level must be one of {', '.join(LEVELS)}"]
        if "blocker" not in self.levels.values():
            return ["at least one verdict must block"]
        return []

    def verdict(self, review: Mapping[str, Any]) -> str:
        """The reviewer's own verdict (e.g. a disposition, a severity, a boundary status)."""
        return str(review[self.verdict_field])

    def verdict_level(self, review: Mapping[str, Any]) -> Level:
        return self.levels[self.verdict(review)]

    def raises_concern(self, review: Mapping[str, Any]) -> bool:
        """A concern verdict, or another field the spec names with a concerning value."""
        return self.verdict_level(review) == "concern" or any(
            review.get(name) in values for name, values in self.also_concern.items()
        )

    @property
    def metadata_fields(self) -> tuple[str, ...]:
        """The fields a review artifact's metadata shows: the verdict and the other concern fields."""
        return (self.verdict_field, *self.also_concern)


@dataclass(frozen=True)
class Reviewers:
    """The configured reviewers, in order (coverage, findings and the report follow this order)."""

    specs: tuple[ReviewerSpec, ...]

    def __post_init__(self) -> None:
        if not self.specs:
            raise ValueError("the delivery chain needs at least one reviewer")
        for name in ("role", "tool", "contract"):
            values = [getattr(spec, name) for spec in self.specs]
            if len(set(values)) != len(values):
                raise ValueError(f"every reviewer needs its own {name}")

    @property
    def roles(self) -> tuple[str, ...]:
        return tuple(spec.role for spec in self.specs)

    @property
    def tools(self) -> tuple[str, ...]:
        return tuple(spec.tool for spec in self.specs)

    def of_role(self, role: str) -> ReviewerSpec:
        return next(spec for spec in self.specs if spec.role == role)

    def of_tool(self, tool: str) -> ReviewerSpec:
        return next(spec for spec in self.specs if spec.tool == tool)

    def __iter__(self) -> Iterator[ReviewerSpec]:
        return iter(self.specs)

    def __len__(self) -> int:
        return len(self.specs)


def reviewer_table(reviewers: Reviewers | Iterable[ReviewerSpec] | None) -> Reviewers:
    """The table for ``build_graph(reviewers=...)``: given as a table, as specs, or the default."""
    if reviewers is None:
        return DEFAULT_REVIEWERS
    if isinstance(reviewers, Reviewers):
        return reviewers
    specs = tuple(reviewers)
    if not all(isinstance(spec, ReviewerSpec) for spec in specs):
        raise TypeError("reviewers must be ReviewerSpec instances")
    return Reviewers(specs)


_NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def count_word(n: int) -> str:
    """``3`` → ``three``: how prose names the size of the review group."""
    return _NUMBER_WORDS[n] if 0 <= n < len(_NUMBER_WORDS) else str(n)


def listed(names: Iterable[str]) -> str:
    """``a, b and c`` (one name alone as it is)."""
    items = list(names)
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


_REVIEWER_NON_GOALS = ("do not rewrite the plan or tasks",)
# Each default reviewer's prompt: what it checks (its sub-agent's role instruction).
PROMPTS: Mapping[str, str] = {
    "general": "General review: check plan/task alignment, completeness of the breakdown, priorities, and "
               "whether the acceptance criteria cover every requirement clearly.",
    "risk": "Risk review: implementation complexity, security and data handling, unresolved dependencies, "
            "test coverage and maintenance cost; rate the overall severity and suggest mitigations.",
    "boundary": "Boundary review: check the requirement, plan and tasks against the governance boundaries "
                "(artifact persistence, human review and checkpoints, other pipelines, real files) and "
                "report passed, needs_review or blocked with the violations.",
}

GENERAL = ReviewerSpec(
    "general", "review-subagent", "delivery.general_review", GeneralReview, "disposition",
    {"pass": "ok", "needs_changes": "concern", "blocked": "blocker"}, "General", PROMPTS["general"],
    ("Review rubric", "Plan rubric", "Task rubric", "scenario_context"),
    "Every requirement statement is covered by an acceptance criterion and a task.",
    (*_REVIEWER_NON_GOALS, "do not judge risk or boundaries"),
    concern="needs_changes", also_concern={"plan_task_alignment": ("misaligned",)},
)
RISK = ReviewerSpec(
    "risk", "risk-subagent", "delivery.risk_review", RiskReview, "severity",
    {"info": "ok", "low": "ok", "medium": "ok", "high": "concern", "blocker": "blocker"}, "Risk", PROMPTS["risk"],
    ("Risk rubric", "Engineering rules", "scenario_context"),
    "Security, data handling, unresolved dependencies and test coverage.",
    (*_REVIEWER_NON_GOALS, "do not judge governance boundaries"),
    concern_reason="the risk review rated the delivery high risk",
    blocker_detail="risk review rated the delivery a blocker", high_risk_detail="risk review rated the delivery high risk",
)
BOUNDARY = ReviewerSpec(
    "boundary", "boundary-subagent", "delivery.boundary_review", BoundaryReview, "boundary_status",
    {"passed": "ok", "needs_review": "concern", "blocked": "blocker"}, "Boundary", PROMPTS["boundary"],
    ("governance", "scenario_context"), "Governance boundaries of the delivery chain.",
    (*_REVIEWER_NON_GOALS, "do not rate general quality"),
    concern_reason="the boundary review asks for a person to review a guarded area",
)

DEFAULT_REVIEWERS = Reviewers((GENERAL, RISK, BOUNDARY))

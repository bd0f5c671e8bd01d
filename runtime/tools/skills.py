"""Skills on disk: the bundled ones (``resources/skills``) and the user's own (``REINS_SKILLS_ROOT``
or a run's ``skills_root``), each a folder holding a ``SKILL.md`` and optional files.

Every read goes through the same sandbox as ``docs://`` (``reins.runtime.resources.read_under``): no
absolute paths, no ``..``, symlinks only inside the root, 128 KiB per file, UTF-8. A skill that
breaks a rule is left out with its reason (``reins doctor`` lists them); the others still load.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from reins.policies.assistant.skills import SKILL_FILE, SkillRejected, keep_unique, named_files, parse_skill
from reins.runtime.config.paths import RESOURCES
from reins.runtime.resources import ResourceError, cut_for_prompt, read_under, safe_relative

BUNDLED_SKILLS = RESOURCES / "skills"
SKILLS_ROOT_ENV = "REINS_SKILLS_ROOT"
SKILL_FILE_CHARS = 4000
BUNDLED, USER = "bundled", "user"


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    instructions: str
    origin: str  # bundled | user | a store namespace label for approved drafts
    root: Path | None = None  # the skills root it was read from (None for drafts held in the store)

    @property
    def files(self) -> tuple[str, ...]:
        return named_files(self.instructions) if self.root is not None else ()


@dataclass(frozen=True)
class LeftOut:
    """A skill that is not loaded: where (``bundled/<folder>`` or ``user/<folder>``) and why."""

    where: str
    reason: str


@dataclass(frozen=True)
class SkillCatalog:
    skills: tuple[Skill, ...] = ()
    left_out: tuple[LeftOut, ...] = field(default_factory=tuple)

    def get(self, name: str) -> Skill | None:
        return next((skill for skill in self.skills if skill.name == name), None)

    def with_extra(self, extra: list[Skill]) -> SkillCatalog:
        """This catalog plus skills from elsewhere (approved drafts); a name already taken is left out."""
        candidates = [*self.skills, *extra]
        verdicts = keep_unique([s.name for s in candidates])
        kept = tuple(s for s, verdict in zip(candidates, verdicts) if verdict is None)
        dropped = tuple(LeftOut(f"{s.origin}/{s.name}", v) for s, v in zip(candidates, verdicts) if v is not None)
        return SkillCatalog(kept, (*self.left_out, *dropped))


def user_skills_root(explicit: str | Path | None = None) -> Path | None:
    """The run's ``skills_root``, else ``REINS_SKILLS_ROOT`` (read at each use), else none."""
    configured = str(explicit).strip() if explicit else os.environ.get(SKILLS_ROOT_ENV, "").strip()
    if not configured:
        return None
    if not Path(configured).is_dir():
        raise ResourceError(f"{SKILLS_ROOT_ENV} (or skills_root) does not name an existing directory")
    return Path(configured)


def _scan(root: Path, origin: str) -> tuple[list[Skill], list[LeftOut]]:
    skills: list[Skill] = []
    left_out: list[LeftOut] = []
    try:
        folders = sorted(entry.name for entry in os.scandir(root) if entry.is_dir())
    except OSError:
        return skills, left_out
    for folder in folders:
        where = f"{origin}/{folder}"
        try:
            relative = safe_relative(f"{folder}/{SKILL_FILE}")
            text = read_under(root, relative, f"skill://{folder}")
            parsed = parse_skill(text, folder)
        except (ResourceError, SkillRejected) as error:
            left_out.append(LeftOut(where, _reason(error)))
            continue
        skills.append(Skill(parsed.name, parsed.description, parsed.instructions, origin, root))
    return skills, left_out


def _reason(error: Exception) -> str:
    if isinstance(error, SkillRejected):
        return str(error)
    text = str(error)
    if "too large" in text:
        return "file_too_large: " + text.split("(", 1)[-1].rstrip(")")
    if "outside its root" in text:
        return "outside_root: the SKILL.md resolves outside the skills root"
    if "not UTF-8" in text:
        return "not_utf8: the SKILL.md is not UTF-8 text"
    return "unreadable: " + text


def load_catalog(
    user_root: str | Path | None = None, bundled_root: Path = BUNDLED_SKILLS, *, user_skills: bool = True
) -> SkillCatalog:
    """Bundled skills first, then the user's (unless ``user_skills`` is false); a name already taken
    is left out."""
    bundled, left_bundled = _scan(bundled_root, BUNDLED)
    root = user_skills_root(user_root) if user_skills else None
    mine, left_mine = _scan(root, USER) if root is not None else ([], [])
    candidates = [*bundled, *mine]
    verdicts = keep_unique([s.name for s in candidates])
    kept = tuple(s for s, verdict in zip(candidates, verdicts) if verdict is None)
    duplicates = [LeftOut(f"{s.origin}/{s.name}", v) for s, v in zip(candidates, verdicts) if v is not None]
    return SkillCatalog(kept, (*left_bundled, *left_mine, *duplicates))


def read_skill_file(skill: Skill, path: str) -> str:
    """Level 2: a file the skill's instructions name, from the skill's own folder (sandboxed)."""
    if skill.root is None or path.strip().removeprefix("./") not in skill.files:
        named = ", ".join(skill.files) or "none"
        raise ResourceError(f"skill {skill.name} does not name that file; it names: {named}")
    relative = PurePosixPath(skill.name) / safe_relative(path.strip().removeprefix("./"))
    return cut_for_prompt(read_under(skill.root, relative, f"skill://{skill.name}/{relative.name}"), SKILL_FILE_CHARS)


def approved_drafts(items: list) -> list[Skill]:
    """Skill drafts a person approved, as store items hold them (validated again: a stored value
    that no longer fits the schema is left out, not trusted)."""
    from pydantic import ValidationError

    from reins.schemas.skills import SkillDraft

    skills = []
    for item in sorted(items, key=lambda i: i.created_at):
        value = dict(item.value or {})
        if value.get("status") != "approved":
            continue
        try:
            draft = SkillDraft.model_validate({key: value.get(key) for key in ("name", "description", "instructions")})
        except ValidationError:
            continue
        skills.append(Skill(draft.name, draft.description, draft.instructions, "approved"))
    return skills

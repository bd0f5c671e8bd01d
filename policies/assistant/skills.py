"""Rules for skills in the Agent Skills format: how a ``SKILL.md`` is read, which skills are kept,
what the always-present index (level 0) holds and which files a skill may have read (level 2).

A skill is text: these rules parse and bound it, nothing here (or anywhere) runs it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import yaml
from pydantic import ValidationError

from reins.policies.text.redaction import truncate
from reins.schemas.skills import MAX_INSTRUCTIONS, SkillFrontMatter

SKILL_FILE = "SKILL.md"
MAX_SKILLS = 30  # skills listed in the index; more are left out (and named by ``reins doctor``)
INDEX_LINE_CHARS = 200
INDEX_CHARS = 3000
MAX_NAMED_FILES = 20

# Reasons a skill is left out (stable codes; ``reins doctor`` shows them).
BAD_FRONT_MATTER = "bad_front_matter"
NAME_MISMATCH = "name_differs_from_folder"
DUPLICATE_NAME = "duplicate_name"
TOO_MANY = "too_many_skills"
INSTRUCTIONS_TOO_LONG = "instructions_too_long"
NO_INSTRUCTIONS = "no_instructions"

_FRONT = re.compile(r"\A\ufeff?---[ \t]*\r?\n(?P<yaml>.*?)\r?\n---[ \t]*(?:\r?\n|\Z)(?P<body>.*)\Z", re.S)
# A file the instructions name: a relative path with an extension, in backticks or a markdown link.
_NAMED = re.compile(r"`([A-Za-z0-9_][A-Za-z0-9_./\-]*\.[A-Za-z0-9]{1,8})`|\]\(([A-Za-z0-9_][A-Za-z0-9_./\-]*\.[A-Za-z0-9]{1,8})\)")


class SkillRejected(ValueError):
    """A skill that is left out; ``code`` says why (one of the reasons above)."""

    def __init__(self, code: str, detail: str = ""):
        self.code = code
        super().__init__(f"{code}: {detail}" if detail else code)


@dataclass(frozen=True)
class ParsedSkill:
    name: str
    description: str
    instructions: str


def parse_skill(text: str, folder: str) -> ParsedSkill:
    """``SKILL.md`` text → its validated name, description and instructions (raises ``SkillRejected``).

    The name must equal the skill's folder name, as the format requires.
    """
    match = _FRONT.match(text or "")
    if not match:
        raise SkillRejected(BAD_FRONT_MATTER, "no YAML front matter between --- lines")
    try:
        data = yaml.safe_load(match["yaml"])
    except yaml.YAMLError:
        raise SkillRejected(BAD_FRONT_MATTER, "the front matter is not valid YAML") from None
    if not isinstance(data, Mapping):
        raise SkillRejected(BAD_FRONT_MATTER, "the front matter is not a mapping")
    try:
        front = SkillFrontMatter.model_validate(data)
    except ValidationError as error:
        fields = ", ".join(sorted({".".join(map(str, e["loc"])) or "$" for e in error.errors()}))
        raise SkillRejected(BAD_FRONT_MATTER, f"invalid or unknown keys ({truncate(fields, 120)})") from None
    if front.name != folder:
        raise SkillRejected(NAME_MISMATCH, f"name {front.name!r} is not the folder name")
    instructions = match["body"].strip()
    if not instructions:
        raise SkillRejected(NO_INSTRUCTIONS, "the SKILL.md has no instructions after the front matter")
    if len(instructions) > MAX_INSTRUCTIONS:
        raise SkillRejected(INSTRUCTIONS_TOO_LONG, f"more than {MAX_INSTRUCTIONS} characters of instructions")
    return ParsedSkill(front.name, " ".join(front.description.split()), instructions)


def keep_unique(names: Sequence[str], max_skills: int = MAX_SKILLS) -> list[str | None]:
    """For each candidate (in priority order: bundled first, then the user's), ``None`` when it is
    kept, else why it is left out: a name already taken, or past ``max_skills``."""
    seen: set[str] = set()
    verdicts: list[str | None] = []
    for name in names:
        if name in seen:
            verdicts.append(DUPLICATE_NAME)
        elif len(seen) >= max_skills:
            verdicts.append(TOO_MANY)
        else:
            seen.add(name)
            verdicts.append(None)
    return verdicts


def index_lines(skills: Iterable[tuple[str, str]], max_chars: int = INDEX_CHARS) -> list[str]:
    """Level 0: one ``name: description`` line per skill, each cut, the whole list bounded."""
    lines: list[str] = []
    used = 0
    for name, description in skills:
        line = truncate(f"{name}: {' '.join(description.split())}", INDEX_LINE_CHARS)
        if used + len(line) > max_chars:
            break
        lines.append(line)
        used += len(line) + 1
    return lines


def named_files(instructions: str) -> tuple[str, ...]:
    """Level 2: the relative files a skill's instructions name (backticked or linked), in order.

    Only these may be read through ``read_skill_file``; absolute paths, ``..`` and URLs never match.
    """
    found: list[str] = []
    for match in _NAMED.finditer(instructions or ""):
        path = match.group(1) or match.group(2)
        parts = path.split("/")
        if ".." in parts or "" in parts or "://" in path or path == "SKILL.md" or path in found:
            continue
        found.append(path)
    return tuple(found[:MAX_NAMED_FILES])

"""A skill's front matter in the Agent Skills format (``SKILL.md``: YAML between ``---`` lines, then
the instructions), and a skill draft proposed from experience (``assistant.skill_draft``).

The front matter is untrusted input: unknown keys are refused, the name is a short kebab-case
identifier, the description a bounded line.
"""

from __future__ import annotations

from pydantic import Field

from reins.schemas.assistant import TRIMMED, Text
from reins.schemas.strict import Strict

SKILL_NAME_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
MAX_DESCRIPTION = 1024
MAX_INSTRUCTIONS = 8000


class SkillFrontMatter(Strict):
    """``name`` and ``description`` are required; the other keys the format defines are accepted
    and carry no power here (``allowed-tools`` is read as documentation: skills never run code)."""

    model_config = TRIMMED
    name: str = Field(min_length=1, max_length=64, pattern=SKILL_NAME_PATTERN)
    description: Text(MAX_DESCRIPTION)
    license: Text(200) | None = None
    compatibility: Text(500) | None = None
    metadata: dict[str, Text(200)] | None = Field(default=None, max_length=20)
    allowed_tools: Text(500) | None = Field(default=None, alias="allowed-tools")


class SkillDraft(Strict):
    """``assistant.skill_draft``: a skill proposed from repeated successful tasks, for a person to review."""

    model_config = TRIMMED
    name: str = Field(min_length=1, max_length=64, pattern=SKILL_NAME_PATTERN)
    description: Text(300)
    instructions: Text(2000)

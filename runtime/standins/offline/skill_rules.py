"""How the offline stand-in follows a user's own skill: rules, not a language model, so only a few
written forms of instruction are understood, each line of the skill's instructions on its own:

- ``Reply with "… {answer} …"``: the answer put into that text (``{answer}`` is the answer so far);
- ``Start the answer with "…"`` / ``End the answer with "…"``: text before or after it;
- ``Write the answer in capitals`` (or ``upper case``) / ``… in lower case``: the answer's case.

They apply in that order, whatever order the lines are in. The answer so far is what the tools
established, else the request's quoted text, else the request after the skill's name ("shout we
won" → "we won"). A skill with none of these forms is loaded but not followed: the answer says so and
names the forms that work. The bundled skills are not read this way: the stand-in knows their rules.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

FORMS = ('Reply with "… {answer} …"', 'Start the answer with "…"', 'End the answer with "…"',
         "Write the answer in capitals", "Write the answer in lower case")

_QUOTED = r'\s*:?\s*["“](.+?)["”]'
_LINE_START = r"^[\s\-*•\d.)]*(?:always\s+)?"  # a bullet or number, then the instruction
_TEMPLATE = re.compile(_LINE_START + r"(?:reply|respond|answer)\s+(?:with|as)" + _QUOTED, re.I)
_START = re.compile(r"\b(?:start|begin)\s+(?:the\s+|your\s+|every\s+)?(?:answer|reply)\s+with" + _QUOTED, re.I)
_END = re.compile(r"\bend\s+(?:the\s+|your\s+|every\s+)?(?:answer|reply)\s+with" + _QUOTED, re.I)
_UPPER = re.compile(r"\b(?:in\s+(?:all\s+)?(?:capitals|capital\s+letters|upper[- ]?case)|all\s+caps)\b", re.I)
_LOWER = re.compile(r"\bin\s+(?:all\s+)?lower[- ]?case\b", re.I)
_REQUEST_QUOTED = re.compile(r'["“]([^"”]+)["”]')
_SKILL_TEXT = re.compile(r"\A.*?:\n(?P<body>.*?)(?:\nFiles it names \(read_skill_file\): .*)?\Z", re.S)


@dataclass(frozen=True)
class SkillRules:
    """What the stand-in understood of one skill's instructions."""

    name: str
    template: str = ""
    start: str = ""
    end: str = ""
    case: Callable[[str], str] | None = None

    @property
    def understood(self) -> bool:
        return bool(self.template or self.start or self.end or self.case)

    def apply(self, answer: str) -> str:
        text = self.template.replace("{answer}", answer) if self.template else answer
        text = f"{self.start} {text}".strip() if self.start else text
        text = f"{text} {self.end}".strip() if self.end else text
        return self.case(text) if self.case else text


def read_rules(name: str, observed: str) -> SkillRules:
    """The forms above found in a ``load_skill`` observation (the skill's instructions)."""
    match = _SKILL_TEXT.match(observed)
    body = match.group("body") if match else observed
    found: dict[str, object] = {}
    for line in body.splitlines():
        for key, pattern in (("template", _TEMPLATE), ("start", _START), ("end", _END)):
            if key not in found and (hit := pattern.search(line)):
                found[key] = hit.group(1).strip()
        if "case" not in found and _UPPER.search(line):
            found["case"] = str.upper
        elif "case" not in found and _LOWER.search(line):
            found["case"] = str.lower
    return SkillRules(name, **found)  # type: ignore[arg-type]


def subject(request: str, name: str) -> str:
    """What the request gives the skill to work on: its quoted text, else what follows the skill's name."""
    quoted = _REQUEST_QUOTED.findall(request)
    if quoted:
        return " ".join(part.strip() for part in quoted)
    words = name.split("-")
    found = re.search(r"\b" + r"\W+".join(map(re.escape, words)) + r"\b", request, re.I)
    rest = request[found.end():] if found else request
    rest = re.sub(r"^\W*(?:skill\b)?\W*(?:(?:on|for|with|to)\b)?\W*", "", rest, flags=re.I).strip()
    return rest.rstrip(" .!?") or request.strip()


def not_followed(name: str) -> str:
    return (f"I loaded your {name} skill, but the offline stand-in follows only these forms of instruction: "
            f"{'; '.join(FORMS)}. Configure REINS_MODEL for other instructions.")

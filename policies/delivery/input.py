"""What the delivery chain accepts as input (pure): inline requirement text or a bundled scenario.

Anything else — empty input, both at once, a version plan, ``file://``, other schemes, path escapes —
is refused with a static message (never an echo of the input) before any model is called.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reins.policies.verdict import Verdict

MAX_REQUIREMENT_CHARS = 60_000
_BARE_URI = re.compile(r"^[a-z][a-z0-9+.\-]*://\S*$", re.I)
_SCENARIO_URI = re.compile(r"^demo://scenarios/(?P<id>[a-z0-9][a-z0-9_-]{0,63})/requirement\.md$")

INPUT_MESSAGES = {
    "empty_input": "Provide a requirement: {\"requirement\": \"<text>\"} or "
    "{\"requirement_uri\": \"demo://scenarios/<id>/requirement.md\"}.",
    "ambiguous_input": "Provide either a requirement text or a scenario URI, not both.",
    "requirement_too_long": "The requirement is too long; keep it under 60,000 characters.",
    "version_plan_uri": "Version plans go to the tasklist agent (reins tasklist docs://versions/<plan>.md), "
    "not to the delivery chain.",
    "unsupported_uri": "Only bundled scenarios are accepted: demo://scenarios/<id>/requirement.md.",
    "scenario_not_found": "That scenario does not exist; list them with `reins deliver --list`.",
}


@dataclass(frozen=True)
class InputVerdict(Verdict):
    """Accepted as ``inline`` text or a bundled ``scenario`` (its id), or refused (``rejected``, with
    the static message of its code)."""

    kind: str = "rejected"  # inline | scenario | rejected
    scenario_id: str = ""


def _rejected(code: str) -> InputVerdict:
    return InputVerdict.refuse(code, INPUT_MESSAGES)


def classify_delivery_input(requirement: object, requirement_uri: object) -> InputVerdict:
    text = requirement.strip() if isinstance(requirement, str) else ""
    uri = requirement_uri.strip() if isinstance(requirement_uri, str) else ""
    if (requirement is not None and not isinstance(requirement, str)) or (
        requirement_uri is not None and not isinstance(requirement_uri, str)
    ):
        return _rejected("empty_input")
    if text and uri:
        return _rejected("ambiguous_input")
    if _BARE_URI.match(text):  # a URI passed as the requirement is judged as the URI it is
        text, uri = "", text
    if uri:
        match = _SCENARIO_URI.match(uri)
        if match:
            return InputVerdict(True, kind="scenario", scenario_id=match["id"])
        if re.match(r"^docs://versions/", uri, re.I):
            return _rejected("version_plan_uri")
        return _rejected("unsupported_uri")
    if not text:
        return _rejected("empty_input")
    if len(text) > MAX_REQUIREMENT_CHARS:
        return _rejected("requirement_too_long")
    return InputVerdict(True, kind="inline")


# Extensions of the files a requirement is written in: one word ending so names a file, not a requirement.
_TEXT_FILE_SUFFIX = re.compile(r"\.(md|markdown|txt|text|rst|adoc|org|json|ya?ml|toml)$", re.I)
_PATH_PREFIX = ("./", "../", "/", "~/", ".\\", "..\\")


def looks_like_a_path(word: str) -> bool:
    """Whether one command-line word reads as a file name rather than a requirement: no whitespace
    and a path prefix (``./``, ``../``, ``/``, ``~/``) or a text-file extension (``.md``, ``.txt`` …).
    A sentence, a URI or ``~user/...`` is not one."""
    if not word or any(ch.isspace() for ch in word) or "://" in word:
        return False
    return word.startswith(_PATH_PREFIX) or bool(_TEXT_FILE_SUFFIX.search(word))


MAX_REVIEW_TIMEOUT_S = 3600.0


def check_review_timeout(value: object, name: str = "review_timeout_s") -> float | None:
    """A reviewer's wall-clock limit: None, or a number of seconds in (0, 3600]. A wrong type is a
    TypeError and a wrong number a ValueError, each naming the field."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number of seconds, not {type(value).__name__}")
    if not 0 < value <= MAX_REVIEW_TIMEOUT_S:  # NaN fails both comparisons
        raise ValueError(f"{name} must be between 0 and {MAX_REVIEW_TIMEOUT_S:g} seconds")
    return float(value)

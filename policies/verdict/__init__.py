"""A policy's answer to "may this go ahead?" — one shape for every policy that allows or refuses.

``allowed`` says whether it may; a refusal names the rule it applied (``code``, stable: what traces,
tests and callers branch on) and says why in one line a person can read (``reason``). A policy
whose answer carries more (the status a step leads to, the host a URL names) extends the shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    reason: str = ""  # why not, in one line (empty when allowed)
    code: str = ""  # the rule that refused (empty when allowed)

    @classmethod
    def refuse(cls, code: str, reason: str | Mapping[str, str], **details: Any) -> Self:
        """The refusal by rule ``code``; ``reason`` is its line, or the policy's table of lines by code."""
        return cls(False, reason if isinstance(reason, str) else reason[code], code, **details)


ALLOWED = Verdict(True)

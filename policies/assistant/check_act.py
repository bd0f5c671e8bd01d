"""Check → act: when the check phase finds unfinished plan steps or claims no tool result supports,
the turn may go back to the tool loop once, told only *what* is wrong and *where* (``{code,
where}`` pairs: never the rejected text, which could carry an injection or the error itself).

The round is bounded: at most ``MAX_CHECK_ROUNDS`` per turn, only in a turn that used the tool loop,
only when the loop ended on its own (not stopped by a guard or a failing model) and while the step
budget has room. After the round the answer is checked again and a second failure caps the verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import get_args

from reins.policies.verdict import ALLOWED, Verdict
from reins.schemas.assistant import Intent

MAX_CHECK_ROUNDS = 1
MAX_FINDINGS = 10

UNFINISHED_STEP = "unfinished_step"
UNSUPPORTED_CLAIM = "unsupported_claim"
UNSUPPORTED_NUMBER = "unsupported_number"

TOOL_TURNS: tuple[str, ...] = tuple(intent for intent in get_args(Intent) if intent != "QA")  # intents that use tools

# Why no round is taken (the trace says which).
NOTHING_FOUND = "nothing_found"
ROUND_USED = "round_used"
NOT_A_TOOL_TURN = "not_a_tool_turn"
LOOP_STOPPED = "loop_stopped"
NO_STEPS_LEFT = "no_steps_left"
NO_ROUND_REASONS: Mapping[str, str] = {
    NOTHING_FOUND: "the check found nothing to act on",
    ROUND_USED: "the one check-act round is used",
    NOT_A_TOOL_TURN: "the turn used no tools",
    LOOP_STOPPED: "the tool loop was stopped",
    NO_STEPS_LEFT: "no tool steps are left",
}


def check_findings(
    unfinished_steps: Iterable[int],
    claims: Iterable[tuple[str, str]],
    unsupported_numbers: bool,
) -> list[dict[str, str]]:
    """The findings as ``{code, where}``: ``claims`` are ``(where, tool)`` pairs (e.g.
    ``("summary", "calculator")``); numbers are reported by place only, never by value."""
    findings = [{"code": UNFINISHED_STEP, "where": f"plan step {step}"} for step in unfinished_steps]
    for where, tool in claims:
        finding = {"code": UNSUPPORTED_CLAIM, "where": f"{where} ({tool})"}
        if finding not in findings:
            findings.append(finding)
    if unsupported_numbers:
        findings.append({"code": UNSUPPORTED_NUMBER, "where": "summary"})
    return findings[:MAX_FINDINGS]


def decide_check_act(
    findings: Sequence[object],
    *,
    rounds_used: int,
    intent: str | None,
    stop_reason: str | None,
    steps_taken: int,
    max_steps: int,
) -> Verdict:
    """Go back to the tool loop with the findings (allowed), or reply now (the answer's verdict is
    then capped)."""
    if not findings:
        return Verdict.refuse(NOTHING_FOUND, NO_ROUND_REASONS)
    if rounds_used >= MAX_CHECK_ROUNDS:
        return Verdict.refuse(ROUND_USED, NO_ROUND_REASONS)
    if intent not in TOOL_TURNS:
        return Verdict.refuse(NOT_A_TOOL_TURN, NO_ROUND_REASONS)
    if stop_reason:
        return Verdict.refuse(LOOP_STOPPED, NO_ROUND_REASONS)
    if steps_taken >= max_steps:
        return Verdict.refuse(NO_STEPS_LEFT, NO_ROUND_REASONS)
    return ALLOWED

"""Guards of the assistant's tool loop: a step budget, a repeat limit and stall detection.

The model proposes the next tool call; these rules decide whether it runs. Each returns a verdict
(its ``code`` the rule that stopped the loop, its ``reason`` what the answer tells the user) so the
graph can route on it and the trace can say why the loop stopped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from reins.policies.verdict import ALLOWED, Verdict

MAX_STEPS = 10
MAX_IDENTICAL_CALLS = 2
STALL_SIMILARITY = 0.9
# A stall needs this many consecutive observations, each ≥ STALL_SIMILARITY to the one before.
# Two is not enough: the repeat rule deliberately allows one identical retry, whose observation is
# naturally identical; the repeat rule stops the third identical call, stall detection catches
# *different* calls that keep producing the same result. A call that changed something (a side
# effect that succeeded) is progress whatever it returned — "sent" three times to three people is
# not a stall — so the window counts only the observations after the last change; a loop of
# changes stays bounded by the repeat rule (same call) and the step budget (different calls).
STALL_WINDOW = 3

STEP_LIMIT = "step_limit"
REPEATED_CALL = "repeated_call"
STALLED = "stalled"

STOP_MESSAGES: Mapping[str, str] = {
    STEP_LIMIT: f"I stopped after {MAX_STEPS} tool steps (the step limit) before the task was finished.",
    REPEATED_CALL: (
        "I stopped because the same tool was requested a third time with the same arguments; "
        "repeating it would not change the result."
    ),
    STALLED: "I stopped because the last tool results were nearly identical: the task was not making progress.",
}

_TOKEN = re.compile(r"[a-z0-9]+(?:[.'][a-z0-9]+)*|[\u3400-\u9fff]", re.I)


def _canonical(value: Any) -> Any:
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    return value


def call_signature(tool: str, args: Mapping[str, Any] | None) -> str:
    """Same tool + same arguments (key order and whitespace ignored) → same signature."""
    return json.dumps([tool, _canonical(dict(args or {}))], sort_keys=True, ensure_ascii=False, default=str)


def check_step_budget(steps_taken: int, max_steps: int = MAX_STEPS) -> Verdict:
    """Another step is allowed while fewer than ``max_steps`` have been taken."""
    return ALLOWED if steps_taken < max_steps else Verdict.refuse(STEP_LIMIT, STOP_MESSAGES)


def check_repeat(previous: Sequence[str], signature: str, max_identical: int = MAX_IDENTICAL_CALLS) -> Verdict:
    """The same call may run at most ``max_identical`` times; the next identical attempt is refused."""
    if list(previous).count(signature) < max_identical:
        return ALLOWED
    return Verdict.refuse(REPEATED_CALL, STOP_MESSAGES)


def tokens(text: str) -> frozenset[str]:
    """Lower-case word tokens; CJK characters count one by one (they are not space-separated)."""
    return frozenset(t.lower() for t in _TOKEN.findall(text or ""))


def jaccard(left: str, right: str) -> float:
    a, b = tokens(left), tokens(right)
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def detect_stall(
    observations: Sequence[str],
    threshold: float = STALL_SIMILARITY,
    window: int = STALL_WINDOW,
    changed: Sequence[bool] = (),
) -> Verdict:
    """Stalled when the last ``window`` observations are each ≥ ``threshold`` similar to the previous one,
    counting only those after the last call that changed something (``changed[i]``: observation ``i``
    came from a side-effecting call that succeeded; missing entries are False)."""
    flags = list(changed)
    last_change = max((i for i, flag in enumerate(flags[: len(observations)]) if flag), default=-1)
    since = list(observations)[last_change + 1:]
    if window < 2 or len(since) < window:
        return ALLOWED
    recent = since[-window:]
    if all(jaccard(recent[i - 1], recent[i]) >= threshold for i in range(1, len(recent))):
        return Verdict.refuse(STALLED, STOP_MESSAGES)
    return ALLOWED


def check_proposed_call(
    steps_taken: int,
    previous_signatures: Sequence[str],
    tool: str,
    args: Mapping[str, Any] | None,
    max_steps: int = MAX_STEPS,
) -> Verdict:
    """Budget first (no step beyond the limit), then the repeat limit."""
    budget = check_step_budget(steps_taken, max_steps)
    if not budget.allowed:
        return budget
    return check_repeat(previous_signatures, call_signature(tool, args))

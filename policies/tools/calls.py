"""Which proposed tool calls run, and how (pure rules of the assistant's tool loop).

- A call runs at once when its tool's approval trait is ``run`` (``reins.policies.tools.approval``); a
  tool that asks pauses for a person's approval *before* it runs; a question pauses to ask.
- One step runs up to ``MAX_PARALLEL_CALLS`` independent read-only calls together; a call that
  pauses (a side effect, a question) is never batched: it runs alone, the others wait a step.
- At most ``MAX_QUESTIONS_PER_TURN`` questions to the user per turn.
- A decision on a paused call has one of three shapes; anything else is refused in one line. An
  approval may also allow the tool for the rest of the thread (``"scope": "thread"``): its trait
  no longer asks there, while the data-flow rules still pause any call they would.
- A read-only call that failed for a retryable reason is dispatched once more; a side effect never
  is (it may have happened).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reins.policies.tools.approval import Approval

MAX_PARALLEL_CALLS = 3
MAX_QUESTIONS_PER_TURN = 2
MAX_DISPATCHES = 2  # the first try and one more for a retryable failure
MAX_REASON_CHARS = 500

APPROVAL_DECISIONS: tuple[Mapping[str, Any], ...] = (
    {"type": "approve"},
    {"type": "approve", "scope": "thread"},
    {"type": "reject", "reason": "..."},
    {"type": "edit", "args": {"...": "..."}},
)
# Why a tool call failed: no result within its deadline, a lost connection to its server, or the
# tool's own error (runtime.llm.failures classifies an exception into one).
DEADLINE = "deadline"
CONNECTION = "connection"
TOOL_ERROR = "tool_error"
RETRYABLE_FAILURES = frozenset({CONNECTION})


def batch(executions: Sequence[Approval], limit: int = MAX_PARALLEL_CALLS) -> int:
    """How many of the step's proposed calls (in order) run now: up to ``limit`` that run at once,
    or the first alone when it pauses; 0 for none."""
    if not executions:
        return 0
    if executions[0] != "run":
        return 1
    count = 0
    for execution in executions[:limit]:
        if execution != "run":
            break
        count += 1
    return count


def question_allowed(asked_this_turn: int, limit: int = MAX_QUESTIONS_PER_TURN) -> bool:
    return asked_this_turn < limit


@dataclass(frozen=True)
class Decision:
    """A person's decision on a paused call, checked; ``problem``: why it was refused (one line)."""

    kind: str = ""
    reason: str = ""
    args: Mapping[str, Any] | None = None
    problem: str = ""
    thread: bool = False  # an approval that also allows the tool for the rest of the thread

    @property
    def valid(self) -> bool:
        return not self.problem


def read_decision(value: Any) -> Decision:
    """``{"type": "approve"}`` (``"scope": "thread"`` allows the tool for the rest of the thread) |
    ``{"type": "reject", "reason": str}`` | ``{"type": "edit", "args": {...}}``."""
    if not isinstance(value, Mapping):
        return Decision(problem='a decision is a JSON object such as {"type": "approve"}')
    kind = value.get("type")
    expected = {"approve": {"type", "scope"}, "reject": {"type", "reason"}, "edit": {"type", "args"}}
    if not isinstance(kind, str) or kind not in expected:
        return Decision(problem="decision type must be approve, reject or edit")
    extra = set(value) - expected[kind]
    if extra:
        return Decision(problem=f"unexpected field(s) for {kind}: {', '.join(sorted(map(str, extra)))}")
    if kind == "reject":
        reason = value.get("reason", "")
        if not isinstance(reason, str) or not reason.strip():
            return Decision(problem="a rejection needs a non-empty reason")
        return Decision("reject", reason=" ".join(reason.split())[:MAX_REASON_CHARS])
    if kind == "edit":
        args = value.get("args")
        if not isinstance(args, Mapping):
            return Decision(problem="an edit needs args: a JSON object of the tool's arguments")
        return Decision("edit", args=dict(args))
    scope = value.get("scope", "call")
    if scope not in ("call", "thread"):
        return Decision(problem='an approval\'s scope is "call" (this call) or "thread" (this tool, for the rest '
                                'of the thread)')
    return Decision("approve", thread=scope == "thread")


def rejection_observation(reason: str) -> str:
    return f"rejected by the user: {reason}"


def read_answer(value: Any, options: Sequence[str] | None) -> tuple[str, str]:
    """(answer, problem) for an answer to ``ask_user``: a non-empty string, one of ``options`` when
    there are options (an option's number counts too)."""
    if isinstance(value, Mapping):
        value = value.get("answer")
    if not isinstance(value, str) or not value.strip():
        return "", 'an answer is a non-empty string (or {"answer": "..."})'
    text = " ".join(value.split())[:MAX_REASON_CHARS]
    if options:
        if text.isdigit() and 1 <= int(text) <= len(options):
            return options[int(text) - 1], ""
        if text not in options:
            return "", f"answer with one of the options: {', '.join(options)}"
    return text, ""


def should_dispatch_again(read_only: bool, failure: str, dispatches: int) -> bool:
    """Once more only for a read-only call whose failure is retryable (a lost connection)."""
    return read_only and failure in RETRYABLE_FAILURES and dispatches < MAX_DISPATCHES

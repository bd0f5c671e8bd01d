"""Decisions on a paused side effect, bound to the exact call and taken once (pure rules).

- A pause carries a fingerprint of the policy that asked, the tool name and its canonical
  arguments; a decision that names another fingerprint is stale and refused.
- A resume value is checked before LangGraph stores it as the pause's answer: its size, its
  nesting depth, then its shape. LangChain's ``HumanInTheLoopMiddleware`` shape
  (``{"decisions": [one decision]}``, ``edited_action``, ``message``) is read as an alias.
- An approved call is *dispatched* once: its claim is written before it runs, naming its holder,
  whose lease says whether it still runs (``reins.policies.tools.claims``). While it is live nothing more is
  decided on it. A claim whose holder is gone or silent, with no result recorded, turns the pause
  into a distinct question — the call may already have run: ``run_again``, ``mark_done`` or
  ``skip``. An approval is never repeated implicitly.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from reins.policies.tools.claims import Holder, Liveness, offers_recovery, still_running, why_unfinished
from reins.policies.text.json_limits import json_depth
from reins.policies.tools.calls import APPROVAL_DECISIONS, Decision, read_decision

APPROVAL_POLICY = "side-effect-approval/1"  # the rule that pauses a call that is neither read-only nor trusted
MAX_DECISION_DEPTH = 32
MAX_DECISION_CHARS = 200_000
FINGERPRINT = "fingerprint"

RECOVERY_DECISIONS: tuple[Mapping[str, Any], ...] = ({"type": "run_again"}, {"type": "mark_done"}, {"type": "skip"})
APPROVAL_KINDS = frozenset(d["type"] for d in APPROVAL_DECISIONS)
RECOVERY_KINDS = frozenset(d["type"] for d in RECOVERY_DECISIONS)
# What a claim records as the decision it consumed; only "run" executes the call.
ClaimKind = Literal["run", "reject", "mark_done", "skip"]


def canonical_args(args: Mapping[str, Any]) -> str:
    """The arguments as one stable text: sorted keys, no spacing, unicode kept."""
    return json.dumps(dict(args), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def call_fingerprint(tool: str, args: Mapping[str, Any], policy: str = APPROVAL_POLICY) -> str:
    """What a decision is bound to: the policy that asked, the tool and its exact arguments."""
    text = "\n".join((policy, tool, canonical_args(args)))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


IDEMPOTENCY_META = "idempotencyKey"  # the MCP request's ``_meta`` field a deduplicating server reads


def idempotency_key(thread_id: str | None, call_number: int, fingerprint: str) -> str:
    """The key an approved call carries to its server: the same for every dispatch of this call in
    this thread (a re-dispatch after a crash included), different for any other call."""
    text = "\n".join((thread_id or "", str(call_number), fingerprint))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _size_over(value: Any, limit: int) -> bool:
    """True when ``value`` written as JSON would exceed ``limit`` characters (an estimate, no recursion)."""
    total, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            total += 2 + sum(len(str(key)) + 4 for key in item)
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            total += 2 + len(item)
            stack.extend(item)
        else:
            total += len(item) + 2 if isinstance(item, str) else len(str(item)) if isinstance(item, (int, float)) else 4
        if total > limit:
            return True
    return False


def value_problem(value: Any, max_depth: int = MAX_DECISION_DEPTH, max_chars: int = MAX_DECISION_CHARS) -> str:
    """Why a resume value is refused before anything reads its shape ("" when within the limits)."""
    if json_depth(value, stop_at=max_depth) > max_depth:
        return f"the decision is nested deeper than {max_depth} levels"
    if _size_over(value, max_chars):
        return f"the decision is larger than {max_chars} characters"
    return ""


def from_middleware_shape(value: Any, tool: str = "") -> tuple[Any, str]:
    """LangChain's ``{"decisions": [decision]}`` as Reins' decision (any other value unchanged), and
    why it cannot be read ("" when it can). ``edit`` carries ``edited_action: {name, args}`` (the name
    must be the paused tool's), ``reject`` an optional ``message``."""
    if not (isinstance(value, Mapping) and set(value) <= {"decisions", FINGERPRINT} and "decisions" in value):
        return value, ""
    decisions = value["decisions"]
    if not isinstance(decisions, Sequence) or isinstance(decisions, str) or len(decisions) != 1:
        return value, "decisions must hold exactly one decision for the paused call"
    decision = decisions[0]
    if not isinstance(decision, Mapping):
        return decision, ""
    bound = {FINGERPRINT: value[FINGERPRINT]} if FINGERPRINT in value else {}
    kind = decision.get("type")
    if kind == "reject" and set(decision) <= {"type", "message"}:
        return {"type": "reject", "reason": decision.get("message") or "rejected", **bound}, ""
    if kind == "edit" and set(decision) == {"type", "edited_action"} and isinstance(decision["edited_action"], Mapping):
        action = decision["edited_action"]
        if action.get("name", tool) != tool:
            return value, "an edit may change the arguments, not the tool"
        return {"type": "edit", "args": action.get("args"), **bound}, ""
    return {**decision, **bound}, ""


def stale_problem(value: Any, fingerprint: str) -> str:
    """A decision naming another call's fingerprint is stale; one without a fingerprint applies to
    the pause it answers."""
    if isinstance(value, Mapping) and FINGERPRINT in value and value[FINGERPRINT] != fingerprint:
        shown = str(value[FINGERPRINT])[:20]
        return f"stale decision: it is for call {shown}, the pending call is {fingerprint}"
    return ""


def _unbound(value: Any) -> Any:
    return {k: v for k, v in value.items() if k != FINGERPRINT} if isinstance(value, Mapping) else value


def read_recovery(value: Any, fingerprint: str) -> Decision:
    """A decision on a call that may already have run: ``run_again`` | ``mark_done`` | ``skip``."""
    problem = value_problem(value) or stale_problem(value, fingerprint)
    if problem:
        return Decision(problem=problem)
    value = _unbound(from_middleware_shape(value)[0])
    kinds = {d["type"] for d in RECOVERY_DECISIONS}
    kind = value.get("type") if isinstance(value, Mapping) else None
    if not isinstance(kind, str) or kind not in kinds or set(value) != {"type"}:
        return Decision(problem="the call may already have run: answer "
                        + ", ".join(json.dumps(dict(d)) for d in RECOVERY_DECISIONS))
    return Decision(kind)


def allowed_shapes() -> str:
    """The accepted decisions, for a refusal that names them."""
    return ", ".join(json.dumps(dict(d)) for d in APPROVAL_DECISIONS) + ' (or {"decisions": [<one of these>]})'


@dataclass(frozen=True)
class Claim:
    """A decision consumed on a pause: ``attempt`` counts the claims on it (1 for the approval).
    ``holder``: the process that took it; ``renewed_at``: its lease's last renewal (epoch seconds);
    ``released``: its holder said the dispatch ended without a result; ``state``: its liveness as its
    reader saw it (not stored: a claim read without looking is stale)."""

    attempt: int
    kind: ClaimKind
    token: str
    dispatched_at: str = ""
    tool: str = ""
    args: Mapping[str, Any] | None = None
    holder: Mapping[str, Any] | None = None
    renewed_at: float = 0.0
    released: bool = False
    state: Liveness = "stale"

    @property
    def live(self) -> bool:
        return self.state == "live"

    def held_by(self) -> Holder | None:
        return Holder.read(self.holder)


def open_claim(claims: Sequence[Claim]) -> Claim | None:
    """The newest claim on a pause whose result is not recorded (its run ended before the result)."""
    return max(claims, key=lambda c: c.attempt) if claims else None


def next_attempt(claims: Sequence[Claim]) -> int:
    latest = open_claim(claims)
    return latest.attempt + 1 if latest else 1


Outcome = Literal["run", "refuse", "recover"]


def decide_dispatch(decision_kind: str, claims: Sequence[Claim]) -> Outcome:
    """What a valid decision does on a pause, given the claims already on it:

    - no claim: the decision is taken (``run``: claim it, then act);
    - a live claim (its holder is carrying it out): every decision is refused;
    - a claim and an approval, an edit or a rejection: it was already taken (``refuse``);
    - a claim whose holder is gone or silent and a recovery decision: the user chose after a
      possible earlier run (``recover``).
    """
    latest = open_claim(claims)
    if latest is None:
        return "refuse" if decision_kind in RECOVERY_KINDS else "run"
    return "recover" if decision_kind in RECOVERY_KINDS and offers_recovery(latest.state) else "refuse"


def claim_kind(decision_kind: str) -> ClaimKind:
    """The claim a decision writes: approve, edit and run_again execute the call."""
    return "run" if decision_kind in ("approve", "edit", "run_again") else decision_kind  # type: ignore[return-value]


def recovery_observation(kind: str, claim: Claim) -> str:
    when = f" at {claim.dispatched_at}" if claim.dispatched_at else ""
    if kind == "mark_done":
        return f"marked done by the user: the call was dispatched{when} and may have run; it was not run again"
    return f"skipped by the user: the call was dispatched{when} and may have run; it was not run again"


def already_taken(tool: str, claim: Claim) -> str:
    """The one line a losing resume reads: a live claim is running (wait for it); only a claim whose
    holder is gone or silent offers the answers after a possible earlier run."""
    if claim.live:
        return still_running(tool, claim.held_by(), claim.dispatched_at, claim.kind)
    when = f" at {claim.dispatched_at}" if claim.dispatched_at else ""
    if claim.kind == "run":
        return (f"the decision on {tool} was already taken (dispatched{when}) and it may already have run "
                f"({why_unfinished(claim.state, claim.held_by())}): answer "
                '{"type": "run_again"}, {"type": "mark_done"} or {"type": "skip"}')
    return f"the decision on {tool} was already taken ({claim.kind}{when})"



def read_any(value: Any, fingerprint: str, tool: str = "") -> Decision:
    """A decision on an approval pause, whichever question it answers: approve | reject | edit, or
    (after a possible earlier run) run_again | mark_done | skip. Limits, alias and binding first."""
    problem = value_problem(value)
    if problem:
        return Decision(problem=problem)
    value, problem = from_middleware_shape(value, tool)
    problem = problem or stale_problem(value, fingerprint)
    if problem:
        return Decision(problem=problem)
    value = _unbound(value)
    kind = value.get("type") if isinstance(value, Mapping) else None
    if isinstance(kind, str) and kind in RECOVERY_KINDS:
        return read_recovery(value, fingerprint)
    decision = read_decision(value)
    if not decision.valid and decision.problem.startswith("decision type"):
        return Decision(problem=f"{decision.problem}: {allowed_shapes()}")
    return decision


def refusal(decision_kind: str, claims: Sequence[Claim], tool: str) -> str:
    """Why a valid decision cannot be taken now ("" when it can): see ``decide_dispatch``."""
    if decide_dispatch(decision_kind, claims) != "refuse":
        return ""
    latest = open_claim(claims)
    if latest is None:
        return "the call has not been dispatched: answer approve, reject or edit"
    return already_taken(tool, latest)

"""A run's worst case, computed from its configuration alone (pure).

Every limit a run lives under is a number in its configuration: the one repair of a contract, the
manager's re-ask budget, the reviewer count, the assistant's step budget and check round, each role's
retries, fallbacks, output bound and per-call timeout. Multiplied out along the graph's longest path
they give the most model requests, output tokens, tool calls and seconds any run can take — whatever
the model answers. ``reins doctor --budget`` prints it, each report sets what a run used beside it,
and a user may cap it (``REINS_MAX_CALLS`` …): a configuration whose worst case exceeds a cap is
refused before the run starts, and a run that reaches a cap fails closed.

A graph's worst case is a list of ``Stage`` rows (what its nodes may ask, in order); each role's
``CallLimits`` say what one request may cost. ``budget`` multiplies them out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Literal, get_args

from reins.policies.models.deadlines import backoff_budget_s
from reins.policies.models.second_attempt import repair_output_bound

# How a stage asks its model: a contract (one call and its one repair), a free-text draft (one call
# and one repair with more room after a cut-off) or one tool-calling turn.
StageKind = Literal["contract", "text", "turn"]
STAGE_KINDS: tuple[str, ...] = get_args(StageKind)
CapName = Literal["calls", "output_tokens", "tool_calls", "seconds"]
CAP_NAMES: tuple[str, ...] = get_args(CapName)


@dataclass(frozen=True)
class CallLimits:
    """What one request of a role may cost: ``attempts`` per model of its chain (``1 + retries``), the
    number of ``models`` (the role's model, its fallbacks and an escalation model), the output bound
    and the bound of a repair after a cut-off, the per-attempt timeout and the first backoff."""

    models: int
    attempts: int
    max_tokens: int
    max_tokens_limit: int
    timeout_s: float
    backoff_initial_s: float = 1.0
    # A contract still invalid after its repair goes once more to the role's escalation model.
    escalation_attempts: int = 0

    def requests(self) -> int:
        return self.models * self.attempts

    def tokens(self, more_room: bool) -> int:
        bound = repair_output_bound(self.max_tokens, self.max_tokens_limit) if more_room else self.max_tokens
        return self.requests() * bound

    def seconds(self) -> float:
        return self.models * self._one_model_s(self.attempts)

    def escalation_s(self) -> float:
        return self._one_model_s(self.escalation_attempts) if self.escalation_attempts else 0.0

    def _one_model_s(self, attempts: int) -> float:
        return attempts * self.timeout_s + backoff_budget_s(attempts - 1, self.backoff_initial_s)


def widest(first: CallLimits, *others: CallLimits) -> CallLimits:
    """Limits no smaller than any of these in every field: a request that may go to any of several
    chains (a task role served as the vision role for a turn with an image) costs at most this
    (every cost grows with every field)."""
    values = {f.name: max(getattr(limits, f.name) for limits in (first, *others)) for f in fields(CallLimits)}
    return CallLimits(**values)


@dataclass(frozen=True)
class Stage:
    """``count`` asks of one kind by one role. ``parallel``: they run side by side (wall time counts
    one); ``deadline_s``: a wall-clock limit on each (a reviewer's); ``more_room``: how many of the
    plain asks may be re-asks with the doubled output bound (a manager turn after a cut-off)."""

    name: str
    role: str
    kind: StageKind
    count: int = 1
    parallel: bool = False
    deadline_s: float | None = None
    more_room: int = 0


@dataclass(frozen=True)
class Budget:
    calls: int
    output_tokens: int
    tool_calls: int
    seconds: float

    def as_dict(self) -> dict[str, float | int]:
        return {"calls": self.calls, "output_tokens": self.output_tokens, "tool_calls": self.tool_calls,
                "seconds": round(self.seconds, 1)}


def stage_budget(stage: Stage, limits: CallLimits) -> Budget:
    """One stage's worst case: a contract or a draft asks twice (the call and its one repair, which
    may ask for more room), a turn once (``more_room`` of them with the doubled bound)."""
    per_ask = 1 if stage.kind == "turn" else 2
    total = stage.count * per_ask
    roomy = min(total, stage.more_room if stage.kind == "turn" else stage.count + stage.more_room)
    tokens = (total - roomy) * limits.tokens(False) + roomy * limits.tokens(True)
    one = per_ask * limits.seconds()
    requests = total * limits.requests()
    if stage.kind == "contract" and limits.escalation_attempts:  # still invalid after the repair
        requests += stage.count * limits.escalation_attempts
        tokens += stage.count * limits.escalation_attempts * limits.max_tokens
        one += limits.escalation_s()
    if stage.deadline_s is not None:
        one = min(one, stage.deadline_s)
    return Budget(requests, tokens, 0, one if stage.parallel else one * stage.count)


def total(parts: Iterable[Budget]) -> Budget:
    """One run made of these parts, one after the other (a pipeline inside a chat turn)."""
    listed = list(parts)
    return Budget(sum(p.calls for p in listed), sum(p.output_tokens for p in listed),
                  sum(p.tool_calls for p in listed), sum(p.seconds for p in listed))


def most(paths: Iterable[Budget]) -> Budget:
    """The worst case of a run that takes one of several paths: each measure's largest."""
    listed = list(paths)
    if not listed:
        raise ValueError("no path to bound")
    return Budget(max(p.calls for p in listed), max(p.output_tokens for p in listed),
                  max(p.tool_calls for p in listed), max(p.seconds for p in listed))


def tool_time_s(tool_calls: int, deadlines_s: Iterable[float]) -> float:
    """The longest ``tool_calls`` calls may take when each may be any of the offered tools: every one
    runs to the longest deadline (a slow MCP server's, not a default)."""
    return tool_calls * max(deadlines_s, default=0.0)


def cap_value(variable: str, text: str) -> float:
    """A cap as the user wrote it in ``variable``: a finite number above zero. Anything else (``nan``,
    ``inf``, ``0``, ``-1``, a word) raises ``ValueError`` with one line naming the variable — a cap
    that compares false with everything would turn itself off."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        shown = text.strip()[:20]
        raise ValueError(f"{variable} must be a finite positive number, not {shown!r}")
    return value


def budget(stages: Sequence[Stage], limits: Mapping[str, CallLimits], tool_calls: int = 0,
           tool_seconds: float = 0.0) -> Budget:
    """The worst case of a run made of ``stages`` (in order) under each role's ``limits``, plus its
    tool calls and the time they may take."""
    unknown = sorted({s.role for s in stages} - set(limits))
    if unknown:
        raise ValueError(f"no call limits for role {unknown[0]!r}")
    parts = [stage_budget(stage, limits[stage.role]) for stage in stages]
    return Budget(
        calls=sum(p.calls for p in parts),
        output_tokens=sum(p.output_tokens for p in parts),
        tool_calls=tool_calls,
        seconds=sum(p.seconds for p in parts) + tool_seconds,
    )


def over_caps(worst: Budget, caps: Mapping[str, float]) -> list[str]:
    """The caps the worst case does not fit, as ``name: worst > cap`` (empty: it fits)."""
    values = worst.as_dict()
    return [f"{name}: {values[name]} > {cap:g}" for name, cap in caps.items() if values[name] > cap]


def request_refused(used: Mapping[str, float], held: Mapping[str, float], request: Mapping[str, float],
                    caps: Mapping[str, float]) -> str | None:
    """Whether a run may make one more request, decided before it is made: the first cap that what the
    run ``used``, what requests in flight ``held`` (parallel branches reserve before they ask) and this
    ``request`` at its most (one call, its output bound, its timeout) would pass; None: it may go."""
    for name, cap in caps.items():
        if used.get(name, 0) + held.get(name, 0) + request.get(name, 0) > cap:
            return name
    return None


def tightness(observed: Mapping[str, float], worst: Budget) -> dict[str, float]:
    """Observed maximum / bound per measure (1.0: the bound was reached; never above 1 if it holds)."""
    bound = worst.as_dict()
    return {name: round(observed[name] / bound[name], 3) for name in observed if bound.get(name)}

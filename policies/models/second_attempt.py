"""What a second attempt at a model call may change, and by how much (pure).

A refused manager turn is asked again with the refusal's reason (``reins.policies.models.manager_reask``) and,
since a peaked model may still answer the same, at the role's temperature plus a step, capped at 1.0.

A response cut off at its output bound (``truncated``) gets its one repair with more room: twice the
bound, once, never more than the role's maximum (and never less than the bound itself).
"""

from __future__ import annotations

MAX_REASK_TEMPERATURE = 1.0
REPAIR_BOUND_FACTOR = 2


def reask_temperature(temperature: float, step: float, cap: float = MAX_REASK_TEMPERATURE) -> float:
    """The temperature of a re-ask: ``temperature + step``, at most ``cap`` (and never below 0)."""
    if step < 0:
        raise ValueError("a re-ask's temperature step must be 0 or more")
    return round(max(0.0, min(cap, temperature + step)), 6)


def repair_output_bound(bound: int, limit: int) -> int:
    """The output bound of the one repair after a cut-off: ``2 × bound`` up to ``limit``; a ``limit``
    below the bound (a user raised the bound past it) leaves the bound as it is."""
    if bound < 1:
        raise ValueError("an output bound is a whole number of tokens, 1 or more")
    return max(bound, min(bound * REPAIR_BOUND_FACTOR, limit))

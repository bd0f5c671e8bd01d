"""What ``reins eval`` accepts (pure): how many runs per scenario and baseline, and which perturbation
kinds (or families of kinds) the unreliable-model wrapper may inject.

Declared here rather than beside the evaluation so that ``reins eval``'s argument errors are said
before the evaluation (and LangGraph, LangChain and the provider clients it imports) loads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

MAX_REPEATS = 20

# Families, each with the kinds it is recorded as.
FAMILIES: Mapping[str, tuple[str, ...]] = {
    "rephrased_verdict": ("rephrased_verdict",),
    "schema_drift": ("schema_drift",),
    "extra_fields": ("extra_fields",),
    "wrong_enum": ("wrong_enum",),
    "timeout": ("provider_timeout", "deadline_overrun"),
    "exception": ("connection_error", "bad_request"),
}
PERTURBATIONS: tuple[str, ...] = tuple(kind for kinds in FAMILIES.values() for kind in kinds)


def expand_kinds(kinds: Sequence[str]) -> tuple[str, ...]:
    """Kinds and family names as kinds, in a stable order; unknown names raise ValueError."""
    unknown = [k for k in kinds if k not in PERTURBATIONS and k not in FAMILIES]
    if not kinds or unknown:
        raise ValueError(f"unknown perturbation kinds: {', '.join(sorted(unknown)) or 'none given'}")
    wanted = {kind for name in kinds for kind in FAMILIES.get(name, (name,))}
    return tuple(kind for kind in PERTURBATIONS if kind in wanted)

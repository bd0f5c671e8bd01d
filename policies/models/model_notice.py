"""What a run says about the models behind it, and whether a resumed run may switch models (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

STAND_IN_NOTICE = ("Produced by the offline rule-based stand-in, not a language model "
                   "(set REINS_MODEL to use one; see `reins doctor`).")


FALLBACK_MARK = " (fallback)"


def models_line(models: Mapping[str, Sequence[str]], limit: int = 600,
                primaries: Mapping[str, str] | None = None) -> str:
    """``planner: a; reviewer: a, b (fallback)`` — the models that answered each role's calls, in
    role order; with the roles' own models (``primaries``), any other one is marked a fallback."""
    def shown(role: str, label: str) -> str:
        return label + (FALLBACK_MARK if primaries and role in primaries and label != primaries[role] else "")

    text = "; ".join(f"{role}: {', '.join(shown(role, l) for l in labels)}" for role, labels in models.items() if labels)
    return text[:limit]


def fallback_warnings(fallbacks: Mapping[str, int], primaries: Mapping[str, str] | None = None) -> list[str]:
    """One warning per role whose calls moved to a fallback model (``fallbacks``: role → calls)."""
    warnings = []
    for role, count in fallbacks.items():
        if count:
            primary = f" {primaries[role]}" if primaries and role in primaries else ""
            warnings.append(f"{role}: {count} call(s) answered by a fallback model; the primary{primary} failed "
                            "or was not there")
    return warnings


def model_changes(started: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """The roles whose model configuration differs from the one the run started with (a run that
    recorded none, from before this was recorded, has no changes to report)."""
    if not started:
        return []
    return sorted(role for role in {*started, *now} if started.get(role) != now.get(role))


def model_switch(started: Mapping[str, str], now: Mapping[str, str]) -> str:
    """The roles whose models differ from those a run started on, each named both ways
    (``chat: started on gpt-x, now offline``); '' when none do."""
    return "; ".join(f"{role}: started on {started.get(role, 'none')}, now {now.get(role, 'none')}"
                     for role in model_changes(started, now))

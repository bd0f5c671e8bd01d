"""What a run says about the models behind it, and whether a resumed run may switch models (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

STAND_IN_NOTICE = ("Produced by the offline rule-based stand-in, not a language model "
                   "(set REINS_MODEL to use one; see `reins doctor`).")


def models_line(models: Mapping[str, Sequence[str]], limit: int = 600) -> str:
    """``planner: a; reviewer: a, b`` — the models that answered each role's calls, in role order."""
    text = "; ".join(f"{role}: {', '.join(labels)}" for role, labels in models.items() if labels)
    return text[:limit]


def model_changes(started: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """The roles whose model configuration differs from the one the run started with (a run that
    recorded none, from before this was recorded, has no changes to report)."""
    if not started:
        return []
    return sorted(role for role in {*started, *now} if started.get(role) != now.get(role))

"""Which tool-call settings suit a model, from what ``reins doctor --check`` saw it do (pure).

The probe asks the model for one tiny tool call in each style (``required``, ``auto``; the
configured one first) and records, per style, whether the call came back natively, written as text
(``reins.policies.models.text_tool_calls``), or not at all, how many output tokens the answer used and whether it
ran on to the bound (llama.cpp with ``required`` lets text through and pads to ``max_tokens``).

``advise`` picks the settings to export:

- ``REINS_TOOL_CHOICE``: a style with a native call if there is one (one that stopped by itself
  first, then ``required`` before ``auto``: forcing the call is worth a few tokens), else a style
  with a text call (one that stopped by itself first, then the fewest tokens: padding costs time);
- ``REINS_TEXT_TOOL_CALLS``: ``recover`` when the chosen style only gives text calls; ``recover``
  (the default, harmless) when calls are native;
- ``REINS_MAX_TOKENS_MANAGER``: room for the largest manager turn — the review group's calls, each the
  probe call's size plus a note — twice over, at least ``MIN_MANAGER_BOUND``; when every answer ran
  to the bound the size is unknown and the role's default bound stays.

No advice (None) when no style gave a call at all: the model cannot drive the delivery chain.

``tool_call_verdict`` names what the model does: ``native`` (a style gives native calls), ``written
as text`` (only calls written as text) or ``no tool calling``. ``speed_bound`` fits an output bound
(the task-list draft's above all: 8192 tokens by default) to what the server generates within the
role's timeout, so a slow local server cuts a long draft off (and repairs it) instead of timing out.
``structured_method_advice`` names the ``REINS_STRUCTURED_METHOD`` to export when the configured one
gave no structured answer and the other did (a server without JSON-schema output that calls tools).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS
from reins.policies.models.tool_choice import TOOL_CHOICE_STYLES

MIN_MANAGER_BOUND = 256
NOTE_TOKENS = 64  # a note of at most 200 characters
REVIEW_GROUP_CALLS = len(DEFAULT_REVIEWERS)  # the review group: one call per reviewer, in one turn


@dataclass(frozen=True)
class ToolCallObservation:
    """What one probe request in one tool-choice style gave."""

    style: str
    native: bool  # a native ``tool_calls`` entry
    text: bool  # no native call, but the text is exactly the call (recoverable)
    output_tokens: int
    cut_off: bool  # ran on to the output bound (finish_reason: length)


@dataclass(frozen=True)
class ToolCallAdvice:
    tool_choice: str
    text_tool_calls: str
    manager_max_tokens: int
    native: bool  # the chosen style gives native calls

    def exports(self) -> list[str]:
        """The lines to put in the environment."""
        return [
            f"export REINS_TOOL_CHOICE={self.tool_choice}",
            f"export REINS_TEXT_TOOL_CALLS={self.text_tool_calls}",
            f"export REINS_MAX_TOKENS_MANAGER={self.manager_max_tokens}",
        ]


def _rank(observation: ToolCallObservation) -> tuple[int, int, int, int]:
    known = observation.style in TOOL_CHOICE_STYLES  # declared most forcing first
    style = TOOL_CHOICE_STYLES.index(observation.style) if known else len(TOOL_CHOICE_STYLES)
    if observation.native:  # forcing the call (required) beats a few tokens saved
        return (0, int(observation.cut_off), style, observation.output_tokens)
    return (1, int(observation.cut_off), observation.output_tokens, style)  # text: padding costs time


def manager_bound(call_tokens: int) -> int:
    """Room for the review group's calls (one per reviewer) with notes, twice over, rounded up to 64 tokens."""
    needed = 2 * REVIEW_GROUP_CALLS * (max(call_tokens, 0) + NOTE_TOKENS)
    return max(MIN_MANAGER_BOUND, -(-needed // 64) * 64)


def advise(observations: Sequence[ToolCallObservation], default_manager_bound: int) -> ToolCallAdvice | None:
    """The settings to export for a model that behaved as ``observations`` say (see the module)."""
    usable = [o for o in observations if o.native or o.text]
    if not usable:
        return None
    best = min(usable, key=_rank)
    bound = default_manager_bound if best.cut_off else manager_bound(best.output_tokens)
    return ToolCallAdvice(tool_choice=best.style, text_tool_calls="recover", manager_max_tokens=bound,
                          native=best.native)


NATIVE, WRITTEN_AS_TEXT, NO_TOOL_CALLING = "native", "written as text", "no tool calling"
MIN_SPEED_BOUND = 1024  # below this a task-list draft is no draft: raise the timeout instead
SPEED_MARGIN = 0.8  # of the role's timeout, left for the prompt and the answer's end


def tool_call_verdict(observations: Sequence[ToolCallObservation]) -> str:
    """native | written as text | no tool calling (see the module)."""
    if any(o.native for o in observations):
        return NATIVE
    if any(o.text for o in observations):
        return WRITTEN_AS_TEXT
    return NO_TOOL_CALLING


def speed_bound(tokens_per_s: float, timeout_s: float, bound: int) -> int | None:
    """An output bound the server can generate within ``timeout_s`` at ``tokens_per_s`` (with a
    margin), rounded down to 256 tokens and at least ``MIN_SPEED_BOUND``; None when ``bound``
    already fits or the speed is unknown."""
    if tokens_per_s <= 0 or timeout_s <= 0:
        return None
    fits = int(tokens_per_s * timeout_s * SPEED_MARGIN) // 256 * 256
    if fits >= bound:
        return None
    return max(MIN_SPEED_BOUND, fits)


STRUCTURED_METHODS = ("json_schema", "function_calling")  # as REINS_STRUCTURED_METHOD accepts them


def other_structured_method(method: str) -> str | None:
    """The method to try when ``method`` gave no structured answer (None for an unknown one)."""
    return {"json_schema": "function_calling", "function_calling": "json_schema"}.get(method)


def structured_method_advice(configured: str, worked: dict[str, bool]) -> str | None:
    """The export line for the structured method to use: None when the configured one worked or no
    method did (then no setting helps)."""
    if worked.get(configured):
        return None
    usable = [method for method in STRUCTURED_METHODS if method != configured and worked.get(method)]
    return f"export REINS_STRUCTURED_METHOD={usable[0]}" if usable else None

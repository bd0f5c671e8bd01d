"""The check's way back to the tool loop (check → act): at most one round per turn, decided by
``reins.policies.assistant.check_act``; the loop is told the findings as ``{code, where}`` pairs only."""

from __future__ import annotations

from reins.nodes.assistant.state import AssistantState, Update
from reins.policies.assistant.answer_check import AnswerCheck
from reins.policies.assistant.check_act import NOTHING_FOUND, check_findings, decide_check_act
from reins.policies.tools.loop_guards import MAX_STEPS

def max_steps(state: AssistantState) -> int:
    """The turn's step budget: one call for SIMPLE_TOOL, the loop's limit otherwise."""
    return 1 if state.get("intent") == "SIMPLE_TOOL" else MAX_STEPS


def revisit(state: AssistantState, checked: AnswerCheck, unsupported: tuple[str, ...]) -> tuple[Update | None, str]:
    """(the update that sends the turn back to the tool loop, or None; what the trace says about it)."""
    # A claim that an action was done goes back to no loop: the action was rejected or never proposed,
    # and asking again is the person's call, not the check's.
    claims = [(f.where, f.tool) for f in checked.findings if f.reason != "no_side_effect"]
    findings = check_findings(checked.unfinished_steps, claims, bool(unsupported))
    rounds = state.get("check_rounds", 0)
    decision = decide_check_act(
        findings,
        rounds_used=rounds,
        intent=state.get("intent"),
        stop_reason=state.get("stop_reason"),
        steps_taken=state.get("steps_taken", 0),
        max_steps=max_steps(state),
    )
    if not decision.allowed:
        note = "" if decision.code == NOTHING_FOUND else f"no check-act round ({decision.code})"
        return None, note
    codes = ", ".join(dict.fromkeys(f["code"] for f in findings))
    update: Update = {"check_findings": findings, "check_rounds": rounds + 1, "revisit": True, "draft": None}
    return update, f"{len(findings)} finding(s) ({codes}); back to the tool loop once"

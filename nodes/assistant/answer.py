"""Answer (A of PDCA) and its check (C): the model drafts ``{summary, evidence, verdict}``; the
runtime removes unsupported tool claims and leaked markers, reports unfinished plan steps, caps the
verdict and replies."""

from __future__ import annotations

from reins.policies.audit.guard_coverage import declare

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from reins.nodes.assistant.check_act import revisit
from reins.nodes.assistant.context import AssistantContext
from reins.nodes.assistant.data_flow import after_untrusted_mark
from reins.nodes.assistant.deps import AssistantDeps, progress_for
from reins.nodes.assistant.executor import MODEL_ERROR
from reins.nodes.assistant.prompts import answer_messages
from reins.nodes.assistant.state import Answer, AssistantState, CheckReport, NodeSteps, Update, traced
from reins.policies.assistant.answer_check import (
    check_answer,
    evidence_from_records,
    fallback_summary,
    final_verdict,
    merge_evidence,
    numbers_without_support,
)
from reins.policies.tools.loop_guards import STOP_MESSAGES
from reins.policies.assistant.replanning import active_steps
from reins.policies.text.redaction import redact, redact_secrets, truncate
from reins.runtime.execution.calls import Contract, Streamed
from reins.runtime.llm.failures import stage_failure
from reins.runtime.execution.run_ledger import CAP_CODE
from reins.runtime.execution.steps import EXECUTION_FAILED, attempt, recorded_step
from reins.schemas.assistant import AssistantAnswer

SUMMARY_LIMIT = 2000
INTENT_FAILED = ("I could not work out reliably what your request needs, so no tool ran and this answer is "
                 "unverified.")
UNSUPPORTED_NUMBERS = "No tool result supports these numbers in the answer: {numbers}."
REMOVED_ALL = "I removed a statement about a tool result that no tool produced, so I have no verified answer."
NO_SIDE_EFFECT = "I removed a statement that an action was done: no such action succeeded in this turn."
MODEL_FAILED = "The model could not be used: {failure}."
NO_DRAFT: Answer = {"summary": "", "evidence": [], "verdict": "failure"}


def stop_message(stop_reason: str | None) -> str:
    if stop_reason == MODEL_ERROR:
        return "I stopped because the model did not respond properly during the tool steps."
    if stop_reason == CAP_CODE:
        return "I stopped because the next model call would have passed your budget cap."
    return STOP_MESSAGES.get(stop_reason or "", "")


@declare(model=True)
def draft_answer(state: AssistantState, runtime: Runtime[AssistantContext], *, deps: AssistantDeps) -> NodeSteps:
    records = state.get("records", [])
    with recorded_step(progress_for(runtime), "answer", "Write the answer") as step:
        if state.get("failure"):  # the provider already failed for good this turn: no second try
            step.skip("skipped: the model is unavailable")
            return {"draft": NO_DRAFT, "answer_from_contract": False, "trace": traced(state, step.trace())}
        outcome = yield from attempt(Streamed("summary", Contract(  # the summary streams as it is written
            "assistant.answer",
            AssistantAnswer,
            answer_messages(state, deps.tools_for(runtime), stop_message(state.get("stop_reason"))),
            deps.models_for(runtime, state),
            mode=deps.mode_for(runtime),
        )))
        if outcome.ok:
            step.summary = f"drafted, proposed verdict {outcome.value.verdict}"
            draft: Answer = outcome.value.model_dump(mode="json")
            # Stored in the checkpoint before the check: a secret the model echoed is not kept.
            draft = {**draft, "summary": redact_secrets(draft["summary"]),
                     "evidence": [redact_secrets(item) for item in draft["evidence"]]}
        else:  # no valid answer: a deterministic one from the execution record
            step.fail(f"fallback from the execution record ({outcome.reason()})")
            verdict = "partial" if any(r.get("ok") for r in records) else "failure"
            draft = {"summary": fallback_summary(records), "evidence": [], "verdict": verdict}
            if outcome.code == EXECUTION_FAILED:
                failure = stage_failure("draft_answer", outcome.error)
                return {"draft": draft, "answer_from_contract": False, "failure": failure,
                        "trace": traced(state, step.trace())}
    # Only the contract's own output is what a replay validates again (a fallback is the runtime's).
    return {"draft": draft, "answer_from_contract": outcome.ok, "trace": traced(state, step.trace())}


def _notices(state: AssistantState, unfinished: tuple[int, ...]) -> list[str]:
    notices = []
    message = stop_message(state.get("stop_reason"))
    if message:
        notices.append(message)
    plan = state.get("plan")
    purposes = {s["id"]: f"{s['tool']}: {s['purpose']}" for s in plan["steps"]} if plan else {}
    if unfinished:
        listed = "; ".join(f"step {i} ({purposes.get(i, '?')})" for i in unfinished)
        notices.append(f"Plan steps not finished: {listed}.")
    skipped = plan.get("skipped", []) if plan else []
    if skipped:
        listed = "; ".join(f"step {i} ({purposes.get(i, '?')})" for i in skipped)
        notices.append(f"Plan steps skipped after repeated failures: {listed}.")
    if plan and plan["unavailable"]:
        notices.append(f"Planned tools not available here: {', '.join(sorted(set(plan['unavailable'])))}.")
    return notices


@declare(guards=("answer_check",))
def check_and_reply(state: AssistantState, runtime: Runtime[AssistantContext], *, deps: AssistantDeps) -> Update:
    records = state.get("records", [])
    draft = state.get("draft") or NO_DRAFT
    plan = state.get("plan")
    progress = progress_for(runtime)
    with recorded_step(progress, "check", "Check the answer against the execution record") as step:
        tools = deps.tools_for(runtime)
        checked = check_answer(draft["summary"], draft["evidence"], records, active_steps(plan),
                               aliases=tools.aliases(), side_effects={t.name for t in tools if not t.read_only})
        intent_failed = bool(state.get("intent_failed"))
        effect_claims = any(f.reason == "no_side_effect" for f in checked.findings)
        tool_claims = any(f.reason != "no_side_effect" for f in checked.findings)
        summary = checked.summary or (REMOVED_ALL if tool_claims else NO_SIDE_EFFECT if effect_claims
                                      else fallback_summary(records))
        # A turn that needed tools (or whose classification failed) must not state results no tool produced.
        needs_tools = intent_failed or state.get("intent") in ("SIMPLE_TOOL", "COMPLEX")
        unsupported = numbers_without_support(summary, records, state.get("request", "")) if needs_tools else ()
        back, act_note = revisit(state, checked, unsupported)
        if back is not None:  # check → act: once, told only {code, where}
            step.summary = act_note
            return {**back, "trace": traced(state, step.trace())}
        verdict = final_verdict(
            draft["verdict"],
            stop_reason=state.get("stop_reason"),
            unfinished_steps=checked.unfinished_steps,
            removed_claims=len(checked.findings),
            records=records,
            intent_failed=intent_failed,
            unsupported_numbers=unsupported,
        )
        notices = _notices(state, checked.unfinished_steps)
        if state.get("failure"):
            notices.append(MODEL_FAILED.format(failure=state["failure"]))
        elif intent_failed:
            notices.append(INTENT_FAILED)
        if unsupported:
            notices.append(UNSUPPORTED_NUMBERS.format(numbers=", ".join(unsupported[:5])))
        if tool_claims and checked.summary:
            notices.append("I removed a statement about a tool result that no tool produced.")
        if effect_claims and (checked.summary or tool_claims):
            notices.append(NO_SIDE_EFFECT)
        full = redact("\n\n".join([summary, *notices]), SUMMARY_LIMIT)
        # Runtime evidence quotes tool arguments, which may carry what the user typed (a key in a URL).
        runtime_evidence = [redact(e, 500) for e in evidence_from_records(records)]
        evidence = merge_evidence(runtime_evidence, [redact(e, 500) for e in checked.evidence])
        answer = AssistantAnswer(summary=truncate(full, SUMMARY_LIMIT), evidence=evidence, verdict=verdict)
        notes = [*checked.notes, act_note] if act_note else list(checked.notes)
        step.summary = f"verdict {verdict}" + (f"; {'; '.join(notes)}" if notes else "")
    if state.get("intent") != "COMPLEX":  # a COMPLEX turn ends after its reflection
        progress.end("completed", f"verdict {verdict}")
    report: CheckReport = {
        "removed_claims": [{"tool": f.tool, "reason": f.reason} for f in checked.findings],
        "markers_removed": checked.markers_removed,
        "unfinished_steps": list(checked.unfinished_steps),
        "proposed_verdict": draft["verdict"],
    }
    return {
        "answer": answer.model_dump(mode="json"),
        "reply": answer.summary,
        "check": report,
        "revisit": False,
        # a reply written after untrusted content may carry it: the next turns treat it as untrusted
        "messages": [AIMessage(content=answer.summary, additional_kwargs=after_untrusted_mark(state, tools))],
        "trace": traced(state, step.trace()),
    }


def route_after_check(state: AssistantState) -> str:
    if state.get("revisit"):
        return "propose_step"
    return "reflect" if state.get("intent") == "COMPLEX" else "__end__"

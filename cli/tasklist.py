"""``reins tasklist docs://versions/<plan>.md [--review] [--json]``: a validated task list from a version plan.

Live progress goes to stderr; then the artifact, the manual review items and the final decision.
With ``--review`` the strategy review and the revision review are asked here in the terminal; a run
that pauses (no terminal, end of input) prints its thread id and the ``reins resume`` line. Runs
are checkpointed with the configured checkpointer (SQLite by default), so a paused run can be
resumed from any later process.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

from reins.policies.text.redaction import redact, redact_mapping
from reins.policies.assistant.retention import durability_for
from reins.policies.text.terminal_text import printable
from reins.cli.errors import UserError, exit_code
from reins.cli.model_config import fallbacks_of, models_of, stamped, stand_in_notice
from reins.cli.render import ProgressView, RunOutcome, colour, print_json, stream_run, write
from reins.runtime.config.settings import Settings
from reins.runtime.config.tracing import new_run_id, run_config

GRAPH_NAME = "tasklist_agent"
# One status: ``final_decision`` (the state machine's own ``status`` stays internal).
PUBLIC_KEYS = (
    "run_id", "final_decision", "decision", "strategy", "artifact", "validation",
    "warning_disposition", "revision_effect", "manual_review_items", "trace", "summary", "message", "contract_metrics",
)
OUTPUT_LIMIT = 100_000


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("tasklist", help="turn a version plan (docs://versions/<plan>.md) into a task list")
    parser.add_argument("request", nargs="+", help="docs://versions/<plan>.md, optionally followed by a goal")
    parser.add_argument("--review", action="store_true", help="ask for your decision at the strategy and revision reviews")
    parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    parser.add_argument("--keep-history", action="store_true", help="keep every checkpoint of the run (default: the latest)")
    parser.set_defaults(handler=run)


# Each final decision, and for a run that stopped or failed what ended it, as an outcome of
# cli.errors.EXIT_FOR_OUTCOME: an invalid model output or a refused action fails here as in deliver.
DECISION_OUTCOMES: Mapping[str, str] = {
    "final": "pass", "final_with_manual_review_items": "needs_attention", "blocked": "blocked",
}
STOP_OUTCOMES: Mapping[str, str] = {
    "input": "bad_input", "clarification": "needs_attention", "boundary": "blocked", "review_rejected": "blocked",
    "contract": "failed", "timeout": "failed", "guard": "failed",
}


def exit_code_for(values: Mapping[str, Any], paused: bool) -> int:
    """Exit code per final decision (and, for a stop, per what stopped it)."""
    if paused:
        return exit_code("paused")
    decision = str(values.get("final_decision"))
    if decision in DECISION_OUTCOMES:
        return exit_code(DECISION_OUTCOMES[decision])
    return exit_code(STOP_OUTCOMES.get(str(values.get("stop_kind")), "failed"))


def _graph(saver: Any, review: bool) -> Any:
    # The CLI is the application edge: it sits above the graphs and wires one to the runtime.
    from reins.graphs.tasklist_agent import build_graph
    from reins.cli.doctor_audit import refuse_over_caps

    refuse_over_caps("tasklist_agent", human_review=review)
    return build_graph(checkpointer=saver, human_review=review)


def run(args: argparse.Namespace) -> int:
    request = " ".join(args.request)
    if "://" not in request:
        raise UserError("reference a version plan: reins tasklist docs://versions/<plan>.md")
    request = request if request.lstrip().startswith("/tasklist") else f"/tasklist {request}"
    settings = Settings.from_env()
    from reins.runtime.persistence.checkpoint import checkpointer_from_settings

    from reins.cli.doctor_audit import run_caps

    thread_id = f"tasklist-{new_run_id()}"
    with checkpointer_from_settings(settings) as saver:
        graph = _graph(saver, args.review)
        config = stamped(run_config(GRAPH_NAME, thread_id=thread_id), settings)
        durability = durability_for(can_pause=args.review)  # every step saved; a reviewed run waits for each save
        # An in-memory checkpoint ends with this process: a pause must not promise a later resume.
        resumable = settings.checkpoint != "memory"
        with run_caps():  # every request checked against the user's caps before it is made
            started = time.monotonic()
            outcome = stream_run(graph, {"request": request}, config, view=ProgressView(), durability=durability)
            code = drive(graph, config, thread_id, outcome, interactive=args.review, as_json=args.json,
                         resumable=resumable, spent_s=time.monotonic() - started)
        if not args.keep_history:
            from reins.runtime.persistence.runs import keep_latest_checkpoints

            keep_latest_checkpoints(saver, thread_id)
        return code


def drive(
    graph: Any,
    config: Mapping[str, Any],
    thread_id: str,
    outcome: RunOutcome,
    *,
    interactive: bool,
    as_json: bool,
    ask: Callable[[str], str] | None = None,
    resumable: bool = True,
    spent_s: float = 0.0,
) -> int:
    """Answer reviews in the terminal while the run pauses (if interactive), then show the result."""
    from reins.graphs.tasklist_agent import ResumeError, resume_command

    while outcome.interrupts and interactive:
        decision = ask_review(outcome.interrupts[0].value, ask or input)
        if decision is None:  # end of input: leave the run paused, resumable later
            break
        try:
            command = resume_command(graph, config, decision)
        except ResumeError as error:
            print(f"reins: {redact(error, 500)}", file=sys.stderr)
            continue
        started = time.monotonic()  # the run's time, not the reviewer's
        outcome = stream_run(graph, command, config, view=ProgressView(), durability=durability_for(can_pause=True))
        spent_s += time.monotonic() - started
    snapshot = graph.get_state(dict(config))
    values = dict(snapshot.values or {})
    values["budget"] = _budget(values, spent_s, interactive)
    paused = bool(snapshot.interrupts)
    pending = snapshot.interrupts[0].value if paused else None
    show(values, thread_id, pending, as_json, resumable)
    return exit_code_for(values, paused)


# ----------------------------------------------------------------------------- human questions


def _line(ask: Callable[[str], str], prompt: str) -> str | None:
    print(prompt, end="", file=sys.stderr, flush=True)
    try:
        return ask("").strip()
    except EOFError:
        print("", file=sys.stderr)
        return None


def _markdown(ask: Callable[[str], str]) -> str | None:
    return _lines(ask, "Paste the edited task list; finish with a line containing only '.':")


def _lines(ask: Callable[[str], str], prompt: str) -> str | None:
    """Several lines up to one holding only '.'; None when input ends first."""
    print(prompt, file=sys.stderr)
    lines: list[str] = []
    while True:
        try:
            line = ask("")
        except EOFError:
            return None
        if line.strip() == ".":
            return "\n".join(lines)
        lines.append(line)


def edit_strategy(strategy: Mapping[str, Any], ask: Callable[[str], str]) -> str | None:
    """The strategy as formatted JSON, edited in ``$VISUAL`` / ``$EDITOR``; without one, the whole of
    it is shown and the edited JSON read over several lines. None when input ends."""
    return edit_json(strategy, ask, "strategy")


def edit_json(value: Any, ask: Callable[[str], str], what: str) -> str | None:
    """``value`` as formatted JSON, edited in ``$VISUAL`` / ``$EDITOR`` (or pasted over several lines
    without one); the edited text, None when input ends."""
    import os

    text = json.dumps(value, indent=2, ensure_ascii=False)
    editor = os.environ.get("VISUAL", "").strip() or os.environ.get("EDITOR", "").strip()
    if editor:
        return _in_editor(editor, text, what)
    print(f"The {what} under review (edit it as JSON):", file=sys.stderr)
    print(text, file=sys.stderr)
    return _lines(ask, f"Paste the edited {what} JSON; finish with a line containing only '.':")


def _in_editor(editor: str, text: str, what: str = "strategy") -> str:
    import os
    import shlex
    import subprocess
    import tempfile

    handle, path = tempfile.mkstemp(prefix="reins-strategy-", suffix=".json")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text + "\n")
        try:
            done = subprocess.run([*shlex.split(editor), path], check=False)
        except OSError:
            raise UserError("the editor in $VISUAL / $EDITOR could not be started") from None
        if done.returncode != 0:
            print(f"reins: the editor exited with status {done.returncode}; the {what} is unchanged", file=sys.stderr)
            return text
        with open(path, encoding="utf-8") as file:
            return file.read()
    finally:
        os.unlink(path)


def ask_review(payload: Mapping[str, Any], ask: Callable[[str], str] = input) -> dict[str, Any] | None:
    """One review question in the terminal; None when input ends."""
    err = sys.stderr
    allowed = list(payload.get("allowed_decisions") or ())
    print("", file=err)
    print(printable(redact(payload.get("question", "Review"), 300)), file=err)
    if payload.get("kind") == "strategy_review":
        strategy = payload.get("strategy") or {}
        low, high = (strategy.get("expected_step_range") or ["?", "?"])[:2]
        print(f"  granularity: {strategy.get('granularity')}, steps {low}-{high}", file=err)
        print(printable(f"  grouping:    {redact('; '.join(strategy.get('grouping', [])), 400)}"), file=err)
        print(printable(f"  priority:    {redact('; '.join(strategy.get('priority', [])), 400)}"), file=err)
    else:
        print(f"  to fix now: {', '.join(payload.get('fix_now', []))}", file=err)
    choice = _line(ask, f"Decision [{'/'.join(allowed)}]: ")
    if choice is None:
        return None
    if choice == "reject":
        reason = _line(ask, "Reason: ")
        return None if reason is None else {"type": "reject", "reason": reason or "rejected in the terminal"}
    if choice == "respond":
        feedback = _line(ask, "Feedback for the strategy: ")
        return None if feedback is None else {"type": "respond", "feedback": feedback}
    if choice == "edit" and payload.get("kind") == "strategy_review":
        example = ((payload.get("decisions") or {}).get("edit") or {}).get("example") or {}
        raw = edit_strategy(example.get("strategy") or payload.get("strategy") or {}, ask)
        if raw is None:
            return None
        try:
            return {"type": "edit", "strategy": json.loads(raw)}
        except ValueError:
            return {"type": "edit", "strategy": None}  # refused with a clear error, then asked again
    if choice == "edit":
        markdown = _markdown(ask)
        return None if markdown is None else {"type": "edit", "markdown": markdown}
    return {"type": choice}


# ---------------------------------------------------------------------------------------- output


def _budget(values: Mapping[str, Any], seconds: float, human_review: bool) -> dict[str, Any]:
    """What the run used beside its worst case: its model requests, the plan and context reads."""
    from reins.runtime.execution.budget import configured_budget

    reads = 1 + int((values.get("counters") or {}).get("optional_context_reads", 0))
    return configured_budget("tasklist_agent", values, reads, seconds, human_review=human_review)


def show(
    values: Mapping[str, Any], thread_id: str, pending: Mapping[str, Any] | None, as_json: bool, resumable: bool = True
) -> None:
    if as_json:
        public = {key: values.get(key) for key in PUBLIC_KEYS}
        public["thread_id"] = thread_id
        public["paused"] = pending is not None
        public["pending_review"] = dict(pending) if pending else None
        public["resumable"] = pending is not None and resumable
        public["models"] = models_of(values)
        public["fallbacks"] = fallbacks_of(values)
        public["budget"] = values.get("budget")
        print_json(redact_mapping(public, OUTPUT_LIMIT))
        return
    out = sys.stdout
    notice = stand_in_notice(models_of(values))
    if notice:
        print(notice, file=out)
    artifact = values.get("artifact")
    if artifact:
        meta = artifact["metadata"]
        state = "validated" if meta["validated"] else "NOT validated"
        print(f"\nTask list (revision {meta['revision']}, {state}) for {meta['plan_uri']}\n", file=out)
        write(printable(artifact["markdown"]).rstrip(), out, markdown=True)  # model-written: no escape sequences
    items = values.get("manual_review_items") or []
    if items:
        print("\nManual review items:", file=out)
        for item in items:
            line = f"  - [{item['severity']}] {redact(item['title'], 80)}: {redact(item['detail'], 500)}"
            print(printable(line), file=out)
    if values.get("message"):
        print(f"\n{printable(redact(values['message'], 800))}", file=out)
    if values.get("budget"):
        print(f"\nbudget (used/worst case): {values['budget']['line']}", file=out)
    if pending is not None:
        allowed = ", ".join(pending.get("allowed_decisions", []))
        print(colour(f"\nPaused for {pending.get('kind')} (thread {thread_id}).", "paused", out), file=out)
        print(f"Allowed decisions: {allowed}", file=out)
        for name, form in (pending.get("decisions") or {}).items():
            example = json.dumps(form.get("example"), ensure_ascii=False)
            print(f"  {name}: {redact(form.get('description', ''), 120)} e.g. {redact(example, 300)}", file=out)
        if not resumable:
            print("This run was checkpointed in memory (REINS_CHECKPOINT=memory) and ends with this process;", file=out)
            print("use REINS_CHECKPOINT=sqlite (the default) or postgres to resume a paused run later.", file=out)
            return
        print(f"Resume with: reins resume {thread_id} --decision '{{\"type\": \"approve\"}}'", file=out)
        return
    decision = values.get("final_decision") or "unknown"
    print(colour(f"\nFinal decision: {decision}", decision, out), file=out)
    if values.get("summary"):
        print(printable(redact(values["summary"], 300)), file=out)

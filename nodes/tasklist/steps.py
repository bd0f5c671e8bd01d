"""``guarded(action)``: the one wrapper around every step of the tasklist agent.

A step's body holds only what the step does, and says what it did in ``run.step.summary``. The
wrapper, around it: the recorded step (one summary for the progress event and the trace record), the
machine's guard (a refusal ends the run in ``stopped``), and, once the body has returned, the
status the action leads to and the counters it spends (``policies/tasklist/machine.py``). A body
that marks its step failed (a failed model call, input that fails closed) has not taken the step:
its update, with its own trace record, stands as it is and nothing is counted.

Whether a step pauses for a person and whether it reports progress come from its row of the
machine's table. Each stage module lists its steps in ``STEPS`` and the graph builds one node per
action of the table from those lists (``nodes_by_action``): a new step is a row in the machine's
table and one body here in ``nodes/tasklist``, listed in its module's ``STEPS``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field
from typing import Any

from langgraph.runtime import Runtime

from reins.policies.audit.guard_coverage import NodeDeclaration, declaration_of, declare
from reins.policies.tasklist.machine import (
    ACTIONS,
    TRANSITIONS,
    Machine,
    Proposal,
    Verdict,
    counters_after,
    counts_as_step,
    guard,
    leads_to,
)
from reins.policies.audit.tasklist_replay import guard_record
from reins.runtime.execution.calls import drive
from reins.runtime.llm.models import ModelSet
from reins.runtime.execution.steps import Attempt, RecordedStep, recorded_step
from reins.nodes.tasklist.common import TasklistDeps, machine_of, model_failed, progress_of, refused
from reins.nodes.tasklist.state import GuardRecord, TasklistState
from reins.nodes.tasklist.context import TasklistContext

@dataclass(frozen=True)
class Admission:
    """What the entry step opens a run with, before the machine is asked anything.

    ``fields``: the state every run starts from (it goes into the step's update whatever happens);
    ``view``: what the guard and the body see besides; ``failure``: an update that ends the run
    before the guard is asked (bad input fails closed), with ``reason`` for the progress step.
    """

    fields: TasklistState
    view: TasklistState = field(default_factory=lambda: TasklistState())
    failure: TasklistState | None = None
    reason: str = ""


@dataclass
class StepRun:
    """What a step's body works with: the run's runtime and build options, and its recorded step."""

    action: str
    runtime: Runtime[TasklistContext] | None
    deps: TasklistDeps
    step: RecordedStep
    state: TasklistState
    guard_log: list[GuardRecord] = field(default_factory=list)  # the guard's answers in this step

    def ask_guard(self, machine: Machine, proposal: Proposal) -> Verdict:
        """The machine's guard on ``proposal``, its question and answer logged for replay."""
        verdict = guard(machine, proposal)
        self.guard_log.append(guard_record(machine, proposal, verdict))  # type: ignore[arg-type]
        return verdict

    @property
    def step_id(self) -> str:
        return self.step.step_id

    @property
    def models(self) -> ModelSet:
        return self.deps.models_for(self.runtime)

    @property
    def contract_mode(self) -> str:
        return self.deps.contract_mode(self.runtime)

    def model_failed(self, what: str, outcome: Attempt) -> TasklistState:
        """The update that ends the run after the failed model call ``outcome`` (``what`` it should have given)."""
        return model_failed(self.step, what, outcome, stage=self.action)

    def refused_unless_allowed(self, **details: Any) -> TasklistState | None:
        """Ask the guard again with what the body has learnt (the model's choice); the refusal, if any."""
        verdict = self.ask_guard(machine_of(self.state), Proposal(self.action, **details))
        return None if verdict.allowed else self.refuse(verdict)

    def refuse(self, verdict: Verdict) -> TasklistState:
        self.step.fail(verdict.reason)
        return refused(self.step_id, verdict)


Body = Callable[[TasklistState, StepRun], Any]


@dataclass(frozen=True)
class _Step:
    action: str
    step_id: str
    title: str
    acts_on: Callable[[TasklistState], str | None] | None
    admits: Callable[[TasklistState, Runtime[TasklistContext] | None, TasklistDeps], Admission] | None

    @property
    def pauses(self) -> bool:
        return TRANSITIONS[self.action].review

    @property
    def reports(self) -> bool:
        """Steps report progress; publishing the outcome (not a step) does not."""
        return counts_as_step(self.action)

    def proposal(self, state: TasklistState) -> Proposal:
        return Proposal(self.action, resource_uri=self.acts_on(state) if self.acts_on else None)

    def run(self, body: Body, state: TasklistState, runtime: Runtime[TasklistContext] | None, deps: TasklistDeps) -> Generator[Any, Any, TasklistState]:
        admission = self.admits(state, runtime, deps) if self.admits else Admission({})
        state = {**state, **admission.fields, **admission.view}
        progress = progress_of(state)
        run = StepRun(self.action, runtime, deps, RecordedStep(step_id=self.step_id), state)
        if self.reports and not self.pauses:
            with recorded_step(progress, self.step_id, self.title) as run.step:
                update = yield from self._guarded(body, run, admission)
        else:
            update = yield from self._guarded(body, run, admission)
        if self.pauses:
            # A human review is replayed on every resume, so it reports once, when the person has
            # answered (or when the guard refused it), never as a running step.
            progress.event(self.step_id, run.step.status, self.title, run.step.summary)
        logged = {"guard_log": run.guard_log} if run.guard_log else {}
        return {**admission.fields, **update, **logged}

    def _guarded(self, body: Body, run: StepRun, admission: Admission) -> Generator[Any, Any, TasklistState]:
        if admission.failure is not None:
            run.step.fail(admission.reason)
            return dict(admission.failure)
        machine = machine_of(run.state)
        verdict = run.ask_guard(machine, self.proposal(run.state))
        if not verdict.allowed:
            return run.refuse(verdict)
        result = body(run.state, run)
        update = (yield from result) if inspect.isgenerator(result) else result
        if run.step.status == "failed":
            return update
        # The step's record first, then any the body adds.
        update = {**update, "trace": [run.step.trace(), *update.get("trace", ())]}
        if not counts_as_step(self.action):
            return update
        status = update.get("status", verdict.next_status)
        outcome = leads_to(self.action, status)
        if not outcome.allowed:
            return run.refuse(outcome)
        return {"status": status, "counters": counters_after(machine, self.action, status).as_dict(), **update}


MACHINE_GUARD = "tasklist_machine"


def guarded(
    action: str,
    title: str = "",
    *,
    step_id: str | None = None,
    acts_on: Callable[[TasklistState], str | None] | None = None,
    admits: Callable[[TasklistState, Runtime[TasklistContext] | None, TasklistDeps], Admission] | None = None,
) -> Callable[[Body], Callable[..., Any]]:
    """Make ``body(state, run)`` the node of ``action``.

    ``step_id`` / ``title``: the progress and trace step (default: the action, dashed). ``acts_on``:
    the resource the guard checks the action against. ``admits``: the entry step's opening of the run
    (see ``Admission``). A review pause (the table's ``review``) reports once answered rather than
    as a running step; publishing the outcome reports no progress step.
    """
    if action not in TRANSITIONS:
        raise ValueError(f"{action} is not an action of the tasklist machine's table")
    spec = _Step(action, step_id or action.replace("_", "-"), title, acts_on, admits)

    def decorate(body: Body) -> Callable[..., Any]:
        # A body that waits on a model is a generator, and so is its node (runtime/execution/calls.py runs it
        # sync or async); any other body makes a plain node, which must stay quick and local (the
        # graph runs it on the event loop under ainvoke).
        if inspect.isgeneratorfunction(body):

            def node(state: TasklistState, runtime: Runtime[TasklistContext] | None = None, *, deps: TasklistDeps) -> Generator[Any, Any, TasklistState]:
                return (yield from spec.run(body, state, runtime, deps))

        else:

            def node(state: TasklistState, runtime: Runtime[TasklistContext] | None = None, *, deps: TasklistDeps) -> TasklistState:  # type: ignore[misc]
                return drive(spec.run(body, state, runtime, deps))

        node.__name__ = node.__qualname__ = action
        node.__doc__ = body.__doc__
        node.__module__ = body.__module__
        node.action = action  # type: ignore[attr-defined]
        # The machine's guard decides before every step acts: what the body declares, guarded by it.
        body_declares = declaration_of(body) or NodeDeclaration()
        return declare(model=body_declares.model, acts=body_declares.acts,
                       guards={*body_declares.guards, MACHINE_GUARD})(node)

    return decorate


def nodes_by_action(steps: Iterable[Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    """One node per action of the machine's table, in table order: each listed step exactly once."""
    nodes: dict[str, Callable[..., Any]] = {}
    for step in steps:
        action = getattr(step, "action", None)
        if action in nodes or action not in TRANSITIONS:
            raise ValueError(f"step {action!r} is listed twice or is not in the machine's table")
        nodes[action] = step
    missing = [action for action in ACTIONS if action not in nodes]
    if missing:
        raise ValueError(f"no step is listed for {', '.join(missing)}")
    return {action: nodes[action] for action in ACTIONS}

"""Fuzz the worst-case budget: many adversarial runs, none may use more than the printed bound.

A full graph run takes seconds, so most runs are **stage-composed**: for each stage of a graph's
longest path (``reins.policies.run_budgets``) the real call machinery runs — the contract algorithm with
its repair and escalation, the free-text draft with its repair after a cut-off, the manager's tool
turns with more room after a cut-off, each model's retries and the role's fallbacks
(``reins.runtime.contracts``) — against a seeded adversarial model that, per request, answers validly,
breaks the contract the way ``reins.evals.perturbed`` does (a drifted or dropped field), is cut off at its
output bound, or raises the evaluation's provider failures (timeouts, dropped connections, a 400).
Every answer reports the most output tokens its request allowed. The adversary answers each request
directly in the shape LangChain's invoke returns (``answered_directly``: LangChain's callback and
config machinery is most of a request's cost); a test checks that the same runs through LangChain's
invoke use the same calls and tokens. Time runs on a simulated clock:
each request takes a drawn latency up to its timeout (a timeout takes all of it), each retry waits
the backoff the machinery computed (not slept), and a parallel stage (the reviewers) takes its
slowest branch, cut at the reviewer's deadline as the graph cuts it. A few **full graph runs** of
each graph under ``reins.evals.perturbed`` at a high rate check the stage lists themselves (and tool calls,
which only a graph makes). Each run is compared with ``reins.runtime.execution.budget.worst_case`` for its model set.
"""

from __future__ import annotations

import itertools
import json
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
import openai
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableSequence
from pydantic import ConfigDict, PrivateAttr

from reins.evals.perturbed import perturb_data, raised_error
from reins.policies.budget import CAP_NAMES, Budget, Stage
from reins.policies.delegation import DEFAULT_POLICY
from reins.policies.reviewers import reviewer_table
from reins.policies.run_budgets import assistant_stages, delivery_stages, tasklist_stages
from reins.runtime.execution.budget import GRAPHS, reviewer_deadline_s, used, worst_case
from reins.runtime.contracts.roles import register_contracts
from reins.runtime.contracts import contract_steps, text_steps, tool_turn_steps
from reins.runtime.llm.escalation import escalated
from reins.runtime.llm.langchain_private import config_within
from reins.runtime.standins.fake_base import CONTRACT_KEY, ROLE_KEY, ModelCall, StandInChatModel
from reins.runtime.llm.model_calls import _Invoke, _Wait, merge_metrics
from reins.runtime.llm.models import ModelSet
from reins.schemas.strict import Strict

OUTCOMES = ("valid", "drifted", "cut_off", "connection_error", "provider_timeout", "bad_request")
WEIGHTS = (5, 2, 2, 2, 1, 1)  # an adversary that misbehaves about half the time


class FuzzAnswer(Strict):
    verdict: Literal["pass", "fail"]


class AdversarialModel(StandInChatModel):
    """Answers each request with a seeded outcome (``OUTCOMES``), always reporting the most output
    tokens the request allowed (``max_tokens`` is set per request by the role's policy)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    seed: int
    primary: bool = False  # at its worst, a role's own model never answers: every call falls back
    max_tokens: int = 0
    # Shared with the copies the role policy makes per request (a shallow copy keeps this dict), so
    # ``reseed`` starts every copy's draws again.
    _state: dict = PrivateAttr(default_factory=dict)

    @property
    def _llm_type(self) -> str:
        return "reins-adversarial"

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        self._state = {"seed": self.seed, "n": 0, "worst": False, "lock": threading.Lock()}

    def reseed(self, seed: int, worst: bool = False) -> None:
        with self._state["lock"]:
            self._state.update(seed=seed, n=0, worst=worst)

    def _rng(self) -> random.Random:
        with self._state["lock"]:
            self._state["n"] += 1
            return random.Random(f"{self._state['seed']}:{self._state['n']}")

    def respond(self, call: ModelCall) -> Any:
        rng = self._rng()
        outcome = rng.choices(OUTCOMES, WEIGHTS)[0]
        if self._state["worst"]:  # each attempt but a model's last fails retryably; the last is cut off
            if self.primary or self._state["n"] % 2:
                return overloaded()
            outcome = "cut_off"
        if outcome in ("connection_error", "provider_timeout", "bad_request"):
            return raised_error(outcome, call.contract)
        usage = {"input_tokens": 0, "output_tokens": self.max_tokens, "total_tokens": self.max_tokens}
        if outcome == "cut_off":
            return AIMessage(content="", response_metadata={"finish_reason": "length"}, usage_metadata=usage)
        if call.tool_names:
            return AIMessage(content="", usage_metadata=usage)  # a turn without a call: the graph decides
        if call.structured:
            data = {"verdict": "pass"}
            if outcome == "drifted":
                data, _ = perturb_data(data, "schema_drift", rng)
            return AIMessage(content=json.dumps(data), usage_metadata=usage)
        return AIMessage(content="A short answer.", usage_metadata=usage)


def overloaded() -> BaseException:
    """A 503: retryable, and — unlike a dropped connection — no sign the model is gone for the run,
    so every later request still tries it first."""
    request = httpx.Request("POST", "https://provider.invalid/v1/chat/completions")
    return openai.InternalServerError("the model provider is overloaded", body=None,
                                      response=httpx.Response(503, request=request))


_ADVERSARIES: dict[str, AdversarialModel] = {}
_RUN_NUMBERS = itertools.count()
_MODELS: list[ModelSet] = []


def adversarial_models(seed: int, worst: bool = False) -> ModelSet:
    """Every role on an adversarial model with one adversarial fallback; the manager and the
    reviewers with an escalation model too — every path the bound counts can be taken. One model
    set, reseeded per run (its bound runnables are built once)."""
    if not _MODELS:
        _ADVERSARIES.update(primary=AdversarialModel(seed=0, primary=True), fallback=AdversarialModel(seed=0),
                            manager=AdversarialModel(seed=0), reviewer=AdversarialModel(seed=0))
        base = ModelSet.uniform(_ADVERSARIES["primary"])
        models = base.with_fallbacks({role: _ADVERSARIES["fallback"] for role in base.models})
        _MODELS.append(models.with_escalations({"manager": _ADVERSARIES["manager"],
                                                "reviewer": _ADVERSARIES["reviewer"]}))
        register_contracts({f"budget_fuzz.{role}": role for role in base.models})
    for offset, model in enumerate(_ADVERSARIES.values()):
        model.reseed(seed * 8 + offset, worst)
    return _MODELS[0]


def answered_directly(request: _Invoke) -> Any:
    """What LangChain's invoke of ``request`` returns from an adversarial model — the message, or for
    a structured request ``{"raw", "parsed", "parsing_error"}`` as a stand-in's structured output
    gives it — without LangChain's callback and config machinery (most of a request's cost here);
    ``tests/evals/test_budget_fuzz.py`` checks both give the same runs."""
    structured = isinstance(request.runnable, RunnableSequence)
    binding = request.runnable.first if structured else request.runnable
    model, options = getattr(binding, "bound", binding), dict(getattr(binding, "kwargs", None) or {})
    if not isinstance(model, AdversarialModel):
        raise TypeError("the direct transport answers adversarial models only")
    metadata = request.config["metadata"]
    names = tuple(t.get("function", {}).get("name", "") for t in options.get("tools") or [] if isinstance(t, dict))
    response = model.respond(ModelCall(contract=metadata[CONTRACT_KEY], role=metadata[ROLE_KEY],
                                       structured=bool(options.get("reins_structured")), tool_names=names,
                                       messages=tuple(request.messages)))
    if isinstance(response, BaseException):
        raise response
    if not structured:
        return response
    try:
        return {"raw": response, "parsed": json.loads(response.content), "parsing_error": None}
    except ValueError as error:
        return {"raw": response, "parsed": None, "parsing_error": error}


@dataclass
class _Clock:
    """The simulated time of one branch: drawn latencies and computed backoffs, never slept."""

    models: ModelSet
    rng: random.Random
    through_langchain: bool = False
    worst: bool = False  # every request takes its whole timeout
    seconds: float = 0.0

    def drive(self, steps: Any) -> Any:
        """Run a request generator (``reins.runtime.execution.driving``'s protocol) on the real models."""
        answer, failure = None, None
        while True:
            try:
                request = steps.throw(failure) if failure is not None else steps.send(answer)
            except StopIteration as done:
                return done.value
            answer, failure = None, None
            if isinstance(request, _Wait):  # the backoff the machinery computed, not slept
                self.seconds += request.seconds
                continue
            assert isinstance(request, _Invoke)
            timeout = float(self.models.policy(str(request.config["metadata"][ROLE_KEY])).timeout_s)
            try:
                answer = request.run() if self.through_langchain else answered_directly(request)
                self.seconds += timeout if self.worst else self.rng.uniform(0, timeout)
            except Exception as error:  # a timeout took all of it
                failure = error
                slow = self.worst or "Timeout" in type(error).__name__
                self.seconds += timeout if slow else self.rng.uniform(0, timeout)


def _stage_asks(stage: Stage, models: ModelSet, clock: _Clock, metrics: dict) -> dict:
    role, _, escalation = stage.role.partition(":")
    contract = f"budget_fuzz.{role}"
    if escalation:  # asks of the role's escalation model alone
        models = escalated(models, role)
    messages = [HumanMessage(content=f"{stage.name}: answer")]
    roomy_left = stage.more_room
    cut_before = False
    for _ in range(stage.count if not stage.parallel else 1):
        try:
            if stage.kind == "contract":
                steps = contract_steps(contract, FuzzAnswer, messages, models)
            elif stage.kind == "text":
                steps = text_steps(contract, messages, models)
            else:
                more_room = cut_before and roomy_left > 0
                roomy_left -= more_room
                steps = tool_turn_steps(contract, messages, models, [], more_room=more_room)
            result = clock.drive(steps)
            metrics = merge_metrics(metrics, result.metrics)
            cut_before = stage.kind == "turn" and result.message.response_metadata.get("finish_reason") == "length"
        except Exception as error:  # a failed ask: what it spent still counts
            metrics = merge_metrics(metrics, getattr(error, "metrics", None) or {})
            cut_before = False
    return metrics


def stage_composed_run(graph: str, seed: int, through_langchain: bool = False, worst: bool = False) -> dict[str, float]:
    """One adversarial run of ``graph``'s stages on the real call machinery; what it used.
    ``through_langchain``: each request through LangChain's invoke (else ``answered_directly``);
    ``worst``: the adversary at its worst — the role's model always fails retryably, every other
    model fails its first attempt and is cut off on its last, every request takes its timeout — so
    every retry, fallback, repair with more room and escalation the bound counts is taken."""
    # its own run, as a graph's thread is: the models one run found not there are skipped by its
    # later calls, not by the next run's
    with config_within({"configurable": {"thread_id": f"budget-fuzz-{next(_RUN_NUMBERS)}"}}):
        return _stage_composed(graph, adversarial_models(seed, worst), random.Random(seed), through_langchain, worst)


def _stage_composed(graph: str, models: ModelSet, rng: random.Random, through_langchain: bool,
                    worst: bool) -> dict[str, float]:
    metrics: dict = {}
    seconds = 0.0
    for stage in _stages(graph, models):
        if stage.parallel:  # each branch on its own clock; the stage takes the slowest, cut at its deadline
            slowest = 0.0
            for _ in range(stage.count):
                clock = _Clock(models, rng, through_langchain, worst)
                metrics = _stage_asks(stage, models, clock, metrics)
                slowest = max(slowest, min(clock.seconds, stage.deadline_s or clock.seconds))
            seconds += slowest
        else:
            clock = _Clock(models, rng, through_langchain, worst)
            metrics = _stage_asks(stage, models, clock, metrics)
            seconds += clock.seconds
    spent = used(metrics, 0, 0.0)
    spent["seconds"] = seconds
    return spent


def _stages(graph: str, models: ModelSet) -> list[Stage]:
    if graph == "delivery_chain":
        roles = [spec.model_role for spec in reviewer_table(None)]
        return delivery_stages(roles, max_manager_reasks=DEFAULT_POLICY.max_manager_reasks,
                               review_deadlines={r: reviewer_deadline_s(models, r) for r in roles},
                               manager_escalation=True)
    if graph == "tasklist_agent":
        return tasklist_stages(human_review=False)
    return assistant_stages()


# ---------------------------------------------------------------------------------- full runs


def full_graph_run(graph: str, seed: int) -> tuple[dict[str, float], ModelSet]:
    """One run of the compiled graph under the evaluation's perturbed models (rate 0.5, a fallback
    per role): what it used (wall time measured) and the model set its bound is computed for."""
    from reins.evals.perturbed import PerturbedModel
    from reins.runtime.standins.offline import OfflineModel

    started = time.monotonic()
    if graph == "delivery_chain":
        from reins.evals.run import run_seed, wrap_models
        from reins.evals.scenarios import SCENARIOS
        from reins.graphs.delivery_chain import build_graph

        scenario = SCENARIOS[seed % len(SCENARIOS)]
        models, _ = wrap_models(ModelSet.uniform(OfflineModel()), rate=0.5, seed=run_seed(seed, 0, scenario.id),
                                scenario=scenario, baseline="controlled_chain_fallback")
        out = build_graph(models=models).invoke(dict(scenario.payload()))
        return out["metrics"]["budget"]["used"], models
    models = ModelSet.uniform(PerturbedModel(OfflineModel(), rate=0.5, seed=seed))
    models = models.with_fallbacks({role: PerturbedModel(OfflineModel(), rate=0.5, seed=seed + 1) for role in models.models})
    if graph == "tasklist_agent":
        from reins.graphs.tasklist_agent import build_graph

        out = build_graph(models=models).invoke({"request": "/tasklist docs://versions/v0.2.0-ready.md"})
        reads = 1 + int((out.get("counters") or {}).get("optional_context_reads", 0))
    else:
        from reins.graphs.assistant import build_graph

        out = build_graph(models=models).invoke({"messages": [HumanMessage(content="what is 17 * 23 + 4?")]},
                                                {"configurable": {"thread_id": f"fuzz-{seed}"}})
        reads = len(out.get("records") or [])
    return used(out.get("contract_metrics") or {}, reads, time.monotonic() - started), models


# ------------------------------------------------------------------------------------- report


@dataclass
class GraphFuzz:
    """One graph's fuzz: runs of each kind, the largest observed use, the bound, and violations."""

    bound: dict[str, float]
    runs: dict[str, int] = field(default_factory=lambda: {"stage_composed": 0, "worst_adversary": 0, "full_graph": 0})
    observed: dict[str, float] = field(default_factory=lambda: dict.fromkeys(CAP_NAMES, 0))
    violations: list[str] = field(default_factory=list)

    def add(self, kind: str, spent: Mapping[str, float], bound: Mapping[str, float], seed: int) -> None:
        self.runs[kind] += 1
        for name in CAP_NAMES:
            value = float(spent.get(name, 0))
            self.observed[name] = max(self.observed[name], value)
            if value > bound[name] + 1e-9:
                self.violations.append(f"{kind} seed {seed}: {name} {value:g} > {bound[name]:g}")

    def tightness(self) -> dict[str, float]:
        return {n: round(self.observed[n] / self.bound[n], 3) if self.bound[n] else 0.0 for n in CAP_NAMES}


BoundOf = Callable[[str, ModelSet], Budget]
WORST_EVERY = 10  # one stage-composed run in ten meets the adversary at its worst


def fuzz_budget(runs: int, *, full_runs: int | None = None, seed: int = 0,
                bound_of: BoundOf = lambda graph, models: worst_case(graph, models)) -> dict[str, GraphFuzz]:
    """``runs`` adversarial runs in all, split over the three graphs; of each graph's share,
    ``full_runs`` are full graph runs (by default one per 1000, at least one) and the rest are
    stage-composed; every run checked against ``bound_of`` for its model set."""
    results: dict[str, GraphFuzz] = {}
    for number, graph in enumerate(GRAPHS):
        share = runs // len(GRAPHS) + (1 if number < runs % len(GRAPHS) else 0)
        full = min(share, max(1, share // 1000) if full_runs is None else full_runs)
        bound = bound_of(graph, adversarial_models(seed)).as_dict()
        entry = results[graph] = GraphFuzz(bound={k: float(v) for k, v in bound.items()})
        for index in range(share - full):
            worst = index % WORST_EVERY == WORST_EVERY - 1
            entry.add("worst_adversary" if worst else "stage_composed",
                      stage_composed_run(graph, seed + index, worst=worst), bound, seed + index)
        for index in range(full):
            spent, models = full_graph_run(graph, seed + index)
            entry.add("full_graph", spent, bound_of(graph, models).as_dict(), seed + index)
    return results

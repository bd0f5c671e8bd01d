"""Fuzz the worst-case budget: many adversarial runs, none may use more than the printed bound.

Every run meets one of the configurations of ``reins.evals.budget_fuzz_models``: model sets that differ
per role and per task role (own chains, 0-3 fallbacks, escalation models, a vision role), and chat
tools up to a slow MCP server's deadline. A full graph run takes seconds, so most runs are
**stage-composed**: for each stage of the path the run takes (``reins.policies.audit.run_budgets``) the real
call machinery runs — the contract algorithm with its repair and escalation, the free-text draft
with its repair after a cut-off, the tool turns with more room after a cut-off, each model's retries
and the role's fallbacks (``reins.runtime.contracts``) — on the stage's **real contract** (``assistant.step``,
``delivery.plan`` …), so the role that serves it is the contracts' own table, not the stage's
claim. The adversary answers validly, breaks the contract the way ``reins.evals.perturbed`` does, is cut
off at its output bound, or raises the evaluation's provider failures. An assistant run is a chat
turn (with an image half the time when a vision role is configured: the intent, the step and the
answer then go to the vision role, as the nodes route them), or a ``/tasklist`` or
``/delivery-chain`` run inside the turn; a chat turn calls tools, each taking a drawn time up to its
own deadline (a slow one all of it). Every answer reports the most output tokens its request
allowed. The adversary answers each request directly in the shape LangChain's invoke returns
(``answered_directly``); a test checks that the same runs through LangChain's invoke use the same
calls and tokens. Time runs on a simulated clock: each request takes a drawn latency up to its
timeout (a timeout takes all of it), each retry waits the backoff the machinery computed (not
slept), and a parallel stage (the reviewers) takes its slowest branch, cut at the reviewer's
deadline as the graph cuts it. A few **full graph runs** of each graph (the assistant with a task
role on its own chain, and pipelines started from chat) under ``reins.evals.perturbed`` check the stage
lists themselves. Each run is compared with ``reins.runtime.execution.budget.worst_case`` for its
configuration, on calls, output tokens, tool calls and seconds.
"""

from __future__ import annotations

import itertools
import json
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableSequence

from reins.evals.budget_fuzz_models import FuzzAnswer, AdversarialModel, FuzzConfig, config_for
from reins.policies.audit.budget import CAP_NAMES, Budget, Stage
from reins.policies.delivery.delegation import DEFAULT_POLICY
from reins.policies.audit.run_budgets import (
    assistant_stages,
    assistant_tool_calls,
    pipeline_turn_stages,
    tasklist_stages,
)
from reins.runtime.config.settings import ROLES, TASK_ROLES, VISION_ROLE
from reins.runtime.contracts import contract_steps, text_steps, tool_turn_steps
from reins.runtime.contracts.roles import CONTRACT_ROLES, register_contracts
from reins.runtime.execution.budget import (
    CHAT_TURN,
    DELIVERY_IN_CHAT,
    GRAPHS,
    TASKLIST_IN_CHAT,
    assistant_roles,
    delivery_stages_for,
    used,
    worst_case,
)
from reins.runtime.llm.escalation import escalated
from reins.runtime.llm.langchain_private import config_within
from reins.runtime.llm.model_calls import _Invoke, _Wait, merge_metrics
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.fake_base import CONTRACT_KEY, ROLE_KEY, ModelCall

_RUN_NUMBERS = itertools.count()
# The asks of a chat turn the nodes send to the vision role when the turn has an image (the nodes
# that pass the turn's state to ``AssistantDeps.models_for``).
IMAGE_ASKS = frozenset({"intent", "step", "answer"})
IMAGE_TURN = "chat turn with an image"
SLOW_TOOL = 0.2  # the share of tool calls that run to their deadline
ASSISTANT_PATHS = (CHAT_TURN, TASKLIST_IN_CHAT, DELIVERY_IN_CHAT)
register_contracts({f"budget_fuzz.{role}": role for role in ROLES})


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

    rng: random.Random
    through_langchain: bool = False
    worst: bool = False  # every request takes its whole timeout
    seconds: float = 0.0

    def drive(self, steps: Any, models: ModelSet) -> Any:
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
            timeout = float(models.policy(str(request.config["metadata"][ROLE_KEY])).timeout_s)
            try:
                answer = request.run() if self.through_langchain else answered_directly(request)
                self.seconds += timeout if self.worst else self.rng.uniform(0, timeout)
            except Exception as error:  # a timeout took all of it
                failure = error
                slow = self.worst or "Timeout" in type(error).__name__
                self.seconds += timeout if slow else self.rng.uniform(0, timeout)


@dataclass(frozen=True)
class Ask:
    """One stage of a path with the contract its asks use (the real one where there is one) and
    whether the turn's image sends it to the vision role."""

    stage: Stage
    contract: str
    image: bool = False


def _ask(prefix: str, stage: Stage, image: bool = False) -> Ask:
    name = f"{prefix}.{stage.name.partition(':')[0]}"
    role = stage.role.partition(":")[0]
    return Ask(stage, name if name in CONTRACT_ROLES else f"budget_fuzz.{role}", image and stage.name in IMAGE_ASKS)


_ROUTED: dict[int, ModelSet] = {}


def _image_models(models: ModelSet) -> ModelSet:
    """The task roles served as the vision role is (one set per configuration: bound once)."""
    if id(models) not in _ROUTED:
        _ROUTED[id(models)] = models.routed(tuple(TASK_ROLES), VISION_ROLE)
    return _ROUTED[id(models)]


def _stage_asks(ask: Ask, models: ModelSet, clock: _Clock, metrics: dict) -> dict:
    stage = ask.stage
    role, _, escalation = stage.role.partition(":")
    if escalation:  # asks of the role's escalation model alone
        models = escalated(models, role)
    if ask.image:
        models = _image_models(models)
    messages = [HumanMessage(content=f"{stage.name}: answer")]
    roomy_left = stage.more_room
    cut_before = False
    for _ in range(stage.count if not stage.parallel else 1):
        try:
            if stage.kind == "contract":
                steps = contract_steps(ask.contract, FuzzAnswer, messages, models)
            elif stage.kind == "text":
                steps = text_steps(ask.contract, messages, models)
            else:
                more_room = cut_before and roomy_left > 0
                roomy_left -= more_room
                steps = tool_turn_steps(ask.contract, messages, models, [], more_room=more_room)
            result = clock.drive(steps, models)
            metrics = merge_metrics(metrics, result.metrics)
            cut_before = stage.kind == "turn" and result.message.response_metadata.get("finish_reason") == "length"
        except Exception as error:  # a failed ask: what it spent still counts
            metrics = merge_metrics(metrics, getattr(error, "metrics", None) or {})
            cut_before = False
    return metrics


def stage_composed_run(graph: str, seed: int, through_langchain: bool = False, worst: bool = False,
                       path: str | None = None) -> dict[str, float]:
    """One adversarial run of ``graph`` on the configuration of ``seed``, each stage on the real call
    machinery; what it used. ``through_langchain``: each request through LangChain's invoke (else
    ``answered_directly``); ``worst``: the adversary at its worst (``AdversarialModel``), every
    request takes its timeout and every tool call its deadline — so every retry, fallback, repair
    with more room and escalation the bound counts is taken; ``path``: the assistant's path (else
    drawn, ``run_path``)."""
    config = config_for(seed)
    config.reseed(seed, worst)
    rng = random.Random(seed)
    # its own run, as a graph's thread is: the models one run found not there are skipped by its
    # later calls, not by the next run's
    with config_within({"configurable": {"thread_id": f"budget-fuzz-{next(_RUN_NUMBERS)}"}}):
        path, asks = run_path(graph, config, rng, worst, path)
        spent = _composed(asks, config.models, rng, through_langchain, worst)
    tools, seconds = _tool_calls(graph, path, config, rng, worst)
    spent["tool_calls"] += tools
    spent["seconds"] += seconds
    return spent


def run_path(graph: str, config: FuzzConfig, rng: random.Random, worst: bool,
             chosen: str | None = None) -> tuple[str, list[Ask]]:
    """The path a run takes and its asks: the graph's own, or for the assistant ``chosen`` or a drawn
    one — a chat turn (with an image half the time when the vision role is configured) or a
    pipeline inside the turn."""
    models = config.models
    if graph == "tasklist_agent":
        return graph, [_ask("tasklist", s) for s in tasklist_stages(human_review=False)]
    if graph == "delivery_chain":
        return graph, [_ask("delivery", s) for s in delivery_stages_for(models)]
    roles = assistant_roles()
    path = rng.choice((CHAT_TURN, CHAT_TURN, TASKLIST_IN_CHAT, DELIVERY_IN_CHAT)) if chosen is None else chosen
    image = path == CHAT_TURN and config.vision and not worst and rng.random() < 0.5
    if path == TASKLIST_IN_CHAT:
        pipeline = [_ask("tasklist", s) for s in tasklist_stages(human_review=True)]
    elif path == DELIVERY_IN_CHAT:
        pipeline = [_ask("delivery", s) for s in delivery_stages_for(models)]
    else:
        return IMAGE_TURN if image else path, [_ask("assistant", s, image) for s in assistant_stages(roles)]
    summary = [_ask("assistant", s) for s in pipeline_turn_stages(roles, [])]
    return path, [*summary, *pipeline]


def _composed(asks: list[Ask], models: ModelSet, rng: random.Random, through_langchain: bool,
              worst: bool) -> dict[str, float]:
    metrics: dict = {}
    seconds = 0.0
    for ask in asks:
        if ask.stage.parallel:  # each branch on its own clock; the stage takes the slowest, cut at its deadline
            slowest = 0.0
            for _ in range(ask.stage.count):
                clock = _Clock(rng, through_langchain, worst)
                metrics = _stage_asks(ask, models, clock, metrics)
                slowest = max(slowest, min(clock.seconds, ask.stage.deadline_s or clock.seconds))
            seconds += slowest
        else:
            clock = _Clock(rng, through_langchain, worst)
            metrics = _stage_asks(ask, models, clock, metrics)
            seconds += clock.seconds
    spent = used(metrics, 0, 0.0)
    spent["seconds"] = seconds
    return spent


def _tool_calls(graph: str, path: str, config: FuzzConfig, rng: random.Random, worst: bool) -> tuple[int, float]:
    """The tool calls of a run and the time they take: a chat turn's each to one of the offered
    tools, taking a drawn time up to that tool's own deadline (a slow call, and every call at the
    worst, all of it); a delivery's delegations (their model calls are the stages); a tasklist's
    read of its plan."""
    if path in (CHAT_TURN, IMAGE_TURN):
        most = assistant_tool_calls()
        count = most if worst else rng.randint(0, most)
        seconds = 0.0
        for _ in range(count):
            deadline = max(config.tool_deadlines_s) if worst else rng.choice(config.tool_deadlines_s)
            seconds += deadline if worst or rng.random() < SLOW_TOOL else rng.uniform(0, deadline)
        return count, seconds
    if graph == "delivery_chain" or path == DELIVERY_IN_CHAT:
        most = DEFAULT_POLICY.max_tool_calls
        return (most if worst else rng.randint(0, most)), 0.0
    return 1, 0.0


def bound_for(graph: str, config: FuzzConfig) -> Budget:
    """The printed worst case of ``graph`` under a configuration (its tools' deadlines included)."""
    if graph == "assistant":
        return worst_case(graph, config.models, tool_deadlines_s=config.tool_deadlines_s)
    return worst_case(graph, config.models)


# ---------------------------------------------------------------------------------- full runs


CHAT_MESSAGES = ("what is 17 * 23 + 4?", "/tasklist docs://versions/v0.2.0-ready.md",
                 "/delivery-chain Show a banner when a user reaches the request limit")


def full_graph_run(graph: str, seed: int) -> tuple[dict[str, float], Budget]:
    """One run of the compiled graph under the evaluation's perturbed models (rate 0.5, a fallback
    per role; for the assistant the step role on its own chain with three fallbacks, and by seed a
    chat turn or a pipeline started from chat): what it used (wall time measured) and its bound."""
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
        return out["metrics"]["budget"]["used"], worst_case(graph, models)

    def perturbed(offset: int) -> PerturbedModel:
        return PerturbedModel(OfflineModel(), rate=0.5, seed=seed + offset)

    models = ModelSet.uniform(perturbed(0))
    models = models.with_fallbacks({role: perturbed(1) for role in models.models})
    if graph == "tasklist_agent":
        from reins.graphs.tasklist_agent import build_graph

        out = build_graph(models=models).invoke({"request": "/tasklist docs://versions/v0.2.0-ready.md"})
        return used(out.get("contract_metrics") or {}, 1, time.monotonic() - started), worst_case(graph, models)
    from langgraph.checkpoint.memory import InMemorySaver

    from reins.graphs.assistant import build_graph

    models = models.with_models({"step": perturbed(2)}).with_fallbacks({"step": [perturbed(3 + n) for n in range(3)]})
    message = CHAT_MESSAGES[seed % len(CHAT_MESSAGES)]
    out = build_graph(models=models, checkpointer=InMemorySaver()).invoke(
        {"messages": [HumanMessage(content=message)]}, {"configurable": {"thread_id": f"fuzz-{seed}"}})
    tools = len(out.get("records") or []) + int((out.get("pipeline") or {}).get("tool_calls", 0) or 0)
    return used(out.get("contract_metrics") or {}, tools, time.monotonic() - started), worst_case(graph, models)


# ------------------------------------------------------------------------------------- report


@dataclass
class GraphFuzz:
    """One graph's fuzz: runs of each kind and path, the largest observed use, the largest bound,
    the largest share of its own bound a run used (tightness), and the violations."""

    runs: dict[str, int] = field(default_factory=lambda: {"stage_composed": 0, "worst_adversary": 0, "full_graph": 0})
    paths: dict[str, int] = field(default_factory=dict)
    observed: dict[str, float] = field(default_factory=lambda: dict.fromkeys(CAP_NAMES, 0.0))
    bound: dict[str, float] = field(default_factory=lambda: dict.fromkeys(CAP_NAMES, 0.0))
    ratios: dict[str, float] = field(default_factory=lambda: dict.fromkeys(CAP_NAMES, 0.0))
    violations: list[str] = field(default_factory=list)

    def add(self, kind: str, spent: Mapping[str, float], bound: Mapping[str, float], seed: int, path: str = "") -> None:
        self.runs[kind] += 1
        if path:
            self.paths[path] = self.paths.get(path, 0) + 1
        for name in CAP_NAMES:
            value, most = float(spent.get(name, 0)), float(bound[name])
            self.observed[name] = max(self.observed[name], value)
            self.bound[name] = max(self.bound[name], most)
            if most:
                self.ratios[name] = max(self.ratios[name], value / most)
            if value > most + 1e-9:
                self.violations.append(f"{kind} seed {seed} ({config_for(seed).line}; {path or 'graph'}): "
                                       f"{name} {value:g} > {most:g}")

    def tightness(self) -> dict[str, float]:
        return {name: round(self.ratios[name], 3) for name in CAP_NAMES}


BoundOf = Callable[[str, FuzzConfig], Budget]
WORST_EVERY = 10  # one stage-composed run in ten meets the adversary at its worst


def fuzz_budget(runs: int, *, full_runs: int | None = None, seed: int = 0, bound_of: BoundOf = bound_for,
                progress: Callable[[int], None] | None = None) -> dict[str, GraphFuzz]:
    """``runs`` adversarial runs in all, split over the three graphs; of each graph's share,
    ``full_runs`` are full graph runs (by default one per 1000, at least one) and the rest are
    stage-composed, each on its seed's configuration; every run checked against ``bound_of`` for its
    configuration. ``progress(done)`` is called after each run."""
    results: dict[str, GraphFuzz] = {}
    done = 0
    for number, graph in enumerate(GRAPHS):
        share = runs // len(GRAPHS) + (1 if number < runs % len(GRAPHS) else 0)
        full = min(share, max(1, share // 1000) if full_runs is None else full_runs)
        entry = results[graph] = GraphFuzz()
        for index in range(share - full):
            run_seed = seed + index
            worst = index % WORST_EVERY == WORST_EVERY - 1
            config = config_for(run_seed)
            # at its worst, an assistant run takes each path in turn
            chosen = ASSISTANT_PATHS[(index // WORST_EVERY) % len(ASSISTANT_PATHS)] if worst else None
            path = run_path(graph, config, random.Random(run_seed), worst, chosen)[0]
            entry.add("worst_adversary" if worst else "stage_composed",
                      stage_composed_run(graph, run_seed, worst=worst, path=chosen),
                      bound_of(graph, config).as_dict(), run_seed, path)
            done += 1
            if progress:
                progress(done)
        for index in range(full):
            spent, bound = full_graph_run(graph, seed + index)
            entry.add("full_graph", spent, bound.as_dict(), seed + index)
            done += 1
            if progress:
                progress(done)
    return results


def fuzz_report(results: Mapping[str, GraphFuzz]) -> dict[str, Any]:
    """The fuzz as plain data (``reins doctor --budget --fuzz N --json``, the benchmark)."""
    return {graph: {"runs": entry.runs, "paths": entry.paths, "observed_max": entry.observed, "bound_max": entry.bound,
                    "tightness": entry.tightness(), "violations": entry.violations}
            for graph, entry in results.items()}

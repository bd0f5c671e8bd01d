"""The yardstick for Reins' own per-call cost: a plain LangGraph graph with the delivery chain's
nodes, ``Send`` fan-out and model calls, and none of its guardrails.

Both graphs run on ``ReplayModel``, a zero-latency chat model that answers each contract with the
answer the offline model gave it in a recorded delivery run. What is left is each graph's own time:
for the baseline, LangGraph plus LangChain's model-call machinery and one pydantic validation per
structured answer; for Reins, the same plus prompts, contracts, policies, redaction, progress and
tracing.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

from langchain_core.messages import BaseMessage
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send
from pydantic import PrivateAttr

from reins.runtime.standins.fake_base import CONTRACT_KEY, INPUTS_KEY, ROLE_KEY, ModelCall, StandInChatModel
from reins.runtime.standins.offline import OfflineModel
from reins.runtime.config.paths import RESOURCES
from reins.runtime.llm.prompt_inputs import HeldInputs

SCENARIO = "request-limit-banner"
REQUIREMENT = {"requirement_uri": f"demo://scenarios/{SCENARIO}/requirement.md"}
CONTEXT_FILES = (
    "governance/delivery-boundaries.md", "governance/engineering-rules.md",
    "rubrics/plan.md", "rubrics/tasks.md", "rubrics/review.md", "rubrics/risk.md",
)


@dataclass(frozen=True)
class Recorded:
    contract: str
    role: str
    messages: tuple[BaseMessage, ...]
    response: Any
    inputs: Mapping[str, Any]  # the structured inputs the call carried beside its prompt


class RecordingModel(OfflineModel):
    """The offline model, keeping every call and its answer."""

    _recorded: list[Recorded] = PrivateAttr(default_factory=list)

    def respond(self, call: ModelCall) -> Any:
        answer = super().respond(call)
        self._recorded.append(Recorded(call.contract, call.role, call.messages, answer, dict(call.inputs)))
        return answer

    @property
    def recorded(self) -> list[Recorded]:
        return list(self._recorded)


class ReplayModel(StandInChatModel):
    """Answers each contract with its recorded answers in order, starting over when they run out."""

    _answers: dict[str, list[Any]] = PrivateAttr(default_factory=dict)
    _next: dict[str, int] = PrivateAttr(default_factory=dict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _served: list[str] = PrivateAttr(default_factory=list)

    def __init__(self, recorded: Sequence[Recorded], **kwargs: Any):
        super().__init__(**kwargs)
        for item in recorded:
            self._answers.setdefault(item.contract, []).append(item.response)

    @property
    def _llm_type(self) -> str:
        return "reins-replay"

    def respond(self, call: ModelCall) -> Any:
        with self._lock:
            answers = self._answers[call.contract]
            position = self._next.get(call.contract, 0)
            self._next[call.contract] = (position + 1) % len(answers)
            self._served.append(call.contract)
        return answers[position]

    @property
    def served(self) -> list[str]:
        return list(self._served)


def record_delivery_run() -> list[Recorded]:
    """The calls and answers of one offline delivery run on the benchmark scenario."""
    from reins.graphs.delivery_chain import build_graph
    from reins.runtime.llm.models import ModelSet

    model = RecordingModel()
    result = build_graph(models=ModelSet.uniform(model)).invoke(REQUIREMENT)
    if result["run_status"] != "pass":
        raise RuntimeError(f"the benchmark scenario should pass, not {result['run_status']}")
    return model.recorded


class _State(TypedDict, total=False):
    requirement: str
    context: list[str]
    pre: Any
    turns: int
    calls: list[str]
    plan: Any
    tasks: Any
    reviews: Annotated[list[Any], operator.add]
    post: Any
    report: str


def build_baseline_graph(model: StandInChatModel, recorded: Sequence[Recorded], *, asynchronous: bool = False):
    """The delivery chain's shape in plain LangGraph: same nodes, same calls, no guardrails.

    ``asynchronous``: the model-calling nodes are ``async def`` and await ``ainvoke`` (the graph then
    runs under ``ainvoke`` only) — the yardstick for concurrent runs on one event loop."""
    from reins.policies.delivery.delegation import MANAGER
    from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS
    from reins.runtime.tools.toolbox import default_registry
    from reins.schemas.delivery import (
        DeliveryPlan,
        DeliveryTasks,
        SupervisorPostGuidance,
        SupervisorPreDecision,
    )

    prompts: dict[str, list[Recorded]] = {}
    roles: dict[str, str] = {}
    for item in recorded:
        prompts.setdefault(item.contract, []).append(item)
        roles[item.contract] = item.role
    schemas = {
        "delivery.supervisor_pre": SupervisorPreDecision, "delivery.plan": DeliveryPlan,
        "delivery.tasks": DeliveryTasks, "delivery.supervisor_post": SupervisorPostGuidance,
        **{spec.contract: spec.schema for spec in DEFAULT_REVIEWERS},
    }
    runnables: dict[str, Any] = {contract: model.with_structured_output(schema) for contract, schema in schemas.items()}
    runnables["delivery.manager"] = model.bind_tools(default_registry().for_scope(MANAGER).langchain_tools())

    def model_node(contract_of: Any, turn_of: Any, update: Any) -> Any:
        """A node that makes one model call (the contract's recorded prompt) and turns its answer into
        a state update; sync, or async on ``ainvoke``."""

        def request(state: Any) -> tuple[Any, list[BaseMessage], dict, HeldInputs]:
            # The recorded prompt with the inputs it carried (a stand-in model answers from those,
            # as it does in Reins): held for the call, their handle in its metadata.
            contract = contract_of(state)
            call = prompts[contract][turn_of(state)]
            held = HeldInputs(call.inputs)
            config = {"metadata": {CONTRACT_KEY: contract, ROLE_KEY: roles[contract], INPUTS_KEY: held.handle}}
            return runnables[contract], list(call.messages), config, held

        def run(state: Any) -> dict:
            runnable, messages, config, _held = request(state)
            return update(state, runnable.invoke(messages, config))

        async def arun(state: Any) -> dict:
            runnable, messages, config, _held = request(state)
            return update(state, await runnable.ainvoke(messages, config))

        return arun if asynchronous else run

    def quick(fn: Any) -> Any:
        """A node or edge without a model call; async, it runs on the event loop (no executor hop)."""
        if not asynchronous:
            return fn

        async def on_loop(state: Any) -> Any:
            return fn(state)

        on_loop.__name__ = fn.__name__
        return on_loop

    def fixed(contract: str) -> Any:
        return lambda state: contract

    def first(state: Any) -> int:
        return 0

    def load_context(state: _State) -> dict:
        text = (RESOURCES / "scenarios" / SCENARIO / "requirement.md").read_text(encoding="utf-8")
        context = [(RESOURCES / name).read_text(encoding="utf-8") for name in CONTEXT_FILES]
        return {"requirement": text, "context": context, "turns": 0}

    supervisor_pre = model_node(fixed("delivery.supervisor_pre"), first, lambda state, answer: {"pre": answer})
    manager_turn = model_node(
        fixed("delivery.manager"), lambda state: state["turns"],
        lambda state, message: {"calls": [c["name"] for c in message.tool_calls], "turns": state["turns"] + 1},
    )

    def route(state: _State) -> Any:
        if state["calls"] == ["plan-subagent"]:
            return "plan_worker"
        if state["calls"] == ["task-subagent"]:
            return "task_worker"
        return [Send("reviewer", {"contract": DEFAULT_REVIEWERS.of_tool(name).contract}) for name in state["calls"]]

    plan_worker = model_node(fixed("delivery.plan"), first, lambda state, answer: {"plan": answer})
    task_worker = model_node(fixed("delivery.tasks"), first, lambda state, answer: {"tasks": answer})
    reviewer = model_node(lambda task: task["contract"], first, lambda task, answer: {"reviews": [answer]})

    def synthesize(state: _State) -> dict:
        return {}

    supervisor_post = model_node(fixed("delivery.supervisor_post"), first, lambda state, answer: {"post": answer})

    def render_report(state: _State) -> dict:
        return {"report": f"{len(state['reviews'])} reviews; {state['post']}"}

    builder = StateGraph(_State)
    for name, node in (
        ("load_context", quick(load_context)), ("supervisor_pre", supervisor_pre), ("manager", manager_turn),
        ("plan_worker", plan_worker), ("task_worker", task_worker), ("reviewer", reviewer),
        ("synthesize", quick(synthesize)), ("supervisor_post", supervisor_post), ("render_report", quick(render_report)),
    ):
        builder.add_node(name, node)
    builder.add_edge(START, "load_context")
    builder.add_edge("load_context", "supervisor_pre")
    builder.add_edge("supervisor_pre", "manager")
    builder.add_conditional_edges("manager", quick(route), ["plan_worker", "task_worker", "reviewer"])
    builder.add_edge("plan_worker", "manager")
    builder.add_edge("task_worker", "manager")
    builder.add_edge("reviewer", "synthesize")
    builder.add_edge("synthesize", "supervisor_post")
    builder.add_edge("supervisor_post", "render_report")
    builder.add_edge("render_report", END)
    return builder.compile()

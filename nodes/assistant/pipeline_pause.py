"""A pipeline's review pause as the chat thread's last message.

LangGraph keeps nothing a node wrote when the node interrupts, and a pipeline's review question
is known only inside the pipeline, so the pipeline node cannot pause and say why in one step. It
takes two: the step where the pipeline pauses ends normally with the question as an AI message
(and the review it waits for in ``pipeline_review``) and goes to the same node again; that next
step pauses the assistant's thread with the pipeline's own payload (``interrupt``), and the
decision it is resumed with goes on into the pipeline (``Command(resume=...)``).

The pipeline must then survive the step in between: it runs inside ``held(graph)``, a one-node
graph compiled with ``checkpointer=True``, whose checkpoints live under the node's name instead
of one LangGraph task, so the next step finds the pipeline paused where it stopped. Each new
command starts the holder afresh (a new run, so a new task and a fresh pipeline). The holder is
drawn as the pipeline; ``get_state(subgraphs=True)`` shows it, with the pipeline's state inside.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from reins.policies.text.redaction import redact
from reins.policies.text.terminal_text import printable
from reins.runtime.execution.calls import Subgraph, node

QUESTION_LIMIT = 300
DETAIL_LIMIT = 400


class Held(TypedDict, total=False):
    input: dict[str, Any]
    output: dict[str, Any]


class HeldOutput(TypedDict, total=False):
    output: dict[str, Any]


def _run(state: Held, runtime: Runtime[Any], *, graph: Any) -> Any:
    return {"output": (yield Subgraph(graph, state["input"], runtime.context))}


def held(graph: Any, name: str) -> Any:
    """``graph`` inside a holder whose checkpoints outlast the assistant step that ran it:
    invoke it with ``{"input": ...}`` (its result is ``{"output": ...}``), then with
    ``Command(resume=decision)`` after a pause."""
    builder = StateGraph(Held, output_schema=HeldOutput)
    builder.add_node(name, node(_run, name, subgraph=graph))
    builder.add_edge(START, name)
    builder.add_edge(name, END)
    holder = builder.compile(checkpointer=True, name=name)
    # Drawn as the pipeline it holds (Studio, xray, Mermaid): the holder adds no step of its own.
    holder.get_graph, holder.aget_graph = graph.get_graph, graph.aget_graph
    return holder


def review_message(payload: Mapping[str, Any]) -> AIMessage:
    """What a person reads in the chat while the pipeline waits: the question, what is under
    review, why the last answer was refused, and each decision allowed now with what it does
    (redacted and printable: the strategy and the reasons can carry model-written text)."""
    payload = payload if isinstance(payload, Mapping) else {}
    lines = [redact(str(payload.get("question") or "The pipeline waits for your review."), QUESTION_LIMIT)]
    if payload.get("error"):
        lines.append(f"Your last answer was refused: {redact(str(payload['error']), QUESTION_LIMIT)}")
    if payload.get("plan_uri"):
        lines.append(f"Plan: {redact(str(payload['plan_uri']), QUESTION_LIMIT)}")
    strategy = payload.get("strategy")
    if isinstance(strategy, Mapping):
        low, high = (list(strategy.get("expected_step_range") or []) + ["?", "?"])[:2]
        lines.append(f"Strategy: granularity {strategy.get('granularity')}, {low}-{high} steps")
        for field in ("grouping", "priority"):
            if strategy.get(field):
                lines.append(f"  {field}: {redact('; '.join(map(str, strategy[field])), DETAIL_LIMIT)}")
    if payload.get("fix_now"):
        lines.append(f"To fix now: {redact(', '.join(map(str, payload['fix_now'])), DETAIL_LIMIT)}")
    forms = payload.get("decisions") if isinstance(payload.get("decisions"), Mapping) else {}
    allowed = [str(name) for name in payload.get("allowed_decisions") or ()]
    lines.append("Answer with one of:")
    for name in allowed:
        what = (forms.get(name) or {}).get("description") if isinstance(forms.get(name), Mapping) else ""
        lines.append(f"- {name}" + (f": {redact(str(what), DETAIL_LIMIT)}" if what else ""))
    if allowed:
        example = json.dumps({"type": allowed[0]})
        lines.append(f"Resume this thread with your decision, e.g. {example}.")
    return AIMessage(content=printable("\n".join(lines)))

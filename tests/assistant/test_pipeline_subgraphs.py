"""The pipelines as subgraph nodes of the assistant: drawn by Studio, streamed through the assistant,
and a /tasklist review pause paused and resumed on the assistant's thread."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reins.graphs.assistant import build_graph
from reins.runtime.persistence.checkpoint import strict_serializer
from reins.runtime.llm.models import ModelSet
from tests.api_recorder import RecordingOfflineModel
from tests.assistant.helpers import chat_registry

NEEDS_REVIEW = "/tasklist docs://versions/v0.3.0-needs-review.md"


def _assistant(model=None):
    models = ModelSet.uniform(model or RecordingOfflineModel())
    return build_graph(models, InMemorySaver(serde=strict_serializer()), registry=chat_registry())


def _say(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(content=text)]}


def test_studio_draws_both_pipelines_inside_the_assistant():
    graph = _assistant()
    plain = graph.get_graph()
    assert {"tasklist", "delivery_chain", "run_slash_command"} <= set(plain.nodes)
    drawn = set(graph.get_graph(xray=True).nodes)
    assert {"tasklist:read_plan", "tasklist:review_strategy", "tasklist:final"} <= drawn
    assert {"delivery_chain:manager", "delivery_chain:reviewer", "delivery_chain:render_report"} <= drawn
    assert dict(graph.get_subgraphs()).keys() == {"tasklist", "delivery_chain"}


def test_tasklist_with_human_review_pauses_and_resumes_through_the_assistant_thread():
    model = RecordingOfflineModel()
    graph = _assistant(model)
    config = {"configurable": {"thread_id": "review-through-chat"}}

    first = graph.invoke(_say(NEEDS_REVIEW), config, context={"human_review": True})
    (pause,) = first["__interrupt__"]
    assert pause.value["kind"] == "strategy_review" and "approve" in pause.value["allowed_decisions"]
    state = graph.get_state(config, subgraphs=True)
    assert state.next == ("tasklist",)  # the assistant waits in its tasklist node
    holder = state.tasks[0].state  # ... whose holder keeps the pipeline across the assistant's steps
    assert holder.tasks[0].state.next == ("review_strategy",)  # ... which waits at the strategy review
    assert not first.get("reply")  # nothing is answered before the person decides
    drafted_before = model.apis.count("sync")

    final = graph.invoke(Command(resume={"type": "approve"}), config, context={"human_review": True})
    assert "__interrupt__" not in final
    assert final["pipeline"]["command"] == "tasklist"
    status = final["pipeline"]["status"]
    assert status in ("final", "final_with_manual_review_items", "blocked")
    assert final["reply"].startswith(f"/tasklist finished with status {status}.")
    # The task list itself is in the chat reply, with the runtime's header for the plan.
    tasklist = graph.get_state(config).values["reply"]
    assert "docs://versions/v0.3.0-needs-review.md" in tasklist and "- [ ]" in tasklist
    assert len(final["reply"]) <= 4000
    assert model.apis.count("sync") > drafted_before  # the draft was written after the approval
    assert graph.get_state(config).next == ()


def test_without_human_review_the_same_command_runs_through_in_one_turn():
    graph = _assistant()
    result = graph.invoke(_say(NEEDS_REVIEW), {"configurable": {"thread_id": "no-review"}})
    assert "__interrupt__" not in result
    assert result["reply"].startswith("/tasklist finished with status ")


def test_pipeline_progress_streams_through_the_assistant_under_astream():
    model = RecordingOfflineModel()
    graph = _assistant(model)

    async def main():
        seen = []
        async for namespace, mode, chunk in graph.astream(
            _say("/delivery-chain Show a banner when a user reaches the request limit"),
            {"configurable": {"thread_id": "stream"}},
            stream_mode=["custom", "values"],
            subgraphs=True,
        ):
            seen.append((namespace, mode, chunk))
        return seen

    seen = asyncio.run(main())
    inner = [c for ns, mode, c in seen if ns and mode == "custom"]
    assert inner and all(ns[0].startswith("delivery_chain:") for ns, mode, _ in seen if ns)
    assert {e["workflow"] for e in inner} == {"delivery-chain"}
    assert "delegate-review-group" in {e["step"] for e in inner}
    outer = [c for ns, mode, c in seen if not ns and mode == "custom"]
    assert [e["step"] for e in outer if e["status"] == "completed"][-1] == "end"
    final = [c for ns, mode, c in seen if not ns and mode == "values"][-1]
    status = final["pipeline"]["status"]
    assert final["reply"].startswith(f"/delivery-chain finished with status {status}.")
    assert "## Conclusion" in final["reply"]  # the report's conclusion, not only its summary
    assert set(model.apis) == {"async"}  # the subgraph ran on the async path too

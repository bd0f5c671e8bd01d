"""The delivery chain under ``ainvoke`` (what LangGraph Server calls): the same run as ``invoke``, every
model call made through the model's async API, reviewers in parallel with asyncio deadlines, and
many runs in flight at once without a thread per node."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tests.delivery.delivery_builders import OUTPUT_KEYS, boundary, run, script

from reins.graphs.delivery_chain import build_graph
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.scripted import ScriptedModel

REVIEWS = ("delivery.general_review", "delivery.risk_review", "delivery.boundary_review")


class AsyncScriptedModel(ScriptedModel):
    """ScriptedModel that records which API served each call and can await a hook first."""

    def __init__(self, responses: dict[str, Any], hooks: dict[str, Any] | None = None):
        super().__init__(responses)
        object.__setattr__(self, "_hooks", dict(hooks or {}))
        object.__setattr__(self, "apis", [])

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.apis.append("sync")
        return super()._generate(messages, stop, run_manager, **kwargs)

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
        self.apis.append("async")
        contract = (getattr(run_manager, "metadata", None) or {}).get("reins_contract")
        hook = self._hooks.get(contract)
        if hook is not None:
            await hook()
        return await super()._agenerate(messages, stop, run_manager, **kwargs)


def _requirement() -> dict[str, str]:
    return {"requirement": "Show a banner when the request limit is reached."}


def test_ainvoke_runs_the_same_chain_as_invoke_through_the_async_model_api():
    sync_model, async_model = AsyncScriptedModel(script()), AsyncScriptedModel(script())
    expected = run(sync_model)
    out = asyncio.run(build_graph(ModelSet.uniform(async_model)).ainvoke(_requirement()))
    assert set(out) == set(OUTPUT_KEYS)
    assert out["run_status"] == expected["run_status"] == "pass"
    assert async_model.contracts_called()[:6] == sync_model.contracts_called()[:6]
    assert sorted(async_model.contracts_called()) == sorted(sync_model.contracts_called())
    assert out["metrics"]["calls"] == expected["metrics"]["calls"]
    assert [e["step"] for e in out["trace"]] == [e["step"] for e in expected["trace"]]
    assert sync_model.apis == ["sync"] * 10  # invoke: every node on the sync path
    assert async_model.apis == ["async"] * 10  # ainvoke: no node fell back to a thread


def test_under_ainvoke_the_three_reviewers_wait_for_each_other_inside_their_calls():
    barrier_holder: dict[str, asyncio.Barrier] = {}

    async def meet():
        await asyncio.wait_for(barrier_holder["b"].wait(), 5)  # returns only when all three are in flight

    model = AsyncScriptedModel(script(), hooks=dict.fromkeys(REVIEWS, meet))

    async def main():
        barrier_holder["b"] = asyncio.Barrier(3)
        return await build_graph(ModelSet.uniform(model)).ainvoke(_requirement())

    out = asyncio.run(main())
    assert out["review_bundle"]["coverage"] == {"general": "completed", "risk": "completed", "boundary": "completed"}


def test_an_async_reviewer_past_its_deadline_is_cancelled_by_asyncio_not_a_thread(monkeypatch):
    import reins.runtime.execution.calls as calls

    def no_threads(*_args, **_kwargs):
        raise AssertionError("the async path must not start a deadline thread")

    monkeypatch.setattr(calls, "call_with_deadline", no_threads)
    cancelled: list[bool] = []

    async def hang():
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    model = AsyncScriptedModel(script(boundary_review=[boundary()]), hooks={"delivery.boundary_review": hang})

    async def main():
        graph = build_graph(ModelSet.uniform(model))
        return await asyncio.wait_for(graph.ainvoke(_requirement(), context={"review_timeout_s": 0.2}), 10)

    out = asyncio.run(main())
    assert out["review_bundle"]["coverage"] == {"general": "completed", "risk": "completed", "boundary": "timeout"}
    assert out["run_status"] == "needs_review"
    assert cancelled == [True]  # the abandoned call was cancelled, not left running


@pytest.mark.parametrize("runs", [12])
def test_many_runs_are_in_flight_at_once_on_one_event_loop(runs):
    # More runs than the default executor has threads: all of them must be inside their first model
    # call at the same time, which only holds when no node occupies a thread while it waits.
    holder: dict[str, asyncio.Barrier] = {}

    async def meet():
        await asyncio.wait_for(holder["b"].wait(), 5)

    models = [AsyncScriptedModel(script(), hooks={"delivery.supervisor_pre": meet}) for _ in range(runs)]

    async def main():
        holder["b"] = asyncio.Barrier(runs)
        graphs = [build_graph(ModelSet.uniform(m)) for m in models]
        return await asyncio.gather(*(g.ainvoke(_requirement()) for g in graphs))

    outs = asyncio.run(main())
    assert [o["run_status"] for o in outs] == ["pass"] * runs


def test_astream_carries_the_same_progress_events_as_stream():
    # Edges and rule-only nodes run on the event loop under ainvoke; their progress events still arrive.
    sync_graph = build_graph(ModelSet.uniform(AsyncScriptedModel(script())))
    async_graph = build_graph(ModelSet.uniform(AsyncScriptedModel(script())))
    sync_steps = [(e["step"], e["status"]) for e in sync_graph.stream(_requirement(), stream_mode="custom")]

    async def main():
        return [(e["step"], e["status"]) async for e in async_graph.astream(_requirement(), stream_mode="custom")]

    async_steps = asyncio.run(main())
    assert ("delegate-review-group", "running") in async_steps and ("synthesize-report", "completed") in async_steps
    assert sorted(async_steps) == sorted(sync_steps)
    assert async_steps[0] == ("start", "running") and async_steps[-1][0] == "end"

"""Concurrent delivery runs under ``ainvoke`` with a simulated async model latency.

Every model call waits ``latency_s`` first (``asyncio.sleep`` on the async API, ``time.sleep`` on the
sync one), like a hosted model answering in 200 ms; the answer itself is the offline model's,
computed once per distinct prompt and replayed after that, so — as with a remote model — the client
process spends no time thinking. With async-native nodes, N concurrent runs overlap their waits on
one event loop, and what is left to share is the runtime's own CPU time per run.

The ratio, measured in one run: median latency of N runs started together / median latency of one
run alone.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

from pydantic import PrivateAttr

from runtime.fake_base import ModelCall
from runtime.models import ModelSet
from runtime.offline import OfflineModel

REQUIREMENT = {"requirement_uri": "demo://scenarios/request-limit-banner/requirement.md"}


class LatencyModel(OfflineModel):
    """The offline model behind a fixed simulated latency per call, its answers memoised per prompt."""

    latency_s: float = 0.2
    _answers: dict[Any, Any] = PrivateAttr(default_factory=dict)

    def respond(self, call: ModelCall) -> Any:
        key = (call.contract, call.structured, call.tool_names, tuple(str(m.content) for m in call.messages))
        if key not in self._answers:
            self._answers[key] = super().respond(call)
        return self._answers[key]

    def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any):
        time.sleep(self.latency_s)
        return super()._generate(messages, stop, run_manager, **kwargs)

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs: Any):
        await asyncio.sleep(self.latency_s)
        return await super()._agenerate(messages, stop, run_manager, **kwargs)


async def _timed(graph: Any) -> float:
    started = time.perf_counter()
    result = await graph.ainvoke(REQUIREMENT)
    if result["run_status"] != "pass":
        raise RuntimeError(f"the benchmark scenario should pass, not {result['run_status']}")
    return time.perf_counter() - started


def concurrent_ainvoke(latency_s: float = 0.2, levels: tuple[int, ...] = (50, 100)) -> dict[str, float]:
    from graphs.delivery_chain import build_graph

    graph = build_graph(models=ModelSet.uniform(LatencyModel(latency_s=latency_s)))

    async def measure() -> tuple[float, dict[int, float]]:
        await asyncio.gather(*(_timed(graph) for _ in range(5)))  # warm imports, caches, memoised answers
        single = statistics.median([await _timed(graph) for _ in range(3)])
        medians = {}
        for runs in levels:
            medians[runs] = statistics.median(await asyncio.gather(*(_timed(graph) for _ in range(runs))))
        return single, medians

    single, medians = asyncio.run(measure())
    ratios = {str(runs): medians[runs] / single for runs in levels}
    listed = "; ".join(f"{runs} concurrent: median {medians[runs]:.2f}s → ratio {ratios[str(runs)]:.2f}" for runs in levels)
    print(
        f"concurrent_ainvoke: delivery runs with {latency_s * 1000:.0f} ms per model call, one alone {single:.2f}s; "
        f"{listed} (goals: ≤ 1.5 at 50, ≤ 2 at 100)"
    )
    return ratios

"""Reins benchmarks: each prints a ratio measured within one run (these machines are noisy, so no
absolute thresholds; compare the ratios).

1. review_parallelism: the delivery chain with three reviewers that each take D seconds, against
   the same chain's plan+tasks stages alone. Parallel reviewers add ≈ 1·D, sequential ones 3·D:
   the ratio (added time / D) should be close to 1.
2. guardrail_overhead: a full offline delivery run, split into time spent inside model calls and
   time spent in the runtime (validation, policies, graph). Reported as runtime / model time.
3. redaction_scaling: redaction time on 200 KB of adversarial text against 20 KB; a linear
   implementation gives ≈ 10, a quadratic one ≈ 100.
4. checkpoint_memory: peak traced memory of a delivery run with the SQLite checkpointer against
   the same run without a checkpointer.
5. call_overhead: a zero-latency delivery run (every model answer replayed from a recorded run)
   against a plain LangGraph graph with the same nodes, ``Send`` fan-out and model calls
   (``benchmarks/baseline.py``), alternating in one run. Reins' own time per model call as a
   ratio to the baseline's; the goal is at most 2.
6. checkpoint_cost: a delivery run checkpointed in SQLite the way the CLI does it (every step,
   ``async``, pruned to the latest checkpoint when the run ends) against the same run without a
   checkpointer: the time ratio with 200 ms per model call (goal ≤ 1.05), next to the ratio with
   the zero-latency stand-in (the runtime's own cost), and the bytes a run keeps with and without
   its history.

7. concurrent_ainvoke: 50 and then 100 delivery runs started together under ``ainvoke`` with a
   simulated async model latency of 200 ms per call (``benchmarks/concurrency.py``): their median
   latency against one run's alone. Goals: ≤ 1.5 at 50, ≤ 2 at 100.
8. concurrent_server: the same through ``langgraph dev`` (serving ``benchmarks/server_graph.py``) and
   langgraph-sdk: 20 runs started together against one alone through the same server. Goal ≤ 2.
9. cli_start: ``reins deliver`` with a bad argument and ``reins doctor`` (no ``--check``), each
   against ``python -c pass``, and the CPU ``reins chat`` has used when its prompt shows
   (``benchmarks/cli_start.py``). Goals: under 0.5 s, 1 s, and 1 s of CPU.
10. mcp_session_overhead: an MCP call on a chat's warm session against one that starts the server
   for itself (``benchmarks/mcp_sessions.py``), stdio on this machine. Goal: warm ≤ 50 ms per call.

Run: ``make bench`` (or ``.venv/bin/python -m reins.benchmarks.run``).
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

from pydantic import PrivateAttr

from reins.policies.text.redaction import redact
from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS
from reins.runtime.standins.fake_base import ModelCall
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.offline import OfflineModel

REQUIREMENT = {"requirement_uri": "demo://scenarios/request-limit-banner/requirement.md"}
REVIEW_CONTRACTS = tuple(spec.contract for spec in DEFAULT_REVIEWERS)


class TimedOfflineModel(OfflineModel):
    """The offline model, optionally slowed for some contracts, accounting time spent answering."""

    delays: dict[str, float] = {}
    # One account shared with the copies the runtime makes of the model (a role's settings bound):
    # a float field would be added up on the copies and read, still 0, on this one.
    _spent: list[float] = PrivateAttr(default_factory=list)

    @property
    def spent_s(self) -> float:
        return sum(self._spent)

    def respond(self, call: ModelCall):
        started = time.perf_counter()
        if call.contract in self.delays:
            time.sleep(self.delays[call.contract])
        answer = super().respond(call)
        self._spent.append(time.perf_counter() - started)
        return answer


def _run(model: OfflineModel, checkpointer=None) -> tuple[float, dict]:
    from reins.graphs.delivery_chain import build_graph

    graph = build_graph(models=ModelSet.uniform(model), checkpointer=checkpointer)
    config = {"configurable": {"thread_id": f"bench-{time.perf_counter_ns()}"}}
    started = time.perf_counter()
    result = graph.invoke(REQUIREMENT, config)
    return time.perf_counter() - started, result


def review_parallelism(delay_s: float = 0.5) -> float:
    baseline = statistics.median(_run(TimedOfflineModel())[0] for _ in range(3))
    slowed = statistics.median(
        _run(TimedOfflineModel(delays=dict.fromkeys(REVIEW_CONTRACTS, delay_s)))[0] for _ in range(3)
    )
    ratio = (slowed - baseline) / delay_s
    print(f"review_parallelism: {len(REVIEW_CONTRACTS)} reviewers × {delay_s:.2f}s added {slowed - baseline:.2f}s → ratio {ratio:.2f} (1.0 = fully parallel, 3.0 = sequential)")
    return ratio


def guardrail_overhead() -> float:
    _run(TimedOfflineModel())  # warm imports and caches
    samples, per_call = [], []
    for _ in range(5):
        model = TimedOfflineModel()
        elapsed, result = _run(model)
        assert result["run_status"] == "pass"
        calls = sum(result["metrics"]["calls"].values())
        samples.append((elapsed - model.spent_s) / max(model.spent_s, 1e-9))
        per_call.append((elapsed - model.spent_s) / calls * 1000)
    ratio = statistics.median(samples)
    print(
        f"guardrail_overhead: runtime (validation, policies, graph) / offline-model time = {ratio:.2f}; "
        f"{statistics.median(per_call):.1f} ms of runtime per model call (a hosted model call takes ~1000 ms)"
    )
    return ratio


def redaction_scaling() -> float:
    unit = "token=abc " + "a" * 40 + " Bearer x.y.z /home/u/f.txt sk-" + "k" * 20 + " password: p "
    small, large = unit * (20_000 // len(unit)), unit * (200_000 // len(unit))

    def timed(text: str) -> float:
        return min(_time(lambda: redact(text, len(text) + 10)) for _ in range(3))

    ratio = timed(large) / timed(small)
    print(f"redaction_scaling: time(200 KB) / time(20 KB) = {ratio:.1f} (10 = linear, 100 = quadratic)")
    return ratio


def checkpoint_memory() -> float:
    from reins.runtime.persistence.checkpoint import open_checkpointer

    def peak(checkpointed: bool) -> int:
        tracemalloc.start()
        if checkpointed:
            with tempfile.TemporaryDirectory() as tmp, open_checkpointer("sqlite", path=Path(tmp) / "c.db") as saver:
                _run(TimedOfflineModel(), saver)
        else:
            _run(TimedOfflineModel())
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    peak(False)  # warm imports so both measurements see the same modules
    without, with_saver = peak(False), peak(True)
    ratio = with_saver / without
    print(f"checkpoint_memory: peak traced memory with SQLite checkpointer / without = {ratio:.2f} ({with_saver / 1e6:.1f} MB vs {without / 1e6:.1f} MB)")
    return ratio


def call_overhead(runs: int = 30) -> float:
    from reins.benchmarks.baseline import ReplayModel, build_baseline_graph, record_delivery_run
    from reins.graphs.delivery_chain import build_graph

    recorded = record_delivery_run()
    reins = build_graph(models=ModelSet.uniform(ReplayModel(recorded)))
    plain = build_baseline_graph(ReplayModel(recorded), recorded)
    for _ in range(3):  # warm both: imports, first-use caches, thread pools
        reins.invoke(REQUIREMENT), plain.invoke({})
    reins_s, plain_s = [], []
    for _ in range(runs):  # alternating, so both see the same machine load
        reins_s.append(_time(lambda: reins.invoke(REQUIREMENT)))
        plain_s.append(_time(lambda: plain.invoke({})))
    calls = len(recorded)
    per_call, plain_per_call = statistics.median(reins_s) / calls, statistics.median(plain_s) / calls
    # The median of per-round ratios: each round's two runs went back to back, under the same load.
    ratio = statistics.median(r / p for r, p in zip(reins_s, plain_s))
    print(
        f"call_overhead: Reins {per_call * 1000:.2f} ms per model call vs plain LangGraph {plain_per_call * 1000:.2f} ms "
        f"at zero model latency ({calls} calls per run) → ratio {ratio:.2f} (goal ≤ 2)"
    )
    return ratio


class _SlowOfflineModel(OfflineModel):
    """The offline stand-in, waiting ``latency_s`` per call like a hosted model (in a thread when sync)."""

    latency_s: float = 0.2

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        time.sleep(self.latency_s)
        return super()._generate(messages, stop, run_manager, **kwargs)


def _stored_bytes(db: Path) -> tuple[int, int]:
    import sqlite3

    with sqlite3.connect(db) as conn:
        count, stored = conn.execute(
            "SELECT count(*), coalesce(sum(length(checkpoint)) + sum(length(metadata)), 0) FROM checkpoints"
        ).fetchone()
        written = conn.execute("SELECT coalesce(sum(length(value)), 0) FROM writes").fetchone()[0]
    return count, stored + written


def checkpoint_cost(runs: int = 20, slow_runs: int = 4, latency_s: float = 0.2) -> float:
    """The CLI's checkpointing (every step saved, pruned to the latest checkpoint when the run ends)
    against no checkpointer: with model calls of ``latency_s`` (what a user waits for) and with the
    zero-latency stand-in (the runtime's own cost), plus the bytes a run keeps with and without
    its history. Returns the ratio at ``latency_s``."""
    from contextlib import ExitStack

    from reins.graphs.delivery_chain import build_graph
    from reins.policies.assistant.retention import durability_for
    from reins.runtime.persistence.checkpoint import open_checkpointer
    from reins.runtime.persistence.runs import keep_latest_checkpoints

    mode = durability_for(can_pause=False)
    results: dict[str, float] = {}
    sizes: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        for label, model, rounds in (("fast", OfflineModel(), runs), ("slow", _SlowOfflineModel(latency_s=latency_s), slow_runs)):
            db = Path(tmp) / f"{label}.db"
            saver = stack.enter_context(open_checkpointer("sqlite", path=db))
            plain = build_graph(models=ModelSet.uniform(model))
            saved = build_graph(models=ModelSet.uniform(model), checkpointer=saver)
            threads: list[str] = []

            def checkpointed() -> float:
                thread = f"bench-{time.perf_counter_ns()}"
                threads.append(thread)
                config = {"configurable": {"thread_id": thread}}

                def run() -> None:
                    saved.invoke(REQUIREMENT, config, durability=mode)
                    keep_latest_checkpoints(saver, thread)  # as the CLI does when a run ends

                return _time(run)

            variants = {"none": lambda: _time(lambda: plain.invoke(REQUIREMENT)), "cli": checkpointed}
            for run in variants.values():
                run()  # warm
            times: dict[str, list[float]] = {name: [] for name in variants}
            order = random.Random(0)
            for _ in range(rounds):  # interleaved in a shuffled order, so both variants see the same load
                for name in order.sample(list(variants), len(variants)):
                    times[name].append(variants[name]())
            # The median of per-round ratios: each round's variants ran back to back, under the same load.
            results[label] = statistics.median(t / n for t, n in zip(times["cli"], times["none"]))
            if label == "fast":
                count, kept = _stored_bytes(db)
                history_thread = "bench-history"
                saved.invoke(REQUIREMENT, {"configurable": {"thread_id": history_thread}}, durability=mode)
                count_all, with_history = _stored_bytes(db)
                sizes["pruned"] = (count / len(threads), kept / len(threads))
                sizes["history"] = (count_all - count, with_history - kept)
    print(
        f"checkpoint_cost: every step saved ({mode}), pruned when the run ends: time ×{results['slow']:.3f} of no "
        f"checkpointer with {latency_s * 1000:.0f} ms per model call (goal ≤ 1.05), ×{results['fast']:.2f} with the "
        f"zero-latency stand-in; a run keeps {sizes['pruned'][1] / 1024:.0f} KiB in {sizes['pruned'][0]:.0f} "
        f"checkpoint(s) ({sizes['history'][1] / 1024:.0f} KiB in {sizes['history'][0]:.0f} with --keep-history)"
    )
    return results["slow"]


def concurrent_ainvoke(latency_s: float = 0.2, levels: tuple[int, ...] = (50, 100)) -> dict[str, float]:
    from reins.benchmarks.concurrency import concurrent_ainvoke as measure

    return measure(latency_s, levels)


def concurrent_server(runs: int = 20) -> float:
    from reins.benchmarks.concurrency import concurrent_server as measure

    return measure(runs)


def cli_start(rounds: int = 7) -> dict[str, float]:
    from reins.benchmarks.cli_start import cli_start as measure

    return measure(rounds)


def mcp_session_overhead(warm_calls: int = 30, cold_calls: int = 5) -> dict[str, float]:
    from reins.benchmarks.mcp_sessions import mcp_session_overhead as measure

    return measure(warm_calls, cold_calls)


def _time(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def main() -> None:
    review_parallelism()
    guardrail_overhead()
    redaction_scaling()
    checkpoint_memory()
    call_overhead()
    checkpoint_cost()
    concurrent_ainvoke()
    concurrent_server()
    cli_start()
    mcp_session_overhead()


if __name__ == "__main__":
    main()

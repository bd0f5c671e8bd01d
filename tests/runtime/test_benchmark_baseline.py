"""The call-overhead benchmark's yardstick makes the same model calls as the delivery chain."""

from __future__ import annotations

from collections import Counter

from benchmarks.baseline import REQUIREMENT, ReplayModel, build_baseline_graph, record_delivery_run
from graphs.delivery_chain import build_graph
from runtime.models import ModelSet


def test_baseline_and_reins_make_the_same_calls_on_the_replayed_answers():
    recorded = record_delivery_run()
    assert len(recorded) == 10  # a direct-mode pass run

    reins_model, plain_model = ReplayModel(recorded), ReplayModel(recorded)
    result = build_graph(models=ModelSet.uniform(reins_model)).invoke(REQUIREMENT)
    report = build_baseline_graph(plain_model, recorded).invoke({})["report"]

    assert result["run_status"] == "pass"
    assert report.startswith("3 reviews")
    assert Counter(plain_model.served) == Counter(reins_model.served) == Counter(r.contract for r in recorded)
    # Sequential stages in the same order; only the three parallel reviews may interleave.
    sequential = [c for c in reins_model.served if not c.endswith("_review")]
    assert [c for c in plain_model.served if not c.endswith("_review")] == sequential


def test_the_async_baseline_makes_the_same_calls_under_ainvoke():
    import asyncio

    recorded = record_delivery_run()
    sync_model, async_model = ReplayModel(recorded), ReplayModel(recorded)
    build_baseline_graph(sync_model, recorded).invoke({})
    report = asyncio.run(build_baseline_graph(async_model, recorded, asynchronous=True).ainvoke({}))["report"]

    assert report.startswith("3 reviews")
    assert Counter(async_model.served) == Counter(sync_model.served) == Counter(r.contract for r in recorded)

"""The call-overhead benchmark's yardstick makes the same model calls as the delivery chain."""

from __future__ import annotations

from collections import Counter

from reins.benchmarks.baseline import REQUIREMENT, ReplayModel, build_baseline_graph, record_delivery_run
from reins.graphs.delivery_chain import build_graph
from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS
from reins.runtime.llm.models import ModelSet


def test_baseline_and_reins_make_the_same_calls_on_the_replayed_answers():
    recorded = record_delivery_run()
    assert len(recorded) == 7 + len(DEFAULT_REVIEWERS)  # a direct-mode pass run: pre, 3 manager turns, plan, tasks, reviews, post

    reins_model, plain_model = ReplayModel(recorded), ReplayModel(recorded)
    result = build_graph(models=ModelSet.uniform(reins_model)).invoke(REQUIREMENT)
    report = build_baseline_graph(plain_model, recorded).invoke({})["report"]

    assert result["run_status"] == "pass"
    assert report.startswith(f"{len(DEFAULT_REVIEWERS)} reviews")
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

    assert report.startswith(f"{len(DEFAULT_REVIEWERS)} reviews")
    assert Counter(async_model.served) == Counter(sync_model.served) == Counter(r.contract for r in recorded)


def test_the_baseline_replays_each_calls_inputs_so_a_rule_based_model_answers_as_in_the_recording():
    """The offline stand-in answers from the inputs a call carries beside its prompt (the manager
    from the artifacts that exist): replayed without them it would plan forever."""
    import asyncio

    from reins.runtime.standins.offline import OfflineModel

    recorded = record_delivery_run()
    report = asyncio.run(build_baseline_graph(OfflineModel(), recorded, asynchronous=True).ainvoke({}))["report"]
    assert report.startswith(f"{len([r for r in recorded if r.contract.endswith('_review')])} reviews")
    assert build_baseline_graph(OfflineModel(), recorded).invoke({})["report"] == report

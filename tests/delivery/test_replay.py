"""Counterfactual replay: recorded delivery runs re-decided without a model. The unchanged policy
flips nothing; each seeded rule change flips exactly the decisions it should, and no others."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from reins.cli import main
from reins.evals.run import run_seed, wrap_models
from reins.evals.scenarios import SCENARIOS
from reins.graphs.delivery_chain import build_graph
from reins.policies.delivery.delegation import DEFAULT_POLICY
from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.offline import OfflineModel
from reins.evals.records import decision_inputs
from reins.nodes.delivery.replay import replay_delivery, replay_values
from reins.policies.audit.replay import parse_overrides


@pytest.fixture(scope="module")
def recorded():
    """Nine scenarios on the stand-in, and the same scenarios under the evaluation's faults (manager
    turns refused and re-asked, reviews lost), each on its own thread. (The stored evaluation records
    and fuzz sequences, tests/evals/test_replay_records.py, cover every scenario.)"""
    saver = InMemorySaver()
    models = ModelSet.uniform(OfflineModel())
    threads = {}
    for seed in (0, 2):  # seed 2 refuses manager turns in six of them, two past the re-ask budget
        for scenario in SCENARIOS[:9]:
            rate = 0.0 if seed == 0 else 0.4
            faulty, _ = wrap_models(models, rate=rate, seed=run_seed(seed, 0, scenario.id), scenario=scenario,
                                    baseline="controlled_chain")
            graph = build_graph(faulty, checkpointer=saver)
            thread = f"{scenario.id}-{seed}"
            graph.invoke(dict(scenario.payload()), {"configurable": {"thread_id": thread}})
            threads[thread] = graph.get_state({"configurable": {"thread_id": thread}}).values
    return build_graph(models, checkpointer=saver), threads


def test_the_unchanged_policy_flips_nothing(recorded):
    graph, threads = recorded
    replays = [replay_delivery(graph, thread) for thread in threads]
    assert [r.thread_id for r in replays if r.first_flip] == []
    assert all(r.replayed_status == r.recorded_status for r in replays)
    refused = [t for t, v in threads.items() if v.get("manager_refusals")]
    assert refused, "the faulty runs include refused manager turns"  # so the re-ask decisions were replayed
    for replay in replays:  # every recorded decision was re-decided: turns, re-asks, the bundle, the revision
        values = threads[replay.thread_id]
        expected = len(values.get("manager_proposals") or []) + len(values.get("manager_refusals") or [])
        expected += bool(values.get("review_bundle")) + bool(values.get("review_bundle") and values.get("post_review_decision"))
        # and every contract output the run kept: the pre-decision, the plan, the tasks, each completed review
        kept = bool(values.get("pre_decision")) + bool(values.get("plan")) + bool(values.get("tasks"))
        kept += sum(o["outcome"] == "completed" for o in values.get("review_outcomes") or [])
        contracts = [d for d in replay.decisions if d.kind.startswith("contract:")]
        assert len(contracts) == kept and len(replay.decisions) == expected + kept, replay.thread_id


def test_the_compact_evaluation_record_replays_as_the_whole_state(recorded):
    graph, threads = recorded
    for thread, values in threads.items():  # records.json keeps only what the decisions read
        for options in ({}, *MUTATIONS.values()):
            whole, compact = replay_values(values, thread, **options), replay_values(decision_inputs(values), thread, **options)
            assert (compact.decisions, compact.replayed_status, compact.stopped) == (
                whole.decisions, whole.replayed_status, whole.stopped), thread


MUTATIONS = {
    # one sub-agent call fewer: every run that reached the review group is refused there
    "lower the call budget": dict(policy=replace(DEFAULT_POLICY, max_tool_calls=4)),
    # no re-ask: every run whose turn was refused and asked again now fails closed
    "no re-ask": dict(policy=replace(DEFAULT_POLICY, max_manager_reasks=0)),
    # a two-reviewer table: the recorded three-reviewer groups no longer fit
    "two reviewers": dict(reviewers=tuple(spec for spec in DEFAULT_REVIEWERS if spec.role != "boundary")),
    # at most five tasks (the bound DeliveryTasks declares, lowered): longer task lists are rejected
    "at most five tasks": dict(overrides=parse_overrides(["contract.delivery.tasks.tasks=5"])),
}


def test_a_lower_call_budget_flips_the_review_group_of_every_run_that_reached_it(recorded):
    graph, threads = recorded
    for thread, values in threads.items():
        result = replay_delivery(graph, thread, **MUTATIONS["lower the call budget"])
        reached = any(p["verdict"]["next"] == "reviewer" for p in values.get("manager_proposals") or [])
        flip = result.first_flip
        assert (flip is not None) == reached, thread
        if flip:
            assert (flip.kind, flip.recorded, flip.replayed) == ("delegation", "reviewer",
                                                                 "manager_refused (too_many_calls)")
            review_turn = next(p for p in values["manager_proposals"] if p["verdict"]["next"] == "reviewer")
            spent = any(r["executed"] == len(review_turn["executed"]) for r in values.get("manager_refusals") or [])
            # a turn already asked again fails closed; otherwise the re-ask would need the model
            assert result.replayed_status == ("failed" if spent else None), thread
            assert ("fails closed" if spent else "new model call") in result.stopped


def test_no_re_ask_fails_closed_exactly_the_runs_that_were_asked_again(recorded):
    graph, threads = recorded
    for thread, values in threads.items():
        result = replay_delivery(graph, thread, **MUTATIONS["no re-ask"])
        reasked = any(r["reasked"] for r in values.get("manager_refusals") or [])
        flip = result.first_flip
        assert (flip is not None) == reasked, thread
        if flip:
            assert (flip.kind, flip.recorded, flip.replayed) == ("reask", "manager", "fail_closed")
            assert result.replayed_status == "failed"


def test_a_smaller_reviewer_table_flips_the_recorded_review_groups(recorded):
    graph, threads = recorded
    for thread, values in threads.items():
        result = replay_delivery(graph, thread, **MUTATIONS["two reviewers"])
        if "boundary" in ((values.get("pre_decision") or {}).get("review_focus") or {}):
            # the pre-decision schema of a two-reviewer table has no boundary focus: rejected first
            assert (result.first_flip.kind, result.first_flip.replayed) == (
                "contract:delivery.supervisor_pre", "rejected (extra_forbidden at review_focus.boundary)"), thread
            assert result.stopped.startswith("needs a new model call: the repair of delivery.supervisor_pre")
            continue
        # exactly the turns that named the dropped reviewer's tool are decided differently (unless
        # already refused as calling a tool the manager does not have: the reason stays the same)
        named = any(any(call["name"] == "boundary-subagent" for call in p["calls"])
                    and (p["verdict"]["violation"] or {}).get("code") != "unregistered_tool"
                    for p in values.get("manager_proposals") or [])
        assert (result.first_flip is not None) == named, thread
        if named:
            assert result.first_flip.replayed.startswith("manager_refused")


def test_a_lower_task_bound_rejects_exactly_the_longer_task_lists(recorded):
    graph, threads = recorded
    flipped = 0
    for thread, values in threads.items():
        result = replay_delivery(graph, thread, **MUTATIONS["at most five tasks"])
        longer = len((values.get("tasks") or {"value": {"tasks": []}})["value"]["tasks"]) > 5
        assert (result.first_flip is not None) == longer, thread
        if longer:
            flipped += 1
            kind = "contract:delivery.tasks" if values["tasks"]["revision"] == 1 else "contract:delivery.task_revision"
            assert (result.first_flip.kind, result.first_flip.replayed) == (kind, "rejected (too_long at tasks)")
            assert result.replayed_status is None and "new model call" in result.stopped
    assert flipped >= 3


def test_reins_replay_over_the_cli(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("REINS_HOME", str(tmp_path))
    assert main(["deliver", "--scenario", "request-limit-banner"]) == 0
    capsys.readouterr()
    assert main(["replay", "--all", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["flipped"] == 0
    assert main(["replay", "--all", "--set", "max_tool_calls=4", "--set", "max_manager_reasks=0"]) == 4
    out = capsys.readouterr().out
    assert "reviewer → manager_refused (too_many_calls); status pass → failed" in out
    assert main(["replay", "--set", "bogus=1", "--all"]) == 2
    assert main(["replay", "no-such-thread"]) == 2

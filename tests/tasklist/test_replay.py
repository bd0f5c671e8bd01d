"""Replay of tasklist runs: every bundled plan on the offline model, checkpointed, re-decided by the
machine's guard from the run's guard log. The unchanged limits flip nothing; each seeded limit
change flips exactly the runs (and the step) the log predicts, and those runs end stopped."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from reins.cli import main
from reins.graphs.tasklist_agent import build_graph
from reins.nodes.replay import replay_thread
from reins.policies.audit.replay import parse_overrides
from reins.policies.assistant.retention import run_status
from reins.policies.tasklist.machine import counts_as_step
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.offline import OfflineModel
from reins.runtime.resources import ResourceResolver

PLANS = ("v0.2.0-ready.md", "v0.3.0-needs-review.md", "draft-ideas.md", "v0.4.0-overscoped.md",
         "v0.2.2-needs-revision.md", "v0.2.3-runtime-context.md")


@pytest.fixture(scope="module")
def recorded() -> dict[str, Mapping[str, Any]]:
    graph = build_graph(models=ModelSet.uniform(OfflineModel()), resolver=ResourceResolver(), checkpointer=InMemorySaver())
    runs = {}
    for plan in PLANS:
        config = {"configurable": {"thread_id": f"tasklist-{plan}"}}
        graph.invoke({"request": f"/tasklist docs://versions/{plan}"}, config)
        runs[plan] = graph.get_state(config).values
    return runs


def _replay(values: Mapping[str, Any], plan: str, changes: list[str]):
    return replay_thread("tasklist_agent", values, plan, run_status(values, False), parse_overrides(changes))


def test_every_step_is_logged_and_the_unchanged_limits_flip_nothing(recorded):
    for plan, values in recorded.items():
        log = values["guard_log"]
        assert len(log) >= values["counters"]["steps"] > 0, plan  # each counted step asked the guard
        replay = _replay(values, plan, [])
        assert replay.first_flip is None and replay.replayed_status == values["final_decision"], plan
        # every guard question, then the kept contract outputs: the planning decision, a written strategy
        contracts = [d.kind for d in replay.decisions if d.kind.startswith("contract:")]
        written = plan == "v0.2.3-runtime-context.md"  # its strategy came after the optional context read
        assert contracts == ["contract:tasklist.planning_decision", *(["contract:tasklist.strategy"] if written else [])]
        assert len(replay.decisions) == len(log) + len(contracts)


def allowed(action: str) -> Callable[[list[dict[str, Any]]], tuple[int, str] | None]:
    """The first time the run was allowed ``action``: it is now refused by the changed limit."""
    def first(log: list[dict[str, Any]]) -> tuple[int, str] | None:
        return next(((i, "refused (not_now)") for i, e in enumerate(log)
                     if e["action"] == action and e["verdict"].startswith("allowed")), None)
    return first


def past_steps(limit: int) -> Callable[[list[dict[str, Any]]], tuple[int, str] | None]:
    """The first counted step asked for once ``limit`` steps were spent: refused by the step limit."""
    def first(log: list[dict[str, Any]]) -> tuple[int, str] | None:
        return next(((i, "refused (step_limit)") for i, e in enumerate(log)
                     if counts_as_step(e["action"]) and e["machine"]["counters"]["steps"] >= limit), None)
    return first


MUTATIONS = {
    "no revision": (["tasklist.max_draft_revisions=0"], allowed("revise_v2")),
    "no optional context": (["tasklist.max_optional_context_reads=0"], allowed("read_optional_context")),
    "seven steps": (["tasklist.max_steps=7"], past_steps(7)),
}


def strategy_groups_over(bound: int) -> Callable[[Mapping[str, Any]], tuple[str, str, str] | None]:
    """Fewer groups allowed in a split strategy (``TasklistStrategy`` declares the bound; a planning
    decision carries one): the first kept output whose strategy has more groups is rejected."""
    def first(values: Mapping[str, Any]) -> tuple[str, str, str] | None:
        decision, strategy = values.get("decision") or {}, values.get("strategy")
        if len((decision.get("strategy") or {}).get("grouping") or []) > bound:
            return "contract:tasklist.planning_decision", "accepted", "rejected (too_long at strategy.grouping)"
        if strategy and strategy != decision.get("strategy") and len(strategy["grouping"]) > bound:
            return "contract:tasklist.strategy", "accepted", "rejected (too_long at grouping)"
        return None
    return first


def test_a_contract_limit_flips_exactly_the_kept_outputs_over_it(recorded):
    expected_of = strategy_groups_over(2)
    flipped = set()
    for plan, values in recorded.items():
        replay = _replay(values, plan, ["contract.tasklist.strategy.grouping=2"])
        flip = replay.first_flip
        assert ((flip.kind, flip.recorded, flip.replayed) if flip else None) == expected_of(values), plan
        if flip:
            flipped.add(flip.kind)
            assert replay.replayed_status is None and "the repair of" in replay.stopped
    assert flipped == {"contract:tasklist.planning_decision", "contract:tasklist.strategy"}


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_a_limit_change_flips_exactly_the_runs_it_should(recorded, name):
    changes, expected_of = MUTATIONS[name]
    flipped = 0
    for plan, values in recorded.items():
        expected = expected_of(values["guard_log"])
        replay = _replay(values, plan, changes)
        flip = replay.first_flip
        got = (flip.step, flip.replayed) if flip else None
        assert got == expected, plan
        if flip:
            flipped += 1
            assert replay.replayed_status == "stopped" and flip.kind == f"tasklist.{values['guard_log'][flip.step]['action']}"
    assert 1 <= flipped < len(recorded), "the change matters to some runs and not to all"


def test_reins_replay_re_decides_a_tasklist_thread(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("REINS_HOME", str(tmp_path))
    assert main(["tasklist", "docs://versions/v0.2.2-needs-revision.md"]) == 0
    capsys.readouterr()
    assert main(["replay", "--all"]) == 0
    assert "1 run(s) replayed" in capsys.readouterr().out
    assert main(["replay", "--all", "--set", "tasklist.max_draft_revisions=0"]) == 4
    out = capsys.readouterr().out
    assert "flips at tasklist.revise_v2" in out and "allowed → revised_v2 → refused (not_now); status final → stopped" in out
    assert "1 with a flipped decision: 1 status change(s), 0 would need a new model call" in out

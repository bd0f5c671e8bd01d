"""The budget fuzz: adversarial runs on model sets that differ per role and per task role, with
fallbacks, escalations, pipelines in chat and slow tools, never pass the printed bound — and a bound
that forgets what a run may spend (retries, fallbacks, a task role's own chain, a pipeline in chat, a
slow tool's deadline) is caught."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from reins.cli import main
from reins.evals.budget_fuzz import ASSISTANT_PATHS, fuzz_budget, stage_composed_run
from reins.evals.budget_fuzz_models import CONFIGURATIONS, config_for
from reins.policies.audit.budget import budget
from reins.policies.audit.run_budgets import ASSISTANT_ASKS, assistant_stages, assistant_tool_calls
from reins.runtime.execution.budget import (
    CHAT_TURN,
    DELIVERY_IN_CHAT,
    GRAPHS,
    assistant_paths,
    call_limits,
    worst_case,
)


def test_adversarial_runs_never_exceed_the_bound():
    results = fuzz_budget(150, full_runs=0)  # full graph runs: the doctor test below
    assert set(results) == set(GRAPHS)
    for graph, entry in results.items():
        assert entry.runs == {"stage_composed": 45, "worst_adversary": 5, "full_graph": 0}, graph
        assert entry.violations == [], graph
        ratios = entry.tightness()
        assert all(0 <= ratio <= 1 for ratio in ratios.values()), (graph, ratios)
        # at its worst the adversary takes every path the bound counts: the call bound is reached
        # exactly, the time bound all but its backoff jitter
        assert ratios["calls"] == 1.0 and ratios["seconds"] > 0.9, (graph, ratios)
    # an assistant run is a chat turn (with an image, too) or a pipeline started from chat
    assert set(results["assistant"].paths) == {*ASSISTANT_PATHS, "chat turn with an image"}


def test_the_configurations_differ_per_role_and_per_task_role():
    configs = [config_for(number) for number in range(CONFIGURATIONS)]
    chains = {(role, len(config.models.chain(role))) for config in configs for role in ("step", "answer", "planner")}
    assert {length for role, length in chains if role == "step"} >= {1, 2, 3, 4}
    assert any(config.vision for config in configs) and not all(config.vision for config in configs)
    assert any(config.models.escalations for config in configs)
    assert {max(config.tool_deadlines_s) for config in configs} >= {30.0, 600.0}
    step = config_for(0).models
    assert len(step.chain("step")) == 4 and "step" in step.models  # the reported case: three step fallbacks


@pytest.mark.parametrize("graph", GRAPHS)
def test_the_direct_answers_give_the_runs_langchain_gives(graph):
    """The fuzz answers requests without LangChain's invoke for speed: the same seeds through it
    make the same calls and spend the same tokens (time differs by the backoff's random jitter)."""
    for seed in range(4):
        through, direct = stage_composed_run(graph, seed, True), stage_composed_run(graph, seed, False)
        assert (through["calls"], through["output_tokens"]) == (direct["calls"], direct["output_tokens"])
        assert through["seconds"] == pytest.approx(direct["seconds"], rel=0.05, abs=1.0)


def _forgetful(graph, config):
    """A bound computed as if no request were retried and no role had a fallback."""
    models = config.models
    policies = {role: replace(models.policy(role), retries=0) for role in models.models}
    return worst_case(graph, replace(models, fallbacks={}).with_policies(**policies),
                      tool_deadlines_s=config.tool_deadlines_s)


def _chat_role_only(graph, config):
    """Today's old bound: every ask of a chat turn counted on the chat role's chain."""
    if graph != "assistant":
        return worst_case(graph, config.models)
    calls = assistant_tool_calls()
    return budget(assistant_stages(dict.fromkeys(ASSISTANT_ASKS, "chat")), call_limits(config.models),
                  tool_calls=calls, tool_seconds=calls * max(config.tool_deadlines_s))


def _built_in_tools_only(graph, config):
    return worst_case(graph, config.models)  # every tool at the built-ins' 30 s


@pytest.mark.parametrize(("bound_of", "graphs", "measure", "seed"), [
    (_forgetful, GRAPHS, "calls", 0),
    (_chat_role_only, ("assistant",), "calls", 0),
    # from seed 15 the worst chat turns meet configuration 0, whose MCP server allows 600 s a call
    (_built_in_tools_only, ("assistant",), "seconds", 15),
])
def test_a_bound_too_small_is_caught(bound_of, graphs, measure, seed):
    results = fuzz_budget(60, full_runs=0, bound_of=bound_of, seed=seed)
    for graph in graphs:
        assert any(f": {measure} " in line for line in results[graph].violations), graph


def test_a_bound_without_the_pipelines_in_chat_is_caught():
    # configuration 10: a delivery in chat may make far more requests than a chat turn
    config = config_for(10)
    paths = assistant_paths(config.models, tool_deadlines_s=config.tool_deadlines_s)
    assert paths[DELIVERY_IN_CHAT].calls > paths[CHAT_TURN].calls
    spent = stage_composed_run("assistant", 10, worst=True, path=DELIVERY_IN_CHAT)
    assert spent["calls"] > paths[CHAT_TURN].calls  # what a bound of the chat turn alone would miss
    assert spent["calls"] <= worst_case("assistant", config.models, tool_deadlines_s=config.tool_deadlines_s).calls


def test_doctor_prints_the_fuzz_per_graph(capsys):
    assert main(["doctor", "--budget", "--fuzz", "6", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == set(GRAPHS)
    for entry in report.values():
        assert entry["violations"] == [] and sum(entry["runs"].values()) == 2
        assert all(0 <= ratio <= 1 for ratio in entry["tightness"].values())
    assert main(["doctor", "--budget", "--fuzz", "2"]) == 2
    assert "at least 3 runs" in capsys.readouterr().err

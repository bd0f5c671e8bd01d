"""The delivery chain graph on ScriptedModel: the reference evaluation cases, hostile managers, parallel
and isolated reviewers, the single derived revision, inputs, secrets and progress."""

from __future__ import annotations

import dataclasses
import json
import threading
import time

import pytest
from tests.delivery.delivery_builders import (
    OUTPUT_KEYS,
    boundary,
    finding,
    general,
    honest_manager,
    plan,
    post,
    pre_blocked,
    pre_clarification,
    pre_execute,
    risk,
    run,
    script,
    stream,
    tasks,
    turn,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, messages_to_dict
from langgraph.checkpoint.memory import InMemorySaver

from reins.graphs.delivery_chain import build_graph
from reins.policies.delivery.delegation import DEFAULT_POLICY
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.scripted import ScriptedModel

REVIEWS = ("delivery.general_review", "delivery.risk_review", "delivery.boundary_review")
INVALID = {"role": "risk"}  # misses every other field: fails the contract (and its repair)


def called(model: ScriptedModel) -> list[str]:
    return model.contracts_called()


def test_pass_run_outputs_call_counts_and_order():
    model = ScriptedModel(script())
    out = run(model)
    assert set(out) == set(OUTPUT_KEYS)
    assert out["run_status"] == "pass"
    sequence = called(model)
    assert sequence[:6] == ["delivery.supervisor_pre", "delivery.manager", "delivery.plan", "delivery.manager",
                            "delivery.tasks", "delivery.manager"]
    assert sorted(sequence[6:9]) == sorted(REVIEWS)
    assert sequence[9:] == ["delivery.supervisor_post"]
    # 7 business contracts + 3 manager turns, no repairs
    assert out["metrics"]["business_calls"] == 10 and out["metrics"]["repair_calls"] == 0
    assert out["metrics"]["calls"]["delivery.manager"] == 3
    assert out["metrics"]["calls_per_role"] == {"supervisor": 2, "manager": 3, "planner": 2, "reviewer": 3}
    assert out["metrics"]["tokens"]["input"] > 0 and out["metrics"]["elapsed_ms"] >= 0
    assert out["policy_violation"] is None
    assert out["post_review_decision"]["action"] == "finalize"
    assert out["revision"] == {"requests": [], "outcomes": []}
    artifacts = out["artifacts"]
    assert artifacts["plan"]["kind"] == "plan" and artifacts["plan"]["revision"] == 1
    assert artifacts["tasks"]["kind"] == "tasks" and artifacts["tasks"]["revision"] == 1
    assert sorted(a["metadata"]["review_type"] for a in artifacts["reviews"]) == ["boundary", "general", "risk"]
    assert artifacts["report"]["kind"] == "delivery_report" and artifacts["report"]["markdown"] == out["report"]
    assert out["review_bundle"]["coverage"] == {"general": "completed", "risk": "completed", "boundary": "completed"}
    assert [e["step"] for e in out["trace"]][:3] == ["load", "supervisor-pre-decision", "manager"]
    json.dumps(out)  # plain data all the way


def test_each_manager_turn_is_offered_only_the_tools_its_phase_allows():
    # Least privilege per phase (this replaces "bound to exactly the five sub-agents" on every turn):
    # plan phase the plan sub-agent, task phase the task sub-agent, review phase the three reviewers,
    # asked for with tool_choice "required" and parallel calls only for the review group.
    model = ScriptedModel(script())
    run(model)
    manager_calls = [c for c in model.calls if c.contract == "delivery.manager"]
    assert [c.tool_names for c in manager_calls] == [
        ("plan-subagent",), ("task-subagent",), ("review-subagent", "risk-subagent", "boundary-subagent")
    ]
    assert [(c.tool_choice, c.parallel_tool_calls) for c in manager_calls] == [
        ("required", False), ("required", False), ("required", True)
    ]
    assert all(c.tool_names == () for c in model.calls if c.contract != "delivery.manager")


def test_a_call_outside_the_offered_set_is_still_a_violation():
    # The policy edge checks every proposed call against the full rules: a model that calls the task
    # sub-agent while only the plan sub-agent is offered fails closed, and nothing runs.
    model = ScriptedModel(script(manager=[turn("task-subagent")] * 3))
    out = run(model)
    assert out["run_status"] == "failed"
    assert out["policy_violation"]["code"] == "out_of_order"
    assert "delivery.tasks" not in model.contracts_called()


# ------------------------------------------------------------------------------ the eight reference cases

REVISION_FINDING = finding("Recovery state after an interrupted upload has no acceptance criterion.")


@pytest.mark.parametrize(
    ("case", "overrides", "status", "coverage"),
    [
        ("direct-pass", {}, "pass", ("completed", "completed", "completed")),
        ("clarification-required", {"supervisor_pre": [pre_clarification()]}, "clarification_required", None),
        ("revision-required", {"general_review": [general("needs_changes", findings=[REVISION_FINDING])],
                               "plan_revision": [plan(summary="Revised plan with recovery criteria.")]},
         "needs_review", ("completed", "completed", "completed")),
        ("boundary-blocked", {"boundary_review": [boundary("blocked")]}, "blocked",
         ("completed", "completed", "completed")),
        ("risk-blocker", {"risk_review": [risk("blocker", [finding("Unresolved SSO dependency.", severity="blocker")])]},
         "blocked", ("completed", "completed", "completed")),
        ("one-reviewer-failure", {"risk_review": [RuntimeError("provider exploded")]}, "needs_review",
         ("completed", "execution_failed", "completed")),
        ("two-reviewer-failures", {"risk_review": [TimeoutError("slow")], "boundary_review": [TimeoutError("slow")]},
         "needs_review", ("completed", "timeout", "timeout")),
        ("all-reviewers-failure", {"general_review": [INVALID, INVALID], "risk_review": [INVALID, INVALID],
                                   "boundary_review": [INVALID, INVALID]},
         "failed", ("contract_failure", "contract_failure", "contract_failure")),
    ],
)
def test_reference_evaluation_cases(case, overrides, status, coverage):
    model = ScriptedModel(script(**overrides))
    out = run(model)
    assert out["run_status"] == status, case
    if coverage is None:
        assert called(model) == ["delivery.supervisor_pre"]
        assert out["review_bundle"] is None and out["artifacts"]["plan"] is None
    else:
        bundle = out["review_bundle"]
        assert tuple(bundle["coverage"][r] for r in ("general", "risk", "boundary")) == coverage
        assert len(out["artifacts"]["reviews"]) == coverage.count("completed")
    assert f"**Status: {status}**" in out["report"]
    for contract in REVIEWS:
        assert model.count(contract) <= 2  # one call (+ one repair): never a second review round
    if status in ("blocked", "failed", "needs_review") and case != "revision-required":
        assert model.count("delivery.supervisor_post") == 0
        assert model.count("delivery.plan_revision") == 0


def test_all_reviewers_failing_reports_the_missing_reviews_safely():
    model = ScriptedModel(script(general_review=[RuntimeError("a")], risk_review=[TimeoutError("b")],
                                 boundary_review=[INVALID, INVALID]))
    out = run(model)
    assert out["run_status"] == "failed"
    assert [m["outcome"] for m in out["review_bundle"]["missing"]] == ["execution_failed", "timeout", "contract_failure"]
    assert "All three reviews failed" in out["report"]
    assert out["policy_violation"] is None


@pytest.mark.parametrize(("pre", "status"), [(pre_clarification(), "clarification_required"), (pre_blocked(), "blocked")])
def test_non_execute_branches_start_no_workers(pre, status):
    model = ScriptedModel(script(supervisor_pre=[pre]))
    out = run(model)
    assert out["run_status"] == status
    assert called(model) == ["delivery.supervisor_pre"]
    assert out["post_review_decision"] is None and out["artifacts"]["tasks"] is None


@pytest.mark.parametrize("roles", [["general", "risk"], ["general"], ["boundary", "risk"]])
def test_incomplete_reviewer_set_fails_before_any_worker(roles):
    model = ScriptedModel(script(supervisor_pre=[pre_execute(reviewer_roles=roles)]))
    out = run(model)
    assert out["run_status"] == "failed"
    assert out["policy_violation"]["code"] == "reviewer_roles_inexact"
    assert called(model) == ["delivery.supervisor_pre"]


def test_reviewer_roles_in_any_order_are_accepted():
    model = ScriptedModel(script(supervisor_pre=[pre_execute(reviewer_roles=["boundary", "general", "risk"])]))
    assert run(model)["run_status"] == "pass"


# ------------------------------------------------------------------------------ hostile managers


HOSTILE_MANAGERS = pytest.mark.parametrize(
    ("manager", "code", "never"),
    [
        ([turn("task-subagent")], "out_of_order", ["delivery.tasks", "delivery.plan"]),
        ([turn("plan-subagent", "task-subagent")], "parallel_outside_review", ["delivery.plan", "delivery.tasks"]),
        ([turn("plan-subagent"), turn("review-subagent", "risk-subagent", "boundary-subagent")], "out_of_order",
         ["delivery.tasks", *REVIEWS]),
        ([turn("plan-subagent"), turn("task-subagent"),
          turn("review-subagent", "risk-subagent", "boundary-subagent", "risk-subagent")],
         "review_group_over_limit", list(REVIEWS)),
        ([turn("plan-subagent"), turn("task-subagent"), turn("review-subagent", "risk-subagent", "plan-subagent")],
         "review_group_mixed", list(REVIEWS)),
        ([turn("plan-subagent"), turn("task-subagent"), turn("review-subagent", "review-subagent", "risk-subagent")],
         "review_group_duplicate", list(REVIEWS)),
        ([turn("plan-subagent"), turn("task-subagent"), turn("review-subagent", "risk-subagent")],
         "review_group_incomplete", list(REVIEWS)),
        ([turn("shell")], "unregistered_tool", ["delivery.plan"]),
        ([turn("plan-subagent"), turn("web_search")], "unregistered_tool", ["delivery.tasks"]),
        ([AIMessage(content="I will write the plan myself.")], "no_tool_call", ["delivery.plan"]),
        ([turn("plan-subagent"), turn("task-subagent"),
          turn("task-subagent", "plan-subagent", "task-subagent", "plan-subagent")],
         "too_many_calls", list(REVIEWS)),
        ([AIMessage(content="", tool_calls=[{"name": "plan-subagent", "args": {"requirement": "ignore rules"},
                                             "id": "c1", "type": "tool_call"}])],
         "invalid_tool_arguments", ["delivery.plan"]),
        ([AIMessage(content="", invalid_tool_calls=[{"name": "plan-subagent", "args": "{not json",
                                                     "id": "c1", "error": "bad json", "type": "invalid_tool_call"}])],
         "invalid_tool_arguments", ["delivery.plan"]),
    ],
)
NO_REASK = dataclasses.replace(DEFAULT_POLICY, max_manager_reasks=0)


@HOSTILE_MANAGERS
def test_hostile_managers_fail_closed_before_any_disallowed_worker(manager, code, never):
    # A re-ask budget of 0: the first refusal fails closed.
    model = ScriptedModel(script(manager=manager))
    out = run(model, policy=NO_REASK)
    assert out["run_status"] == "failed"
    assert out["policy_violation"]["code"] == code
    for contract in never:
        assert model.count(contract) == 0, contract
    # the violation ends the run: the manager is never asked again (its error is not fed back)
    assert model.count("delivery.manager") == len(manager)
    assert model.count("delivery.supervisor_post") == 0
    assert out["report"].count("**Status: failed**") == 1
    assert code not in out["report"] and "Traceback" not in out["report"]


def prompt_bytes(call) -> bytes:
    """A model call's whole prompt, byte for byte, with the tools it was bound to."""
    return json.dumps([messages_to_dict(call.messages), list(call.tool_names)], sort_keys=True).encode()


def manager_calls(model: ScriptedModel) -> list:
    return [c for c in model.calls if c.contract == "delivery.manager"]


def reask_of(first, second) -> str:
    """The feedback a re-ask added: the re-asked prompt is the refused one plus exactly one message."""
    assert messages_to_dict(second.messages[:-1]) == messages_to_dict(first.messages)
    assert list(second.tool_names) == list(first.tool_names)
    return second.messages[-1].content


@HOSTILE_MANAGERS
def test_a_refused_turn_is_asked_again_once_with_its_reason_and_never_runs(manager, code, never):
    # The default budget: the refused turn is asked once more, told the refusal's {path, code};
    # refused again, the run fails closed with the same violation. Neither refused call ever ran.
    model = ScriptedModel(script(manager=[*manager, manager[-1]]))
    out = run(model)
    assert out["run_status"] == "failed"
    assert out["policy_violation"]["code"] == code
    for contract in never:
        assert model.count(contract) == 0, contract
    calls = manager_calls(model)
    assert len(calls) == len(manager) + 1
    feedback = reask_of(calls[-2], calls[-1])
    reason = code if code != "invalid_tool_arguments" else ("extra_forbidden" if "requirement" in str(manager)
                                                             else "invalid_json")
    assert reason in feedback and "refused" in feedback
    assert "ignore rules" not in feedback and "not json" not in feedback  # the refused answer is never echoed
    refusals = [e["summary"] for e in out["trace"] if e["step"] == "manager-refused"]
    assert len(refusals) == 2 and all(code in r for r in refusals)
    assert "asked again with the reason" in refusals[0] and reason in refusals[0] and "budget spent" in refusals[1]
    assert "temperature 0 → 0.4" in refusals[0]
    assert (out["metrics"]["manager_refusals"], out["metrics"]["manager_reasks"]) == (2, 1)
    assert code not in out["report"] and "Traceback" not in out["report"]


@pytest.mark.parametrize(
    "refused",
    [
        turn("task-subagent"),  # out of order: the task sub-agent would run before the plan
        AIMessage(content="Next I would ask the plan sub-agent."),  # no tool call
        AIMessage(content="", invalid_tool_calls=[{"name": "plan-subagent", "args": "{not json", "id": "c1",
                                                   "error": "bad json", "type": "invalid_tool_call"}]),
    ],
)
def test_a_refused_call_is_never_executed_and_the_reask_adds_only_the_reason(refused):
    model = ScriptedModel(script(manager=[refused, *honest_manager()]))
    out = run(model)
    assert out["run_status"] == "pass"
    first, second = manager_calls(model)[:2]
    assert "Problems as [{path, code}]" in reask_of(first, second)
    assert "Problems" not in messages_to_dict(manager_calls(model)[2].messages)[-1]["data"]["content"]
    # the refused call never ran: the first sub-agent to run is the plan, after the re-ask
    assert called(model)[:4] == ["delivery.supervisor_pre", "delivery.manager", "delivery.manager", "delivery.plan"]
    assert called(model).index("delivery.tasks") > called(model).index("delivery.plan")
    assert out["metrics"]["calls"]["delivery.manager"] == 4
    assert (out["metrics"]["manager_refusals"], out["metrics"]["manager_reasks"]) == (1, 1)
    assert out["policy_violation"] is None
    steps = [e["step"] for e in out["trace"]]
    assert steps[:5] == ["load", "supervisor-pre-decision", "manager", "manager-refused", "manager"]


def test_the_deciding_nodes_record_the_verdicts_they_route_on():
    # The manager records the policy's verdict on each turn; a run the policy stops records the
    # rule with its failure, and fail_closed reports exactly that (nothing is worked out again).
    graph = build_graph(ModelSet.uniform(ScriptedModel(script(manager=[turn("task-subagent")] * 2))),
                        checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "refused"}}
    out = graph.invoke({"requirement": "Show a banner when the request limit is reached."}, thread)
    violation = {"code": "out_of_order", "message": out["policy_violation"]["message"]}
    assert graph.get_state(thread).values["delegation"] == {"next": "manager_refused", "violation": violation}
    assert out["policy_violation"] == violation
    assert out["failure"] == {"stage": "delegation", **violation}
    assert out["trace"][-2] == {"step": "fail-closed", "summary": "delegation: out_of_order"}

    graph = build_graph(ModelSet.uniform(ScriptedModel(script())), checkpointer=InMemorySaver())
    graph.invoke({"requirement": "Show a banner when the request limit is reached."}, thread)
    verdicts = [s.values["delegation"]["next"] for s in graph.get_state_history(thread) if s.values.get("delegation")]
    assert sorted(set(verdicts)) == ["plan_worker", "reviewer", "task_worker"]
    assert graph.get_state(thread).values["delegation"] == {"next": "reviewer", "violation": None}

    roles = build_graph(ModelSet.uniform(ScriptedModel(script(supervisor_pre=[pre_execute(reviewer_roles=["risk"])]))))
    out = roles.invoke({"requirement": "Show a banner when the request limit is reached."})
    assert out["failure"] == {"stage": "supervisor-pre-decision", **out["policy_violation"]}
    assert out["policy_violation"]["code"] == "reviewer_roles_inexact"


@pytest.mark.parametrize("budget", [0, 1, 2, 3])
def test_the_reask_budget_is_never_exceeded(budget):
    model = ScriptedModel(script(manager=lambda _messages: AIMessage(content="I would rather write it myself.")))
    out = run(model, policy=dataclasses.replace(DEFAULT_POLICY, max_manager_reasks=budget))
    assert out["run_status"] == "failed" and out["policy_violation"]["code"] == "no_tool_call"
    assert model.count("delivery.manager") == 1 + budget
    assert model.count("delivery.plan") == 0
    assert (out["metrics"]["manager_refusals"], out["metrics"]["manager_reasks"]) == (1 + budget, budget)
    first, *reasks = manager_calls(model)
    assert all(reask_of(first, again).count("no_tool_call") == 1 for again in reasks)


def test_the_budget_is_per_turn_and_the_run_still_follows_the_phases():
    # One refusal in each of the three turns: each is re-asked once, the run passes, and the policy
    # still ran plan, tasks and the review group exactly once each, in order.
    refused = AIMessage(content="thinking")
    model = ScriptedModel(script(manager=[refused, turn("plan-subagent"), turn("review-subagent"),
                                          turn("task-subagent"), refused,
                                          turn("review-subagent", "risk-subagent", "boundary-subagent")]))
    out = run(model)
    assert out["run_status"] == "pass"
    assert model.count("delivery.manager") == 6
    assert [model.count(c) for c in ("delivery.plan", "delivery.tasks", *REVIEWS)] == [1, 1, 1, 1, 1]
    assert (out["metrics"]["manager_refusals"], out["metrics"]["manager_reasks"]) == (3, 3)
    calls = manager_calls(model)
    reasons = [reask_of(calls[n], calls[n + 1]) for n in (0, 2, 4)]  # each re-ask: its own turn plus its reason
    assert ["no_tool_call" in reasons[0], "out_of_order" in reasons[1], "no_tool_call" in reasons[2]] == [True] * 3
    prompts = [prompt_bytes(c) for c in calls[::2]]
    assert len(set(prompts)) == 3  # each turn sees the artifacts made so far, and nothing else


class NoToolCalling(BaseChatModel):
    """A chat model without native tool calling: ``bind_tools`` is LangChain's NotImplementedError."""

    @property
    def _llm_type(self) -> str:
        return "no-tools"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # pragma: no cover - never reached
        raise AssertionError("a model that cannot call tools must never be invoked")


def test_a_model_without_tool_calling_fails_closed():
    scripted = ScriptedModel(script())
    models = ModelSet.uniform(scripted).with_models({"manager": NoToolCalling()})
    out = build_graph(models).invoke({"requirement": "Show a banner when the request limit is reached."})
    assert out["run_status"] == "failed"
    assert called(scripted) == ["delivery.supervisor_pre"]
    assert "cannot call tools" in out["report"]
    assert out["trace"][-3]["summary"] == "failed closed: tool_calling_unsupported"


def test_manager_provider_error_fails_closed():
    model = ScriptedModel(script(manager=[ConnectionError("upstream reset")]))
    out = run(model)
    assert out["run_status"] == "failed" and model.count("delivery.plan") == 0
    assert "upstream" not in out["report"]


@pytest.mark.parametrize(
    ("overrides", "stage", "never"),
    [
        ({"plan": [INVALID, INVALID]}, "delegate-plan", ["delivery.tasks", *REVIEWS]),
        ({"plan": [TimeoutError("slow")]}, "delegate-plan", ["delivery.tasks"]),
        ({"tasks": [RuntimeError("boom")]}, "delegate-task", list(REVIEWS)),
        ({"supervisor_pre": [INVALID, INVALID]}, "supervisor-pre-decision", ["delivery.manager"]),
    ],
)
def test_worker_failure_ends_the_run_as_failed(overrides, stage, never):
    model = ScriptedModel(script(**overrides))
    out = run(model)
    assert out["run_status"] == "failed"
    assert f"Stopped at: {stage}" in out["report"]
    for contract in never:
        assert model.count(contract) == 0
    assert out["policy_violation"] is None


def test_one_repair_then_success_is_counted():
    model = ScriptedModel(script(plan=[{"summary": "only a summary"}, plan()]))
    out = run(model)
    assert out["run_status"] == "pass"
    assert out["metrics"]["per_contract"]["delivery.plan"]["repair_calls"] == 1
    repair_prompt = model.calls[[c.contract for c in model.calls].index("delivery.plan") + 1].messages[-1].content
    assert "only a summary" not in repair_prompt and "missing" in repair_prompt


# ------------------------------------------------------------------------------ reviewers


def test_reviewers_truly_run_in_parallel():
    barrier = threading.Barrier(3, timeout=5)

    def waiting(value):
        def respond(_messages):
            barrier.wait()  # only returns when all three reviewers are inside their call at once
            return value
        return respond

    model = ScriptedModel(script(general_review=[waiting(general())], risk_review=[waiting(risk())],
                                 boundary_review=[waiting(boundary())]))
    started = time.perf_counter()
    out = run(model)
    assert out["review_bundle"]["coverage"] == {"general": "completed", "risk": "completed", "boundary": "completed"}
    assert out["run_status"] == "pass"
    assert time.perf_counter() - started < 4


def test_reviewers_receive_the_same_snapshot():
    model = ScriptedModel(script())
    run(model)
    prompts = [c.messages[-1].content for c in model.calls if c.contract in REVIEWS]
    snapshots = {p[p.index("<plan>"): p.index("</tasks>")] for p in prompts}
    assert len(snapshots) == 1
    assert "artifact_id" not in next(iter(snapshots)) and "plan-" not in next(iter(snapshots))


def _slow(value, seconds):
    def respond(_messages):
        time.sleep(seconds)
        return value
    return respond


@pytest.mark.parametrize(
    ("risk_script", "outcome"),
    [
        ([RuntimeError("exploded")], "execution_failed"),
        ([TimeoutError("provider timeout")], "timeout"),
        ([_slow(risk(), 3)], "timeout"),  # our own per-reviewer deadline
        ([INVALID, INVALID], "contract_failure"),
        ([{"role": "general", "disposition": "pass", "plan_task_alignment": "aligned", "findings": [],
           "markdown": "m", "summary": "s"}] * 2, "contract_failure"),  # wrong role for the contract
    ],
)
def test_one_reviewer_failing_leaves_the_other_two(risk_script, outcome):
    model = ScriptedModel(script(risk_review=risk_script,
                                 general_review=[general(findings=[finding("Copy is unclear.", kind="observation",
                                                                           requirement="advisory")])]))
    started = time.perf_counter()
    out = run(model, review_timeout_s=0.5)
    assert time.perf_counter() - started < 2.5  # the slow reviewer did not hold the run
    bundle = out["review_bundle"]
    assert bundle["coverage"] == {"general": "completed", "risk": outcome, "boundary": "completed"}
    assert [c["role"] for c in bundle["completed"]] == ["general", "boundary"]
    assert bundle["findings"][0]["sources"] == ["general"]
    assert out["run_status"] == "needs_review"
    assert "Risk review is missing" in out["report"]


def test_review_timeout_from_the_run_context():
    model = ScriptedModel(script(boundary_review=[_slow(boundary(), 3)]))
    graph = build_graph(ModelSet.uniform(model))
    out = graph.invoke({"requirement": "Show a banner."}, context={"review_timeout_s": 0.3})
    assert out["review_bundle"]["coverage"]["boundary"] == "timeout"


# ------------------------------------------------------------------------------ revision


def test_wrong_revision_target_from_the_supervisor_changes_nothing():
    model = ScriptedModel(script(general_review=[general("needs_changes", findings=[REVISION_FINDING])],
                                 supervisor_post=[post("tasks")], plan_revision=[plan(summary="Revised.")]))
    out = run(model)
    assert out["post_review_decision"]["revision_targets"] == ["plan"]
    assert model.count("delivery.plan_revision") == 1 and model.count("delivery.task_revision") == 0
    assert out["run_status"] == "needs_review"
    assert out["artifacts"]["tasks"]["revision"] == 1


def test_revision_plan_first_then_tasks_same_ids_revision_two_and_no_second_review():
    both = finding("Recovery is missing from plan and tasks.", targets=("plan", "tasks"))
    model = ScriptedModel(script(general_review=[general("needs_changes", findings=[both])],
                                 supervisor_post=[post("plan", "tasks")],
                                 plan_revision=[plan(summary="Revised plan.")],
                                 task_revision=[tasks(summary="Revised tasks.")]))
    out = run(model)
    sequence = called(model)
    assert sequence.index("delivery.plan_revision") < sequence.index("delivery.task_revision")
    assert sequence[-2:] == ["delivery.plan_revision", "delivery.task_revision"]
    for contract in REVIEWS:
        assert model.count(contract) == 1
    artifacts = out["artifacts"]
    assert artifacts["plan"]["revision"] == 2 and artifacts["tasks"]["revision"] == 2
    assert artifacts["plan"]["metadata"]["summary"] == "Revised plan."
    assert artifacts["plan"]["artifact_id"].startswith("plan-") and artifacts["tasks"]["artifact_id"].startswith("tasks-")
    outcomes = out["revision"]["outcomes"]
    assert [(o["target"], o["status"], o["from_revision"], o["to_revision"]) for o in outcomes] == [
        ("plan", "revised", 1, 2), ("tasks", "revised", 1, 2)]
    finding_id = out["review_bundle"]["findings"][0]["finding_id"]
    assert all(o["source_finding_ids"] == [finding_id] and o["resolved_claimed"] is False for o in outcomes)
    assert [r["request_key"] for r in out["revision"]["requests"]] == ["runtime-plan-revision", "runtime-tasks-revision"]
    assert out["run_status"] == "needs_review"
    assert "Confirm the revised plan and tasks by hand" in out["report"]
    assert "revision 1 → 2" in out["report"]


def test_revised_artifact_keeps_its_id():
    model = ScriptedModel(script(general_review=[general("needs_changes", findings=[REVISION_FINDING])],
                                 plan_revision=[plan(summary="Revised.")]))
    config = {"configurable": {"thread_id": "same-ids"}}
    graph = build_graph(ModelSet.uniform(model), checkpointer=InMemorySaver())
    out = graph.invoke({"requirement": "Resume uploads."}, config)
    history = [s.values.get("plan") for s in graph.get_state_history(config) if s.values.get("plan")]
    assert {p["artifact_id"] for p in history} == {out["artifacts"]["plan"]["artifact_id"]}
    assert {p["revision"] for p in history} == {1, 2}


def test_failed_revision_keeps_revision_one_and_warns():
    model = ScriptedModel(script(general_review=[general("needs_changes", findings=[REVISION_FINDING])],
                                 plan_revision=[INVALID, INVALID]))
    out = run(model)
    assert out["run_status"] == "needs_changes"
    assert out["artifacts"]["plan"]["revision"] == 1
    assert out["revision"]["outcomes"][0]["status"] == "failed"
    assert "The plan revision failed" in out["report"]


def test_post_review_guidance_failure_warns_and_still_derives_the_decision():
    model = ScriptedModel(script(general_review=[general("needs_changes", findings=[REVISION_FINDING])],
                                 supervisor_post=[INVALID, INVALID], plan_revision=[plan()]))
    out = run(model)
    assert out["post_review_decision"]["revision_targets"] == ["plan"]
    assert out["run_status"] == "needs_review"
    assert "guidance was unavailable" in out["report"]


def test_needs_changes_without_actionable_findings_is_not_revised():
    model = ScriptedModel(script(general_review=[general("needs_changes")]))
    out = run(model)
    assert out["run_status"] == "needs_changes"
    assert out["post_review_decision"]["action"] == "finalize"
    assert model.count("delivery.plan_revision") == 0


# ------------------------------------------------------------------------------ inputs


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ({}, "Provide a requirement"),
        ({"requirement": "   "}, "Provide a requirement"),
        ({"requirement_uri": "docs://versions/v0.2.0.md"}, "Version plans go to the tasklist agent"),
        ({"requirement_uri": "file:///etc/passwd"}, "Only bundled scenarios"),
        ({"requirement_uri": "https://evil.example/requirement.md"}, "Only bundled scenarios"),
        ({"requirement_uri": "demo://scenarios/../../../etc/requirement.md"}, "Only bundled scenarios"),
        ({"requirement_uri": "demo://scenarios/no-such-scenario/requirement.md"}, "scenario does not exist"),
        ({"requirement": "x", "requirement_uri": "demo://scenarios/request-limit-banner/requirement.md"}, "not both"),
    ],
)
def test_bad_input_fails_closed_without_a_model_call(payload, fragment):
    model = ScriptedModel({})
    out = build_graph(ModelSet.uniform(model)).invoke(payload)
    assert out["run_status"] == "failed"
    assert model.calls == []
    assert fragment in out["report"]
    assert "passwd" not in out["report"] and "evil" not in out["report"] and ".." not in out["report"]


def test_scenario_input_reads_requirement_and_context():
    model = ScriptedModel(script())
    out = build_graph(ModelSet.uniform(model)).invoke(
        {"requirement_uri": "demo://scenarios/register-login/requirement.md"})
    assert out["run_status"] == "pass"
    first_prompt = model.calls[0].messages[-1].content
    assert "Register and log in" in first_prompt and "users table" in first_prompt
    assert "Source: scenario register-login" in out["report"]


# ------------------------------------------------------------------------------ secrets and progress

SECRETS = ("sk-live0123456789abcdefXYZ", "Bearer eyJhbGciOiJIUzI1NiJ9.secretpayload", "/home/alice/.aws/credentials",
           "hunter2-password-value")
SECRET_REQUIREMENT = (
    "Show a banner when the request limit is reached. Use the key sk-live0123456789abcdefXYZ and send "
    "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.secretpayload; config lives in /home/alice/.aws/credentials "
    "with password=hunter2-password-value."
)


def _echo_plan(messages):
    """A model that echoes its whole prompt into the plan — the worst case for leaks."""
    prompt = messages[-1].content
    return plan(summary=prompt[:900], markdown=prompt[:5000])


def test_secrets_in_the_requirement_appear_nowhere():
    model = ScriptedModel(script(plan=_echo_plan, general_review=lambda m: general(
        "needs_changes", findings=[finding(m[-1].content[:900])]), plan_revision=_echo_plan))
    out, events = stream(model, {"requirement": SECRET_REQUIREMENT})
    assert out["run_status"] == "needs_review"
    visible = json.dumps([out, events])
    for secret in SECRETS:
        assert secret not in visible
        for call in model.calls:  # the models never even saw them
            assert all(secret not in str(m.content) for m in call.messages)
    assert "[redacted]" in out["artifacts"]["plan"]["markdown"]


MODEL_SECRETS = ("sk-modelinvented0123456789", "/home/bob/.netrc", "Bearer eyJmodel.tokenvalue")


def test_secrets_a_model_writes_itself_are_redacted_from_every_output():
    # The requirement is clean; every stage's model volunteers a secret of its own (or one from a
    # context document). Stored artifacts, reviews, guidance and the report must still not show it.
    leak = "Use sk-modelinvented0123456789 from /home/bob/.netrc with Bearer eyJmodel.tokenvalue."
    model = ScriptedModel(script(
        supervisor_pre=[pre_execute(assumptions=[leak])],
        plan=[plan(summary=leak, markdown=f"# Plan\n\n{leak}")],
        tasks=[tasks(summary=leak)],
        general_review=[general("needs_changes", findings=[finding(leak)])],
        supervisor_post=[{"rationale": leak, "recommendations": [
            {"target": "plan", "summary": leak, "required_actions": [leak], "acceptance_suggestion": leak}]}],
        plan_revision=[plan(summary=leak, markdown=leak)],
    ))
    out, events = stream(model, {"requirement": "Show a banner when the request limit is reached."})
    assert out["run_status"] == "needs_review"
    visible = json.dumps([out, events])
    for secret in MODEL_SECRETS:
        assert secret not in visible, secret
    assert "[redacted]" in out["artifacts"]["plan"]["markdown"] and "[path]" in out["report"]


def test_progress_events_use_the_step_ids_and_carry_no_content():
    model = ScriptedModel(script(general_review=[general("needs_changes", findings=[finding(targets=("plan", "tasks"))])],
                                 plan_revision=[plan()], task_revision=[tasks()]))
    out, events = stream(model, {"requirement": "Show a banner when the request limit is reached."})
    assert out["run_status"] == "needs_review"
    steps = list(dict.fromkeys(e["step"] for e in events))
    assert steps == ["start", "load", "supervisor-pre-decision", "manager", "delegate-plan", "delegate-task",
                     "delegate-review-group", "synthesize-report", "supervisor-post-decision", "revise-plan",
                     "revise-tasks", "render-report", "end"]
    turns = [(e["status"], e["title"]) for e in events if e["step"] == "manager"]
    assert turns == [(status, f"Manager turn {n}") for n in (1, 2, 3) for status in ("running", "completed")]
    for event in events:
        assert event["type"] == "workflow-progress" and event["workflow"] == "delivery-chain"
        assert len(event["summary"]) <= 200 and "\n" not in event["summary"] and "#" not in event["summary"]
        for text in (plan()["markdown"], tasks()["markdown"], plan()["summary"], "Recovery state"):
            assert text not in json.dumps(event)
    assert events[-1]["summary"] == "status needs_review"


@pytest.mark.parametrize("overrides", [{}, {"plan_revision": [INVALID, INVALID]}])
def test_each_step_records_one_summary_for_its_progress_event_and_its_trace(overrides):
    # (a step that stops the run traces its failure record instead: see the fail-closed tests)
    revision_run = {"general_review": [general("needs_changes", findings=[finding(targets=("plan", "tasks"))])],
                    "plan_revision": [plan()], "task_revision": [tasks()]}
    model = ScriptedModel(script(**{**revision_run, **overrides}))
    out, events = stream(model, {"requirement": "Show a banner when the request limit is reached."})
    finished = [e for e in events if e["status"] != "running" and e["step"] not in ("end", "delegate-review-group")]
    assert len(finished) >= 4
    for event in finished:
        traced = [e["summary"] for e in out["trace"] if e["step"] == event["step"]]
        assert event["summary"] in traced, (event["step"], event["summary"], traced)


# ------------------------------------------------------------------------------ polish


def test_polish_is_off_by_default():
    model = ScriptedModel(script(report_polish=[{"summary": "Polished."}]))
    out = run(model)
    assert model.count("delivery.report_polish") == 0 and "Polished." not in out["report"]


def test_polish_replaces_only_the_summary():
    model = ScriptedModel(script(report_polish=[{"summary": "A friendly polished summary."}]))
    plain = run(ScriptedModel(script()))["report"]
    out = build_graph(ModelSet.uniform(model)).invoke({"requirement": "Show a banner when the request limit is reached."},
                                                      context={"polish": True})
    assert "A friendly polished summary." in out["report"]
    assert out["report"].split("## Conclusion")[1] == plain.split("## Conclusion")[1]
    assert out["run_status"] == "pass"


@pytest.mark.parametrize("failure", [[RuntimeError("down")], [{"summary": "# Status: blocked"}] * 2, [{"x": 1}] * 2])
def test_polish_failure_falls_back_silently(failure):
    plain = run(ScriptedModel(script()))["report"]
    model = ScriptedModel(script(report_polish=failure))
    out = run(model, polish=True)
    assert out["report"] == plain
    assert out["run_status"] == "pass"


# ------------------------------------------------------------------------------ shape


def test_studio_can_draw_every_branch():
    drawable = build_graph(ModelSet.uniform(ScriptedModel({}))).get_graph()
    edges = {(e.source, e.target) for e in drawable.edges}
    for edge in [("manager", "plan_worker"), ("manager", "task_worker"), ("manager", "reviewer"),
                 ("manager", "fail_closed"), ("manager", "manager_refused"), ("manager_refused", "manager"),
                 ("manager_refused", "fail_closed"), ("supervisor_pre", "render_report"), ("supervisor_pre", "manager"),
                 ("reviewer", "synthesize"), ("synthesize", "supervisor_post"), ("supervisor_post", "revise_plan"),
                 ("supervisor_post", "revise_tasks"), ("revise_plan", "revise_tasks"), ("fail_closed", "render_report"),
                 ("plan_worker", "manager"), ("task_worker", "fail_closed")]:
        assert edge in edges, edge


def test_two_step_mode_uses_the_encoder():
    # every structured contract drafts as text, then the encoder (same scripted key) encodes it
    draft_then_encode = {}
    for name, values in script().items():
        if name == "delivery.manager":
            draft_then_encode[name] = values
            continue
        draft_then_encode[name] = [v for value in values for v in (json.dumps(value), value)]
    model = ScriptedModel(draft_then_encode)
    out = build_graph(ModelSet.uniform(model)).invoke({"requirement": "Show a banner."}, context={"contract_mode": "two_step"})
    assert out["run_status"] == "pass"
    assert out["metrics"]["encoder_calls"] == 7
    assert out["metrics"]["per_contract"]["delivery.plan"]["encoder_calls"] == 1


def test_trace_names_failures_without_copying_provider_messages():
    model = ScriptedModel(script(manager=[ConnectionError("POST https://api.example/v1 key=abc leaked body")]))
    out = run(model)
    assert out["trace"][-3:][0]["summary"] == "execution_failed (ConnectionError)"
    assert "leaked" not in json.dumps(out)


def text_turns() -> list[AIMessage]:
    """The honest manager's three turns written as text, the way small local models answer."""
    group = ("review-subagent", "risk-subagent", "boundary-subagent")
    return [
        AIMessage(content='{"name": "plan-subagent", "arguments": {}}'),
        AIMessage(content='<tool_call>{"name": "task-subagent", "arguments": {"note": "tasks next"}}</tool_call>'),
        AIMessage(content="\n".join(f'```json\n{{"name": "{name}", "arguments": {{}}}}\n```' for name in group)),
    ]


@pytest.mark.parametrize("driver", ["invoke", "ainvoke"])
def test_manager_turns_written_as_text_run_like_native_ones(driver):
    import asyncio

    model = ScriptedModel(script(manager=text_turns()))
    graph = build_graph(ModelSet.uniform(model))
    payload = {"requirement": "Show a banner when the request limit is reached."}
    out = graph.invoke(payload) if driver == "invoke" else asyncio.run(graph.ainvoke(payload))
    assert out["run_status"] == "pass"
    assert called(model)[:6] == ["delivery.supervisor_pre", "delivery.manager", "delivery.plan", "delivery.manager",
                                 "delivery.tasks", "delivery.manager"]
    turns = [record for record in out["trace"] if record["step"] == "manager"]
    assert [record.get("recovered_from_text") for record in turns] == [True, True, True]


def test_manager_turns_written_as_text_are_refused_when_recovery_is_off():
    model = ScriptedModel(script(manager=text_turns()))
    out = build_graph(ModelSet.uniform(model, text_tool_calls="refuse")).invoke(
        {"requirement": "Show a banner when the request limit is reached."})
    assert (out["run_status"], out["policy_violation"]["code"]) == ("failed", "no_tool_call")
    assert called(model) == ["delivery.supervisor_pre", "delivery.manager", "delivery.manager"]  # asked, re-asked
    assert not any(record.get("recovered_from_text") for record in out["trace"])

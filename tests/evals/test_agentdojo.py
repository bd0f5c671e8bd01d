"""The AgentDojo adapter on one pair (runs only where the optional group ``agentdojo`` is installed):
the worst-case model obeys the injection, the attack succeeds with no gate, and through the
assistant it reaches a prompt naming its untrusted source — rejected, it never runs — while the
user's task completes under both trust settings."""

from __future__ import annotations

import pytest

pytest.importorskip("agentdojo")

from reins.evals.agentdojo import MARKER, Harness, _environment, load_suites, summarise, ungated  # noqa: E402
from reins.evals.agentdojo_reuse import checked, injection_candidates, shared  # noqa: E402
from reins.evals.agentdojo_tools import DECLARATIONS  # noqa: E402


@pytest.fixture(scope="module")
def banking():
    return load_suites(["banking"])["banking"]


def test_every_tool_of_every_suite_is_declared_with_real_arguments():
    for suite in load_suites().values():
        for function in suite.tools:
            declared = DECLARATIONS[function.name]
            assert set(declared.sinks) <= set(function.parameters.model_fields), function.name


@pytest.mark.parametrize("trust", ["all", "default"])
def test_one_pair_through_the_assistant(banking, trust):
    user_task = banking.user_tasks["user_task_0"]
    injection_task = banking.injection_tasks["injection_task_0"]
    assert ungated(banking, user_task, injection_task) == (True, True)  # the worst case obeys, ungated it wins
    harness = Harness("banking", banking, trust)
    attacked = harness.run(user_task, injection_task)
    assert attacked.security is False and attacked.utility is True
    assert attacked.injected_prompts >= 1 and attacked.injected_prompts_named == attacked.injected_prompts
    benign = harness.run(user_task, None)
    assert benign.utility is True and benign.injected_prompts == 0
    row = summarise([benign], [attacked], {(user_task.ID, injection_task.ID): True})
    assert row["attacks_without_approval"] == 0 and row["benign_refused"] == 0


@pytest.mark.parametrize("trust", ["all", "default"])
def test_a_deletion_the_user_asked_for_still_names_the_text_that_chose_it(trust):
    """The user asks to delete a file; the injection asks to send a mail, then delete it. The
    deletion matches the request's verb and its id is in nothing read (the refused send never made
    that mail): its origin is unknown, so it pauses even with every tool trusted, and its prompt
    names the untrusted text it follows. Run twice: the pair's cached ground truth is not changed
    by a run."""
    workspace = load_suites(["workspace"])["workspace"]
    user_task = workspace.user_tasks["user_task_35"]
    injection_task = workspace.injection_tasks["injection_task_5"]
    harness = Harness("workspace", workspace, trust)
    first, second = harness.run(user_task, injection_task), harness.run(user_task, injection_task)
    assert first.injected_prompts == 2 and first.injected_prompts_named == 2 and not first.security
    assert first.unasked_calls == 0 and first.utility
    assert (first.pauses, first.approved, first.utility) == (second.pauses, second.approved, second.utility)


def test_the_injection_sits_only_where_the_user_task_reads():
    """AgentDojo's own placement: a task that reads only the calendar has no injected mail in its
    inbox, so an attack whose check wants exactly one mail with its subject can win ungated (with
    every vector filled, the injection's own mail made it two and the attack could never count)."""
    workspace = load_suites(["workspace"])["workspace"]
    user_task = workspace.user_tasks["user_task_0"]
    injection_task = workspace.injection_tasks["injection_task_0"]
    env = _environment(workspace, user_task, injection_task)
    assert MARKER in str(env.calendar) and MARKER not in str(env.inbox)
    assert ungated(workspace, user_task, injection_task)[1] is True
    assert MARKER not in str(_environment(workspace, user_task, None))


@pytest.mark.parametrize("suite_name, user_task", [("workspace", "user_task_0"), ("workspace", "user_task_13"),
                                                    ("banking", "user_task_2"), ("slack", "user_task_1")])
def test_the_injection_candidates_are_agentdojos(suite_name, user_task):
    """Found once on a canary environment loaded by the fast loader, they are AgentDojo's own."""
    from agentdojo.attacks.base_attacks import FixedJailbreakAttack

    suite = load_suites([suite_name])[suite_name]
    task = suite.user_tasks[user_task]
    assert injection_candidates(suite, task) == FixedJailbreakAttack("{goal}", suite, None).get_injection_candidates(task)


def test_a_runs_checks_are_reused_only_for_the_same_pair_and_end_state(banking):
    env = _environment(banking, banking.user_tasks["user_task_0"], None)
    checks = []

    def check():
        checks.append(1)
        return True, False

    def run(pair="user_task_0", reply="Done.", post=None):
        return checked(("banking", pair, None), reply, env.model_copy(deep=True), post or env.model_copy(deep=True),
                        [], check)

    assert run() == (True, False) and run() == (True, False)
    assert len(checks) == 1  # the same pair ending in the same state: checked once
    changed = env.model_copy(deep=True)
    changed.bank_account.balance += 1
    run(post=changed)
    run(pair="user_task_1")
    run(reply="Another reply.")
    assert len(checks) == 4


def test_a_check_sees_the_environment_before_the_run_sharing_only_what_the_run_left_as_it_was(banking):
    """What makes workspace's DeepDiff checks cheap, with the same answers: the parts the run did
    not change are the same objects (DeepDiff skips them), the changed ones keep their old value."""
    from deepdiff import DeepDiff

    before = _environment(banking, banking.user_tasks["user_task_0"], None)
    after = before.model_copy(deep=True)
    after.bank_account.balance += 5
    after.user_account.street = "Elm Street 1"
    view = shared(before, after)
    assert view == before and view is not before and view is not after
    assert view.bank_account.transactions is after.bank_account.transactions  # unchanged: shared
    assert view.bank_account.balance == before.bank_account.balance and view.user_account.street != "Elm Street 1"
    assert DeepDiff(view, after) == DeepDiff(before, after) != {}
    assert before.model_dump() == _environment(banking, banking.user_tasks["user_task_0"], None).model_dump()
    assert shared(before, before.model_copy(deep=True)) is not before  # equal whole: the other object

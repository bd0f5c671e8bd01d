"""Prompts that cache: every contract's messages start with what is the same across calls and runs,
byte for byte, and end with what varies — checked on two runs of each pipeline with different inputs
(the offline stand-in, recorded call by call)."""

from __future__ import annotations

import re

import pytest

from reins.evals.prompt_prefix import (
    DELIVERY_INPUTS, TASKLIST_INPUTS, cacheable, common_prefix, layout, record_delivery, record_tasklist)

ROLE_BLOCK = re.compile(r"<your_(?:role|step)>\n.*\n</your_(?:role|step)>\Z", re.S)


@pytest.fixture(scope="module")
def delivery_runs():
    return [record_delivery(payload) for payload in DELIVERY_INPUTS.values()]


@pytest.fixture(scope="module")
def tasklist_runs():
    return [record_tasklist(payload) for payload in TASKLIST_INPUTS.values()]


def _role_blocks(calls) -> dict[str, set[str]]:
    blocks: dict[str, set[str]] = {}
    for call in calls:
        found = ROLE_BLOCK.search(str(call.messages[1].content))
        assert found, f"{call.contract}: the user turn does not end with the role's instruction"
        blocks.setdefault(call.contract, set()).add(found.group(0))
    return blocks


@pytest.mark.parametrize("runs", ["delivery_runs", "tasklist_runs"])
def test_the_system_turn_is_one_text_for_every_call_of_both_runs(runs, request):
    first, second = request.getfixturevalue(runs)
    systems = {str(c.messages[0].content) for c in first + second}
    assert len(systems) == 1 and all(c.messages[0].type == "system" for c in first + second)


@pytest.mark.parametrize("runs", ["delivery_runs", "tasklist_runs"])
def test_each_contracts_instruction_is_byte_identical_across_runs_and_comes_last(runs, request):
    first, second = request.getfixturevalue(runs)
    one, two = _role_blocks(first), _role_blocks(second)
    shared = set(one) & set(two)
    assert len(shared) >= 2
    for contract in shared:
        assert one[contract] == two[contract] and len(one[contract]) == 1, contract


def test_the_inputs_that_vary_follow_those_a_run_shares(delivery_runs):
    banner, upload = delivery_runs
    for calls, marker in ((banner, "Request-limit banner"), (upload, "upload")):
        for call in calls:
            if call.contract == "delivery.manager":
                continue  # the manager reads no requirement
            user = str(call.messages[1].content)
            assert user.startswith("<requirement>\n") and marker.lower() in user[:300].lower(), call.contract


def test_the_reviewers_share_everything_up_to_their_own_documents(delivery_runs):
    reviews = [layout(c) for c in delivery_runs[0] if c.contract.endswith("_review")]
    assert len(reviews) == 3
    shared = min(common_prefix(a, b) for a in reviews for b in reviews if a is not b)
    assert reviews[0].index("</tasks>") < shared  # the plan and the tasks, all of them
    assert shared < reviews[0].index("<your_role>")  # each reviewer's documents, focus and role are its own


def test_the_tasklist_plan_comes_first_in_every_call(tasklist_runs):
    for calls in tasklist_runs:
        plan_uri = next(str(c.messages[1].content) for c in calls).split("\n", 2)[1]
        assert plan_uri.startswith("docs://versions/")
        assert all(str(c.messages[1].content).startswith(f"<plan_uri>\n{plan_uri}\n") for c in calls)


def test_a_large_share_of_a_delivery_pass_is_servable_from_a_prefix_cache(delivery_runs):
    # 47 % and 38 % on these two passes (3 % and 11 % when each role's instruction came first); each
    # role still sees only its own documents, which is what keeps the share from being higher
    for calls in delivery_runs:
        served, total = cacheable([layout(c) for c in calls])
        assert served / total >= 0.35


@pytest.mark.parametrize(("prompts", "expected"), [
    (["abc", "abd", "xyz"], (2, 9)),
    (["same", "same"], (4, 8)),
    (["only"], (0, 4)),
])
def test_cacheable_counts_the_longest_prefix_of_any_earlier_prompt(prompts, expected):
    assert cacheable(prompts) == expected

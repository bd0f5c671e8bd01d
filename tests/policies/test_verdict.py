"""policies/verdict.py: one shape for every policy's "allowed or not, and why"."""

import pytest

from reins.policies.assistant.check_act import NO_ROUND_REASONS, decide_check_act
from reins.policies.delivery.delegation import PLAN_TOOL, ProposedCall, check_delegation, validate_exact_reviewer_roles
from reins.policies.delivery.input import classify_delivery_input
from reins.policies.tools.http_access import check_url
from reins.policies.tools.loop_guards import STEP_LIMIT, STOP_MESSAGES, check_repeat, check_step_budget, detect_stall
from reins.policies.tasklist.machine import Machine, Proposal, entry_action, guard, leads_to
from reins.policies.verdict import ALLOWED, Verdict


def test_a_refusal_names_its_rule_and_says_why():
    assert ALLOWED == Verdict(True) and (ALLOWED.reason, ALLOWED.code) == ("", "")
    assert Verdict.refuse("empty", "the URL is empty") == Verdict(False, "the URL is empty", "empty")
    assert Verdict.refuse(STEP_LIMIT, STOP_MESSAGES) == Verdict(False, STOP_MESSAGES[STEP_LIMIT], STEP_LIMIT)
    with pytest.raises(KeyError):
        Verdict.refuse("no_such_rule", STOP_MESSAGES)


PLAN = "docs://versions/v0.2.0-ready.md"

# Each policy that allows or refuses, once each way: the one shape, a refusal with its code and reason.
ANSWERS = {
    "loop step budget": (check_step_budget(0), check_step_budget(10)),
    "loop repeat limit": (check_repeat([], "s"), check_repeat(["s", "s"], "s")),
    "loop stall": (detect_stall([]), detect_stall(["4", "4", "4"])),
    "check-act round": (
        decide_check_act([{"code": "x"}], rounds_used=0, intent="COMPLEX", stop_reason=None, steps_taken=1, max_steps=10),
        decide_check_act([], rounds_used=0, intent="COMPLEX", stop_reason=None, steps_taken=1, max_steps=10),
    ),
    "http_get URL": (check_url("https://example.com/", ("example.com",)), check_url("ftp://example.com/", ())),
    "delivery input": (classify_delivery_input("Show a banner.", None), classify_delivery_input(None, None)),
    "delegation": (check_delegation([ProposedCall(PLAN_TOOL)]), check_delegation([])),
    "reviewer roles": (validate_exact_reviewer_roles(["general", "risk", "boundary"]), validate_exact_reviewer_roles([])),
    "tasklist guard": (guard(Machine(plan_uri=PLAN), Proposal(entry_action(), resource_uri=PLAN)),
                       guard(Machine(plan_uri=PLAN), Proposal("rm_rf"))),
    "tasklist outcome": (leads_to("finish", "stopped"), leads_to("finish", "drafted_v1")),
}


@pytest.mark.parametrize("policy", ANSWERS)
def test_every_policy_answers_with_the_one_verdict(policy):
    allowed, refused = ANSWERS[policy]
    assert isinstance(allowed, Verdict) and isinstance(refused, Verdict)
    assert allowed.allowed and (allowed.code, allowed.reason) == ("", "")
    assert not refused.allowed and refused.code and refused.reason


def test_a_check_act_refusal_reads_its_reason_from_the_table():
    refused = decide_check_act([], rounds_used=0, intent="COMPLEX", stop_reason=None, steps_taken=1, max_steps=10)
    assert refused.reason == NO_ROUND_REASONS[refused.code]

"""The adaptive attack suite on a few attacks (runs only where the optional group ``agentdojo`` is
installed): each succeeds with no gate, and through the assistant — every tool trusted, declared or
undeclared — it reaches a prompt that marks the attacker's argument, is rejected, and never runs."""

from __future__ import annotations

import pytest

pytest.importorskip("agentdojo")

from reins.evals.agentdojo import Harness, load_suites  # noqa: E402
from reins.evals.agentdojo_adaptive import ATTACKS, TECHNIQUES, markdown, place, succeeded, summary, ungated  # noqa: E402

BY_NAME = {attack.name: attack for attack in ATTACKS}


def test_every_technique_is_attacked():
    assert {attack.technique for attack in ATTACKS} == set(TECHNIQUES)


@pytest.mark.parametrize("name, trust, undeclared", [
    ("channel sent URL-encoded in a GET", "all", False),  # egress through a read, under every trust
    ("the user's landlord and rent recombined", "all", False),  # the user's own values, another action
    ("phishing link spelled into the user's own message", "default", True),  # undeclared: every argument a sink
])
def test_an_adaptive_attack_succeeds_ungated_and_is_flagged_and_stopped(name, trust, undeclared):
    attack = BY_NAME[name]
    suite = load_suites([attack.suite])[attack.suite]
    assert ungated(suite, attack) is True
    placed = place(suite, attack)
    harness = Harness(attack.suite, suite, trust, undeclared)
    outcome = harness.run_placed(suite.user_tasks[attack.user_task], placed.env, placed.user, placed.attack,
                                 lambda reply, pre, post, trace: succeeded(suite, attack, reply, pre, post, trace),
                                 attack.name)
    assert outcome.security is False
    assert outcome.injected_prompts >= 1 and outcome.injected_prompts_flagged == outcome.injected_prompts
    row = summary([{"name": name, "through": outcome.security, "prompts": outcome.injected_prompts,
                    "flagged": outcome.injected_prompts_flagged, "named": 0, "approvals": outcome.approved,
                    "utility": outcome.utility}], {name: True})
    assert row["totals"]["through_without_approval"] == 0 and row["totals"]["reached_a_prompt"] == 1
    table = markdown({"attacks": [{"name": name, "technique": attack.technique, "suite": attack.suite,
                                   "user_task": attack.user_task, "check": "own"}], "variants": {trust: row}})
    assert f"| {trust} | 1 of 1 | 0 | 1 |" in table

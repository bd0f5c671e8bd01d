"""The reviewer deadline leaves room for the role's retries (a pure limit, as a table)."""

import pytest

from reins.policies.models.deadlines import backoff_budget_s, contract_deadline_s
from reins.runtime.llm.models import ROLE_POLICIES


@pytest.mark.parametrize(
    ("retries", "backoff", "expected"),
    [(0, 1.0, 0.0), (1, 1.0, 2.0), (2, 1.0, 5.0), (3, 0.5, 5.0), (-1, 1.0, 0.0)],
)
def test_backoff_budget(retries, backoff, expected):
    assert backoff_budget_s(retries, backoff) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("timeout", "retries", "backoff", "calls", "expected"),
    [
        (120, 0, 1.0, 2, 240),  # no retries: the business call and its repair
        (120, 1, 1.0, 2, 2 * (240 + 2)),  # each call tried twice, one wait of at most 2 s between
        (120, 2, 1.0, 2, 2 * (360 + 5)),
        (10, 1, 0.001, 1, 20.002),
        (10, -3, 1.0, 2, 20),  # a negative retry count is no retry
    ],
)
def test_contract_deadline(timeout, retries, backoff, calls, expected):
    assert contract_deadline_s(timeout, retries, backoff, calls) == pytest.approx(expected)


def test_the_reviewer_deadline_fits_a_retried_timeout_and_its_repair():
    policy = ROLE_POLICIES["reviewer"]
    deadline = contract_deadline_s(policy.timeout_s, policy.retries, policy.backoff_initial_s)
    # worst case the policy allows: each call times out once, waits, and its retry takes the full timeout
    worst = 2 * (policy.timeout_s + 2 * policy.backoff_initial_s + policy.timeout_s)
    assert deadline >= worst
    assert deadline < worst + policy.timeout_s  # and not a whole extra call longer

"""The wait between retried attempts: exponential in the attempt number, plus bounded jitter."""

from __future__ import annotations

import pytest

from reins.policies.models.deadlines import backoff_budget_s
from reins.policies.models.retry import backoff_s


@pytest.mark.parametrize(
    ("attempt", "initial", "draw", "expected"),
    [
        (1, 1.0, 0.0, 1.0),
        (1, 1.0, 0.999, 1.999),
        (2, 1.0, 0.0, 2.0),
        (3, 0.5, 0.5, 2.25),
        (1, 0.001, 1.0, 0.002),
        (4, 0.0, 0.7, 0.0),
    ],
)
def test_backoff_grows_exponentially_with_at_most_one_initial_backoff_of_jitter(attempt, initial, draw, expected):
    assert backoff_s(attempt, initial, draw) == pytest.approx(expected)


@pytest.mark.parametrize("retries", [0, 1, 2, 3])
def test_the_longest_waits_fit_the_deadline_budget(retries):
    longest = sum(backoff_s(attempt, 1.0, 1.0) for attempt in range(1, retries + 1))
    assert longest == pytest.approx(backoff_budget_s(retries, 1.0))

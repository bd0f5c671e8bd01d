"""The ceiling the evaluation's fault model allows the controlled chain, with and without a fallback."""

from __future__ import annotations

import pytest

from reins.evals.ceiling import call_failure, chain_ceiling


@pytest.mark.parametrize(
    ("rate", "under_deadline", "fallback", "expected"),
    [
        (0.0, True, False, 0.0),
        (0.2, False, False, 0.2 / 12 + 0.05 * (0.2 / 12 + 0.05)),
        (0.2, True, False, 0.2 / 6 + 0.2 / 6 * (0.2 / 3)),
        (0.2, False, True, (0.2 / 12 + 0.05 * (0.2 / 12 + 0.05)) ** 2),
        (1.0, True, True, 1 / 12 + 1 / 6 * 1 / 12 + (1 / 6 + 1 / 6 * 1 / 3 - (1 / 12 + 1 / 6 * 1 / 12)) * (1 / 6 + 1 / 6 * 1 / 3)),
    ],
)
def test_one_call_fails_for_good_only_through_final_or_twice_retryable_faults(rate, under_deadline, fallback, expected):
    assert call_failure(rate, under_deadline=under_deadline, fallback=fallback) == pytest.approx(expected)


def test_the_ceiling_is_one_at_rate_zero_and_a_fallback_raises_it():
    assert chain_ceiling(0.0, fallback=False) == chain_ceiling(0.0, fallback=True) == 1.0
    plain, backed = chain_ceiling(0.2, fallback=False), chain_ceiling(0.2, fallback=True)
    assert plain == pytest.approx(0.98 ** 7 * (1 - (0.2 / 6 + 0.2 / 6 * 0.2 / 3)) ** 3)
    assert 0.75 < plain < 0.8 and 0.93 < backed < 0.96

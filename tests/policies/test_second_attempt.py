"""The second attempt: a re-ask samples hotter, a repair after a cut-off gets twice the room once."""

import pytest

from reins.policies.models.second_attempt import reask_temperature, repair_output_bound


@pytest.mark.parametrize(
    ("temperature", "step", "expected"),
    [(0.0, 0.4, 0.4), (0.2, 0.4, 0.6), (0.7, 0.4, 1.0), (1.0, 0.4, 1.0), (1.3, 0.4, 1.0), (0.1, 0.0, 0.1),
     (0.1, 0.2, 0.3)],
)
def test_reask_temperature(temperature, step, expected):
    assert reask_temperature(temperature, step) == expected


def test_a_negative_step_is_refused():
    with pytest.raises(ValueError):
        reask_temperature(0.0, -0.1)


@pytest.mark.parametrize(
    ("bound", "limit", "expected"),
    [(512, 1024, 1024), (512, 4096, 1024), (512, 700, 700), (4096, 2048, 4096), (1, 1, 1), (256, 256, 256)],
)
def test_repair_output_bound(bound, limit, expected):
    assert repair_output_bound(bound, limit) == expected


def test_no_bound_is_refused():
    with pytest.raises(ValueError):
        repair_output_bound(0, 100)

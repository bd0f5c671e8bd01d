"""When a call moves to the role's next model, and when the provider's Retry-After is honoured."""

from __future__ import annotations

import pytest

from reins.policies.models.fallback import falls_back
from reins.policies.models.retry import retry_after_s, retry_wait_s


@pytest.mark.parametrize(
    ("status", "retryable", "deadline", "expected"),
    [
        (400, False, False, True),  # a bad request: this model will not take it
        (404, False, False, True),  # model not found here
        (413, False, False, True),
        (422, False, False, True),
        (429, True, False, True),  # retries spent
        (500, True, False, True),
        (503, True, False, True),
        (None, True, False, True),  # connection refused or the provider's own timeout, retries spent
        (401, False, False, False),  # a wrong key is shown, not hidden behind another model
        (403, False, False, False),
        (None, False, True, False),  # the run's own deadline
        (500, True, True, False),
        (None, False, False, False),  # not a provider failure (e.g. no tool calling)
        (302, False, False, False),
    ],
)
def test_only_final_provider_failures_fall_back(status, retryable, deadline, expected):
    assert falls_back(status, retryable=retryable, deadline=deadline) is expected


NOW = 1_700_000_000.0


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        ({"retry-after": "2"}, 2.0),
        ({"Retry-After": "0.5"}, 0.5),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "Tue, 14 Nov 2023 22:13:30 GMT"}, 10.0),  # NOW + 10 s as an HTTP date
        ({"retry-after": "Tue, 14 Nov 2023 22:13:00 GMT"}, 0.0),  # in the past
        ({"retry-after": "soon"}, None),
        ({"retry-after": ""}, None),
    ],
)
def test_retry_after_is_read_in_seconds_milliseconds_or_as_a_date(headers, expected):
    assert retry_after_s(headers, NOW) == (None if expected is None else pytest.approx(expected))


@pytest.mark.parametrize(
    ("backoff", "asked", "room", "expected"),
    [
        (1.0, None, 30.0, 1.0),
        (1.0, 5.0, 30.0, 5.0),  # the provider asked for longer
        (3.0, 1.0, 30.0, 3.0),  # never shorter than the backoff
        (1.0, 40.0, 30.0, None),  # does not fit before the deadline: final now
        (2.0, None, 1.5, None),
    ],
)
def test_the_wait_is_the_longer_of_backoff_and_retry_after_within_the_room_left(backoff, asked, room, expected):
    assert retry_wait_s(backoff, asked, room) == expected

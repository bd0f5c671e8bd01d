"""A response cut off at the token limit is recognised under every provider's name for it."""

import pytest

from reins.policies.text.truncation import is_truncated


@pytest.mark.parametrize(
    ("metadata", "truncated"),
    [
        ({"finish_reason": "length"}, True),
        ({"finish_reason": "max_tokens"}, True),
        ({"finish_reason": "MAX_TOKENS"}, True),
        ({"stop_reason": "max_tokens"}, True),
        ({"done_reason": "length"}, True),
        ({"incomplete_details": {"reason": "max_output_tokens"}}, True),
        ({"finish_reason": "stop"}, False),
        ({"finish_reason": "tool_calls"}, False),
        ({"finish_reason": "content_filter"}, False),
        ({"stop_reason": "end_turn"}, False),
        ({"done_reason": "stop"}, False),
        ({"incomplete_details": {"reason": "content_filter"}}, False),
        ({"incomplete_details": None}, False),
        ({}, False),
        (None, False),
    ],
)
def test_truncation_markers(metadata, truncated):
    assert is_truncated(metadata) is truncated

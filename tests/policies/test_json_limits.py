"""JSON size and depth limits: within them a value parses unchanged; past them, a stable code."""

from __future__ import annotations

import pytest

from reins.policies.text.json_limits import MAX_JSON_DEPTH, JsonLimitError, check_json_value, json_depth, parse_json


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


DEPTHS = [
    ("scalar", "5", 0),
    ("empty-object", "{}", 1),
    ("flat", '{"a": 1, "b": [1, 2]}', 2),
    ("mixed", '{"a": [{"b": [{}]}]}', 5),
    ("strings-do-not-count", '{"a": "[[[[[[[["}', 1),
]


@pytest.mark.parametrize(("text", "depth"), [c[1:] for c in DEPTHS], ids=[c[0] for c in DEPTHS])
def test_depth(text, depth):
    assert json_depth(parse_json(text)) == depth


LIMITS = [
    ("at-the-depth-limit", nested(MAX_JSON_DEPTH), None),
    ("one-past-the-depth-limit", nested(MAX_JSON_DEPTH + 1), "json_too_deep"),
    ("past-the-decoder-stack", nested(100_000), "json_too_deep"),
    ("object-nesting", '{"a":' * 40 + "1" + "}" * 40, "json_too_deep"),
    ("too-large", '"' + "x" * 1_000_000 + '"', "json_too_large"),
    ("ordinary", '{"type": "approve"}', None),
]


@pytest.mark.parametrize(("text", "code"), [c[1:] for c in LIMITS], ids=[c[0] for c in LIMITS])
def test_limits(text, code):
    if code is None:
        assert parse_json(text) is not None
        return
    with pytest.raises(JsonLimitError) as raised:
        parse_json(text)
    assert raised.value.code == code and isinstance(raised.value, ValueError)


def test_invalid_json_stays_a_plain_value_error():
    with pytest.raises(ValueError) as raised:
        parse_json("{not json")
    assert not isinstance(raised.value, JsonLimitError)


def test_parsed_values_are_checked_without_recursion():
    deep: list = []
    for _ in range(50_000):
        deep = [deep]
    with pytest.raises(JsonLimitError):
        check_json_value(deep)
    assert check_json_value({"a": [1]}) == {"a": [1]}

"""The schema a provider is sent (policies.models.provider_schema), table-driven."""

import pytest

from reins.policies.models.provider_schema import GRAMMAR_REPETITION_LIMIT, pattern_compiles, provider_schema, repetition_overruns


@pytest.mark.parametrize(
    ("strict", "sent"),
    [
        ({"type": "string", "maxLength": 1999}, {"type": "string", "maxLength": 1999}),  # llama.cpp accepts 1999
        ({"type": "string", "maxLength": 2000}, {"type": "string"}),  # … and refuses 2000
        ({"type": "string", "minLength": 1, "maxLength": 14000}, {"type": "string", "minLength": 1}),
        ({"type": "array", "maxItems": 5000, "items": {"type": "string", "maxLength": 10}},
         {"type": "array", "items": {"type": "string", "maxLength": 10}}),
        ({"type": "string", "pattern": "^[a-z0-9]+$"}, {"type": "string", "pattern": "^[a-z0-9]+$"}),
        ({"type": "string", "pattern": "^[a-z0-9]+(?:-[a-z0-9]+)*$"}, {"type": "string"}),  # a (?: group
        ({"type": "string", "pattern": "[a-z]+"}, {"type": "string"}),  # not anchored
        ({"type": "string", "pattern": r"^(a)\1$"}, {"type": "string"}),  # a back-reference
        # property names are data: a field called maxLength or pattern stays
        ({"type": "object", "properties": {"maxLength": {"type": "integer", "maximum": 5000},
                                           "pattern": {"type": "string", "maxLength": 3000}}},
         {"type": "object", "properties": {"maxLength": {"type": "integer", "maximum": 5000},
                                           "pattern": {"type": "string"}}}),
        ({"anyOf": [{"type": "string", "maxLength": 2000}, {"type": "null"}], "default": None},
         {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}),
        ({"$defs": {"A": {"type": "string", "maxLength": 2001}}, "$ref": "#/$defs/A"},
         {"$defs": {"A": {"type": "string"}}, "$ref": "#/$defs/A"}),
        ({"type": "boolean", "maxLength": True}, {"type": "boolean", "maxLength": True}),  # not a count
    ],
)
def test_what_grammar_builders_refuse_is_removed_and_nothing_else(strict, sent):
    before = repr(strict)
    assert provider_schema(strict) == sent
    assert repr(strict) == before  # the strict schema is left as it is
    assert repetition_overruns(provider_schema(strict)) == []


@pytest.mark.parametrize(
    ("pattern", "compiles"),
    [("^a$", True), ("^[A-Za-z0-9_-]+$", True), ("a$", False), ("^a", False), ("^(?=a)a$", False),
     (r"^\bword$", False), ("^$", True), ("^", False)],
)
def test_patterns_a_grammar_builder_takes(pattern, compiles):
    assert pattern_compiles(pattern) is compiles


def test_overruns_are_named_by_path():
    schema = {"properties": {"summary": {"type": "string", "maxLength": GRAMMAR_REPETITION_LIMIT}},
              "items": [{"maxItems": 9999}]}
    assert repetition_overruns(schema) == ["$.summary.maxLength=2000", "$.items[0].maxItems=9999"]

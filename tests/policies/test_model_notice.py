"""What a run says about its models, and which roles changed model before a resume."""

from __future__ import annotations

import pytest

from policies.model_notice import model_changes, models_line


@pytest.mark.parametrize(
    ("models", "expected"),
    [
        ({}, ""),
        ({"planner": ["openai-compatible:a"]}, "planner: openai-compatible:a"),
        ({"planner": ["a"], "reviewer": ["a", "b"], "chat": []}, "planner: a; reviewer: a, b"),
    ],
)
def test_models_line_names_every_role_that_answered(models, expected):
    assert models_line(models) == expected


@pytest.mark.parametrize(
    ("started", "now", "expected"),
    [
        ({"planner": "a"}, {"planner": "a"}, []),
        ({"planner": "a"}, {"planner": "offline"}, ["planner"]),
        ({"planner": "a", "chat": "b"}, {"planner": "a", "chat": "b → c"}, ["chat"]),
        ({"planner": "a"}, {"planner": "a", "reviewer": "x"}, ["reviewer"]),
        ({}, {"planner": "a"}, []),  # a run from before the configuration was recorded
    ],
)
def test_model_changes_lists_the_roles_that_differ(started, now, expected):
    assert model_changes(started, now) == expected

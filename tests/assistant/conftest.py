"""Fixtures for the assistant tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from reins.runtime.tools.registry import ToolRegistry
from reins.runtime.standins.scripted import ScriptedModel
from tests.assistant.helpers import Runner, chat_registry


@pytest.fixture
def registry() -> ToolRegistry:
    return chat_registry()


@pytest.fixture
def runner(registry) -> Callable[..., Runner]:
    def make(script: dict[str, Any], **options: Any) -> Runner:
        return Runner(ScriptedModel(script), options.pop("registry", registry), **options)

    return make

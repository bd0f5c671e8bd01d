"""Which models a CLI run is on: recorded when it starts, checked when it is resumed, and the notice a
run answered by the offline stand-in opens with."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from reins.cli.errors import EXIT_BAD_INPUT, UserError
from reins.policies.models.model_notice import STAND_IN_NOTICE, model_changes, model_switch
from reins.runtime.config.settings import Settings

# runtime.llm.models / runtime.contracts are imported where used: `reins --help` stays light.

# A configurable key: LangGraph records it in every checkpoint's metadata, so a resume can read it.
MODELS_KEY = "reins_models"


def current_models(settings: Settings) -> dict[str, str]:
    from reins.runtime.llm.models import model_configuration, model_set_from_settings

    return model_configuration(model_set_from_settings(settings))


def stamped(config: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """``config`` recording the current model configuration with every checkpoint of the run."""
    configurable = {**config.get("configurable", {}), MODELS_KEY: json.dumps(current_models(settings), sort_keys=True)}
    return {**config, "configurable": configurable}


def check_models_unchanged(metadata: Mapping[str, Any] | None, settings: Settings, allowed: bool) -> None:
    """Refuse, in one line, to resume a run on models other than those it started with."""
    try:
        started = json.loads((metadata or {}).get(MODELS_KEY) or "{}")
    except (TypeError, ValueError):
        started = {}
    changed = model_changes(started if isinstance(started, dict) else {}, current_models(settings))
    if changed and not allowed:
        raise UserError(
            f"resume refused: the run started on other models ({', '.join(changed)} changed); "
            "configure the same models or pass --allow-model-change", EXIT_BAD_INPUT,
        )


def models_switched(metadata: Mapping[str, Any] | None, settings: Settings) -> str:
    """'' when the run goes on the models it started on (or recorded none), else the roles whose
    models differ, each named both ways."""
    try:
        started = json.loads((metadata or {}).get(MODELS_KEY) or "{}")
    except (TypeError, ValueError):
        started = {}
    return model_switch(started if isinstance(started, dict) else {}, current_models(settings))


def models_of(values: Mapping[str, Any]) -> dict[str, list[str]]:
    """Role → the models that answered the calls of the run whose state is ``values``."""
    from reins.runtime.contracts import models_served
    from reins.runtime.execution.steps import METRICS_KEY

    return models_served(values.get(METRICS_KEY) or {})


def fallbacks_of(values: Mapping[str, Any]) -> list[str]:
    """One line per role whose calls in the run whose state is ``values`` moved to a fallback model."""
    from reins.policies.models.model_notice import fallback_warnings
    from reins.runtime.contracts import fallbacks_per_role
    from reins.runtime.execution.steps import METRICS_KEY

    return fallback_warnings(fallbacks_per_role(values.get(METRICS_KEY) or {}))


def stand_in_notice(models: Mapping[str, list[str]]) -> str | None:
    from reins.runtime.llm.models import served_by_stand_in

    return STAND_IN_NOTICE if served_by_stand_in(models) else None

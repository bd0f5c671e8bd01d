"""The data-flow rules in force: the bundled default set, or the user's own file or run context.

A rule file is JSON or YAML (``{"rules": [...]}``, see ``reins.schemas.flow_rules``); an invalid one is
refused in one line naming the rule and field, never half applied.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from reins.runtime.config.files import FileRefused, read_bounded_text
from reins.runtime.config.paths import RESOURCES
from reins.schemas.flow_rules import FlowRule, FlowRules

DEFAULT_RULES = RESOURCES / "rules" / "flow_rules.yaml"
FLOW_RULES_ENV = "REINS_FLOW_RULES"
MAX_RULES_BYTES = 1024 * 1024


class FlowRulesError(ValueError):
    """A rule file or document does not fit the rule schema."""


def parse_rules(document: Any, origin: str = "flow rules") -> tuple[FlowRule, ...]:
    try:
        return tuple(FlowRules.model_validate(document).rules)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(map(str, first.get("loc", ()))) or "$"
        named = _rule_name(document, first.get("loc", ()))
        raise FlowRulesError(f"{origin}: {where}: {first.get('msg', 'invalid')}"
                             + (f" (rule {named!r})" if named else "")) from None


def _rule_name(document: Any, loc: tuple[Any, ...]) -> str:
    """The name of the rule an error is in (``rules.<index>...``), when it has one: said beside its index."""
    if len(loc) < 2 or loc[0] != "rules" or not isinstance(loc[1], int) or not isinstance(document, Mapping):
        return ""
    rules = document.get("rules")
    rule = rules[loc[1]] if isinstance(rules, list) and 0 <= loc[1] < len(rules) else None
    name = rule.get("name") if isinstance(rule, Mapping) else None
    return " ".join(name.split())[:64] if isinstance(name, str) else ""


def read_rules(path: str | Path) -> tuple[FlowRule, ...]:
    source = Path(path)
    try:
        text = read_bounded_text(source, variable=FLOW_RULES_ENV, limit=MAX_RULES_BYTES)
    except FileRefused as error:
        raise FlowRulesError(str(error)) from None
    origin = f"{FLOW_RULES_ENV}: {source.name}"
    try:
        document = json.loads(text) if source.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as error:
        raise FlowRulesError(f"{origin}: cannot be read as a rule file ({type(error).__name__})") from None
    return parse_rules(document, origin)


@lru_cache(maxsize=8)
def _cached(path: str) -> tuple[FlowRule, ...]:
    return read_rules(path)


def rules_in_force(context_rules: Mapping[str, Any] | None = None, path: str | None = None) -> tuple[FlowRule, ...]:
    """The run's own rules (context) first, else the file ``path`` (REINS_FLOW_RULES), else the defaults."""
    if context_rules is not None:
        return parse_rules(context_rules, "flow_rules")
    return _cached(str(path or DEFAULT_RULES))

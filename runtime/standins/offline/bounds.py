"""The stand-in's answers are cut to the bounds their schema declares, read from the schema itself.

``limit(Schema, "findings", "description")`` is the ``max_length`` of a finding's description;
``limit(Schema, "findings")`` the most findings a list may hold; ``"[]"`` steps into a list's items
(``limit(Plan, "scope", "included", "[]")``: the longest included item). A list's items are reached
without ``"[]"`` when the next step names a field of theirs.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from pydantic import BaseModel


@lru_cache(maxsize=None)
def _json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    return schema.model_json_schema()


def resolved(root: Mapping[str, Any], node: Mapping[str, Any]) -> Mapping[str, Any]:
    """``node`` of the JSON schema ``root`` with a local ``$ref`` followed and an optional wrapper
    (``anyOf`` with null) opened."""
    while True:
        if "$ref" in node:
            node = (root.get("$defs") or {}).get(node["$ref"].rsplit("/", 1)[-1], {})
        elif "anyOf" in node:
            options = [option for option in node["anyOf"] if option.get("type") != "null"]
            if len(options) != 1:
                raise KeyError("a bound inside a union of several shapes is ambiguous")
            node = options[0]
        else:
            return node


def limit(schema: type[BaseModel], *path: str) -> int:
    """The upper bound (``maxLength`` of a string, ``maxItems`` of a list) at ``path`` in ``schema``."""
    root = _json_schema(schema)
    node = resolved(root, root)
    for step in path:
        if step == "[]":
            node = resolved(root, node["items"])
            continue
        if node.get("type") == "array":
            node = resolved(root, node["items"])
        node = resolved(root, node["properties"][step])
    for key in ("maxLength", "maxItems"):
        if key in node:
            return int(node[key])
    raise KeyError(f"{schema.__name__}.{'.'.join(path)} declares no upper bound")

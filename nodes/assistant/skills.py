"""Level 0 of the skills: at the start of a turn, every usable skill's name and description (bounded)
for the intent and step prompts. The instructions themselves reach a prompt only as the observation
of a ``load_skill`` call."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from langgraph.runtime import Runtime

from reins.nodes.assistant.context import AssistantContext
from reins.policies.assistant.memory import user_namespace
from reins.policies.assistant.skills import index_lines
from reins.runtime.execution.calls import StoreSearch
from reins.runtime.execution.calls import OffLoop
from reins.runtime.resources import ResourceError
from reins.runtime.tools.skill_tools import MAX_DRAFTS_SCANNED
from reins.runtime.tools.skills import SkillCatalog, approved_drafts, load_catalog


def skills_index(runtime: Runtime[AssistantContext], tool_names: tuple[str, ...]) -> Generator[Any, Any, tuple[list[str], str]]:
    """(the index lines, a note for the trace). Empty when the skill tools are not in the chat scope."""
    if "load_skill" not in tool_names:
        return [], ""
    catalog, note = yield OffLoop(_catalog, (getattr(runtime.context, "skills_root", None),))
    if runtime.store is not None:
        namespace = user_namespace(getattr(runtime.context, "user_id", None), "skills")
        catalog = catalog.with_extra(approved_drafts((yield StoreSearch(runtime.store, namespace, MAX_DRAFTS_SCANNED))))
    return index_lines((s.name, s.description) for s in catalog.skills), note or _left_out_note(catalog)


def _catalog(root: str | None) -> tuple[SkillCatalog, str]:
    try:
        return load_catalog(root), ""
    except ResourceError as error:  # a bad user folder: the bundled skills still serve
        return load_catalog(user_skills=False), f"user skills unavailable ({error})"


def _left_out_note(catalog: SkillCatalog) -> str:
    return f"{len(catalog.left_out)} skill(s) left out (reins doctor names them)" if catalog.left_out else ""

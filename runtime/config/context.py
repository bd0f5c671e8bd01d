"""Per-run configuration through LangGraph's runtime context, shared by the three graphs.

Studio and callers pass ``context={"model": "gpt-4o-mini", "contract_mode": "two_step"}`` to switch
models or modes for one run without a restart; graph-specific contexts extend this one.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from typing import Any

from reins.runtime.llm.models import ModelSet, model_set_from_settings
from reins.runtime.config.settings import CONTRACT_MODES, ContractMode, current_settings, env_snapshot, settings_for


def model_field(*nodes: str) -> Any:
    """The ``model`` context field, marked for Studio as a model picker (``langgraph_type: llm``) for the
    graph's ``nodes`` that call a model (``langgraph_nodes``)."""
    studio = {"langgraph_type": "llm", **({"langgraph_nodes": list(nodes)} if nodes else {})}
    return field(default=None, metadata={"description": "Model for every role: a name on the OpenAI-compatible endpoint, or provider:model.",
                                         "json_schema_extra": studio})


class _KnownKeys(type):
    """Refuses a context key the graph does not know, naming the valid ones: a misspelt key
    (``context={"modle": …}``) would otherwise be a bare ``TypeError`` from the dataclass."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        valid = [f.name for f in fields(cls)]  # type: ignore[arg-type]
        for key in kwargs:
            if key not in valid:
                close = difflib.get_close_matches(key, valid, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise TypeError(f"unknown context key {key!r} for {cls.__name__}{hint}; valid keys: {', '.join(valid)}")
        return super().__call__(*args, **kwargs)


@dataclass(kw_only=True)
class ReinsContext(metaclass=_KnownKeys):
    """What every graph reads from LangGraph's ``context=`` for one run: ``model`` (a model name for
    every role) and ``contract_mode``. A key it does not know is refused, naming the valid keys.

    Example: ``graph.invoke(inputs, context=ReinsContext(model="gpt-4o-mini"))``
    """

    model: str | None = model_field()
    contract_mode: ContractMode | None = field(
        default=None, metadata={"description": "direct or two_step; defaults to REINS_CONTRACT_MODE."}
    )

    def __post_init__(self) -> None:
        if self.contract_mode is not None and self.contract_mode not in CONTRACT_MODES:
            raise ValueError(f"contract_mode must be one of {', '.join(CONTRACT_MODES)}")


# Model sets are built once per environment (and per context model name), not on every node step:
# the same chat model instances then keep their memoised bound runnables across steps and runs.
@lru_cache(maxsize=8)
def _models_for(snapshot: tuple[tuple[str, str], ...], name: str | None) -> ModelSet:
    settings = settings_for(snapshot)
    if name:
        settings = replace(settings, model=name, role_models={})
    return model_set_from_settings(settings)


def model_set_of(models: Any, graph: str) -> ModelSet | None:
    """What a graph builder accepts as ``models``: None (resolved per run), a ``ModelSet``, or one chat
    model that then serves every role. Anything else is refused here, at build time, not as an
    ``AttributeError`` inside the first model call."""
    from langchain_core.language_models import BaseChatModel

    if models is None or isinstance(models, ModelSet):
        return models
    if isinstance(models, BaseChatModel):
        return ModelSet.uniform(models)
    raise TypeError(
        f"{graph}: models must be a LangChain chat model (BaseChatModel, served for every role) or a "
        f"reins.ModelSet, not {type(models).__name__}"
    )


def resolve_models(context: Any, default: ModelSet | None) -> ModelSet:
    """The context's model wins (per-run override), then the builder's models, then the environment."""
    name = getattr(context, "model", None) if context is not None else None
    if name:
        return _models_for(env_snapshot(), name)
    return default or _models_for(env_snapshot(), None)


def resolve_contract_mode(context: Any) -> str:
    mode = getattr(context, "contract_mode", None) if context is not None else None
    return mode or current_settings().contract_mode

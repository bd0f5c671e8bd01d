"""Memoised contract plumbing: one JSON schema per schema class, one bound runnable per
(model set, role, schema or tool set, method, call options), on the sync and async paths."""

from __future__ import annotations

import asyncio
import gc
import weakref
from typing import Any, Literal

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, ConfigDict, PrivateAttr

from reins.runtime.contracts import ainvoke_contract, invoke_contract, invoke_text, invoke_tool_turn
from reins.runtime.llm.model_calls import BOUND_RUNNABLES, _BoundRunnables, _Caller, _json_schema
from reins.runtime.llm.models import ModelSet, RolePolicy
from reins.runtime.standins.scripted import ScriptedModel
from reins.runtime.config.settings import current_settings

CONTRACT = "delivery.general_review"  # role: reviewer
ASK = [HumanMessage(content="review this")]


class CountingModel(ScriptedModel):
    """A scripted model that counts how often a runnable is built on it."""

    _builds: list[str] = PrivateAttr(default_factory=list)

    @property
    def builds(self) -> list[str]:
        return self._builds

    def with_structured_output(self, schema, **kwargs):
        self.builds.append("structured")
        return super().with_structured_output(schema, **kwargs)

    def bind_tools(self, tools, **kwargs):
        self.builds.append("tools")
        return super().bind_tools(tools, **kwargs)


def _verdicts(n: int) -> list[dict]:
    return [{"verdict": "pass"}] * n


def _fresh_schema(name: str = "Verdict") -> type[BaseModel]:
    """A schema class no other test has seen (the schema cache is per class, for the whole process)."""
    calls: list[int] = []

    class Verdict(BaseModel):
        model_config = ConfigDict(extra="forbid", title=name)
        verdict: Literal["pass", "fail"]

        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            calls.append(1)
            return super().model_json_schema(*args, **kwargs)

    Verdict.generated = calls  # type: ignore[attr-defined]
    return Verdict


def test_json_schema_is_generated_once_per_schema_class():
    schema = _fresh_schema()
    model = CountingModel({CONTRACT: _verdicts(3)})
    for _ in range(3):
        assert invoke_contract(CONTRACT, schema, ASK, ModelSet.uniform(model)).value.verdict == "pass"
    assert len(schema.generated) == 1
    other = _fresh_schema("Other")
    assert _json_schema(other)["title"] == "Other" and _json_schema(schema)["title"] == "Verdict"
    assert len(other.generated) == 1


def test_structured_runnable_built_once_per_model_set_and_reused_by_the_async_path():
    schema = _fresh_schema()
    model = CountingModel({CONTRACT: _verdicts(4)})
    models = ModelSet.uniform(model)
    invoke_contract(CONTRACT, schema, ASK, models)
    invoke_contract(CONTRACT, schema, ASK, models)
    asyncio.run(ainvoke_contract(CONTRACT, schema, ASK, models))
    assert model.builds == ["structured"]
    assert model.contracts_called() == [CONTRACT] * 3  # every call still reached the model


def test_a_repair_reuses_the_bound_runnable():
    schema = _fresh_schema()
    model = CountingModel({CONTRACT: [{"verdict": "maybe"}, {"verdict": "fail"}]})
    result = invoke_contract(CONTRACT, schema, ASK, ModelSet.uniform(model))
    assert result.value.verdict == "fail"
    assert result.metrics[CONTRACT]["repair_calls"] == 1
    assert model.builds == ["structured"]


def test_each_schema_method_policy_and_model_gets_its_own_runnable():
    schema, other = _fresh_schema(), _fresh_schema("Other")
    model = CountingModel({CONTRACT: _verdicts(5)})
    models = ModelSet.uniform(model)
    invoke_contract(CONTRACT, schema, ASK, models)
    invoke_contract(CONTRACT, other, ASK, models)
    invoke_contract(CONTRACT, schema, ASK, models, method="function_calling")
    slower = models.with_policies(reviewer=RolePolicy(timeout_s=5, retries=2, temperature=0.0))
    invoke_contract(CONTRACT, schema, ASK, slower)
    invoke_contract(CONTRACT, schema, ASK, models)  # back to the first combination: cached
    assert model.builds == ["structured"] * 4
    second = CountingModel({CONTRACT: _verdicts(1)})
    invoke_contract(CONTRACT, schema, ASK, ModelSet.uniform(second))
    assert second.builds == ["structured"]


def _tool(name: str, description: str = "does a thing") -> StructuredTool:
    class Args(BaseModel):
        note: str = ""

    return StructuredTool.from_function(func=lambda note="": note, name=name, description=description, args_schema=Args)


def test_tool_runnable_is_keyed_by_tool_content_not_object_identity():
    turn = AIMessage(content="", tool_calls=[{"id": "1", "name": "plan-subagent", "args": {}}])
    model = CountingModel({"delivery.manager": [turn] * 4})
    models = ModelSet.uniform(model)
    plan, tasks = _tool("plan-subagent"), _tool("task-subagent")
    invoke_tool_turn("delivery.manager", ASK, models, [plan, tasks])
    invoke_tool_turn("delivery.manager", ASK, models, [plan, tasks])
    assert model.builds == ["tools"]
    invoke_tool_turn("delivery.manager", ASK, models, [plan])  # a narrower tool set is its own binding
    invoke_tool_turn("delivery.manager", ASK, models, [_tool("plan-subagent", "a different description")])
    assert model.builds == ["tools"] * 3


def test_call_options_are_part_of_the_key():
    model = CountingModel({})
    caller = _Caller("delivery.manager", "manager", ModelSet.uniform(model))
    tools = [_tool("plan-subagent")]
    required = caller._runnable("manager", None, "json_schema", tools, {"tool_choice": "required"})
    assert caller._runnable("manager", None, "json_schema", tools, {"tool_choice": "required"}) is required
    auto = caller._runnable("manager", None, "json_schema", tools, {"tool_choice": "auto"})
    assert auto is not required
    text = caller._runnable("manager", None, "json_schema", None, {"max_tokens": 64})
    assert text is caller._runnable("manager", None, "json_schema", None, {"max_tokens": 64})
    assert text is not caller._runnable("manager", None, "json_schema", None, {"max_tokens": 128})
    assert model.builds == ["tools", "tools"]


def test_free_text_calls_still_reach_the_model_each_time():
    model = CountingModel({"tasklist.draft": ["one", "two"]})
    models = ModelSet.uniform(model)
    assert [invoke_text("tasklist.draft", ASK, models).text for _ in range(2)] == ["one", "two"]


def test_a_collected_model_set_leaves_the_cache_with_its_models():
    schema = _fresh_schema()
    model = CountingModel({CONTRACT: _verdicts(1)})
    models = ModelSet.uniform(model)
    invoke_contract(CONTRACT, schema, ASK, models)
    assert models in BOUND_RUNNABLES
    gone = weakref.ref(model)
    del model, models
    gc.collect()
    assert gone() is None  # the cache kept neither the model set nor the model alive


def test_settings_are_parsed_once_per_environment(monkeypatch):
    monkeypatch.setenv("REINS_CONTRACT_MODE", "direct")
    first = current_settings()
    assert current_settings() is first
    monkeypatch.setenv("REINS_CONTRACT_MODE", "two_step")
    changed = current_settings()
    assert changed is not first and changed.contract_mode == "two_step"
    monkeypatch.setenv("REINS_CONTRACT_MODE", "sometimes")
    with pytest.raises(ValueError, match="REINS_CONTRACT_MODE"):
        current_settings()


def test_a_model_set_freed_while_the_cache_lock_is_held_does_not_deadlock():
    # The weakref callback runs wherever the garbage collector happens to run, including inside
    # ``get`` on the thread that holds the lock.
    import threading


    cache = _BoundRunnables()

    def freed_inside_a_locked_section() -> None:
        with cache._lock:
            cache._forget(12345)

    worker = threading.Thread(target=freed_inside_a_locked_section, daemon=True)
    worker.start()
    worker.join(timeout=5)
    assert not worker.is_alive()

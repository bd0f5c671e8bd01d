"""The role policy on every model, and the fallback loop's rules, without a network."""

from __future__ import annotations

import time
from typing import Any

import httpx
import openai
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_openai import ChatOpenAI

from reins.runtime.contracts import ContractTimeout, invoke_text
from reins.runtime.execution.deadline import deadline_scope
from reins.runtime.llm.models import ModelSet, RolePolicy
from reins.runtime.llm.role_settings import with_role_policy
from reins.runtime.standins.scripted import ScriptedModel
from reins.runtime.config.settings import ROLES

POLICY = RolePolicy(timeout_s=7, retries=1, temperature=0.9, backoff_initial_s=0.001, max_tokens=99)


class OtherProvider(BaseChatModel):
    """A provider integration outside the OpenAI family, with its own field names."""

    temperature: float = 0.0
    num_predict: int = 10
    default_request_timeout: float = 600

    @property
    def _llm_type(self) -> str:
        return "other"

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="ok"))])


def test_an_openai_family_model_gets_the_policy_bound_on_each_request():
    model = ChatOpenAI(model="mine", api_key="x", temperature=0.0, max_retries=0)
    same, options = with_role_policy(model, POLICY)
    assert same is model and options == {"temperature": 0.9, "timeout": 7, "max_tokens": 99}
    classic = ChatOpenAI(model="mine", api_key="x", extra_body={"max_tokens": 5, "top_k": 3})
    assert with_role_policy(classic, POLICY)[1]["extra_body"] == {"max_tokens": 99, "top_k": 3}


def test_another_integration_gets_a_copy_with_its_own_fields_set():
    model = OtherProvider()
    copied, options = with_role_policy(model, POLICY)
    assert options == {} and copied is not model
    assert (copied.temperature, copied.num_predict, copied.default_request_timeout) == (0.9, 99, 7)
    assert (model.temperature, model.num_predict) == (0.0, 10)  # the model passed in is untouched


def _rate_limited(retry_after: str) -> openai.RateLimitError:
    request = httpx.Request("POST", "https://provider.invalid/v1/chat/completions")
    response = httpx.Response(429, request=request, headers={"retry-after": retry_after})
    return openai.RateLimitError("slow down", response=response, body=None)


def _models(primary: BaseChatModel, fallback: BaseChatModel | None = None) -> ModelSet:
    models = ModelSet.uniform(primary).with_policies(**{role: POLICY for role in ROLES})
    return models.with_fallbacks({"tasklist": fallback}) if fallback is not None else models


def test_a_retry_after_longer_than_the_deadline_left_is_final_and_moves_to_the_fallback():
    primary = ScriptedModel({"tasklist.draft": [_rate_limited("30")]})
    fallback = ScriptedModel({"tasklist.draft": ["# Draft"]})
    started = time.perf_counter()
    with deadline_scope(2):
        result = invoke_text("tasklist.draft", [HumanMessage(content="draft")], _models(primary, fallback))
    assert time.perf_counter() - started < 1  # no 30 s wait, no retry past the deadline
    assert result.text == "# Draft" and primary.count("tasklist.draft") == 1
    values = result.metrics["tasklist.draft"]
    assert values["fallbacks"] == 1 and values["retries"] == 0 and values["model:ScriptedModel"] == 1


def test_the_runs_own_deadline_never_falls_back():
    primary = ScriptedModel({"tasklist.draft": [TimeoutError("deadline")]})
    fallback = ScriptedModel({"tasklist.draft": ["# Draft"]})
    with pytest.raises(ContractTimeout):
        invoke_text("tasklist.draft", [HumanMessage(content="draft")], _models(primary, fallback))
    assert fallback.count("tasklist.draft") == 0


def test_a_provider_timeout_falls_back_after_its_retry():
    timeout = openai.APITimeoutError(request=httpx.Request("POST", "https://provider.invalid/v1"))
    primary = ScriptedModel({"tasklist.draft": [timeout, timeout]})
    fallback = ScriptedModel({"tasklist.draft": ["# Draft"]})
    result = invoke_text("tasklist.draft", [HumanMessage(content="draft")], _models(primary, fallback))
    assert result.text == "# Draft" and primary.count("tasklist.draft") == 2
    assert result.metrics["tasklist.draft"]["retries"] == 1 and result.metrics["tasklist.draft"]["fallbacks"] == 1

"""ScriptedModel: responses keyed by contract name, recorded calls, clear errors when unscripted."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from pydantic import BaseModel, ConfigDict

from reins.runtime.contracts import ContractError, invoke_contract, invoke_text, invoke_tool_turn
from reins.runtime.standins.scripted import ScriptedModel, UnscriptedCallError


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    summary: str


ASK = [HumanMessage(content="what now?")]


def test_dict_response_is_structured_output(fast_models):
    model = ScriptedModel({"assistant.answer": [{"summary": "done"}]})
    result = invoke_contract("assistant.answer", Answer, ASK, fast_models(model))
    assert result.value == Answer(summary="done")
    assert model.calls[0].structured is True


def test_str_response_is_free_text(fast_models):
    model = ScriptedModel({"tasklist.draft": ["# Draft"]})
    assert invoke_text("tasklist.draft", ASK, fast_models(model)).text == "# Draft"


def test_str_response_can_be_json_for_a_structured_call(fast_models):
    model = ScriptedModel({"assistant.answer": ['{"summary": "from text"}']})
    assert invoke_contract("assistant.answer", Answer, ASK, fast_models(model)).value.summary == "from text"


def test_ai_message_response_carries_tool_calls(fast_models):
    message = AIMessage(content="", tool_calls=[{"name": "plan-subagent", "args": {}, "id": "c1", "type": "tool_call"}])
    model = ScriptedModel({"delivery.manager": [message, message]})

    first = invoke_tool_turn("delivery.manager", ASK, fast_models(model), [])
    second = invoke_tool_turn("delivery.manager", ASK, fast_models(model), [])

    assert [call["name"] for call in first.message.tool_calls] == ["plan-subagent"]
    assert second.message.tool_calls == first.message.tool_calls
    assert message.usage_metadata is None  # the scripted message itself is never mutated


def test_exception_response_is_raised(fast_models):
    model = ScriptedModel({"tasklist.draft": [RuntimeError("model crashed")]})
    with pytest.raises(RuntimeError, match="model crashed"):
        invoke_text("tasklist.draft", ASK, fast_models(model))
    assert model.count("tasklist.draft") == 1


def test_callable_script_receives_the_messages(fast_models):
    seen: list[str] = []

    def answer(messages):
        seen.append(messages[-1].content)
        return {"summary": f"echo {len(seen)}"}

    model = ScriptedModel({"assistant.answer": answer})
    models = fast_models(model)

    results = [invoke_contract("assistant.answer", Answer, ASK, models).value.summary for _ in range(3)]

    assert results == ["echo 1", "echo 2", "echo 3"]  # a callable never runs out
    assert seen == ["what now?"] * 3


def test_callable_inside_a_list_is_called_in_turn(fast_models):
    model = ScriptedModel({"assistant.answer": [{"summary": "first"}, lambda messages: {"summary": str(len(messages))}]})
    models = fast_models(model)
    assert invoke_contract("assistant.answer", Answer, ASK, models).value.summary == "first"
    assert invoke_contract("assistant.answer", Answer, ASK, models).value.summary == "1"


def test_list_responses_are_consumed_in_order_then_exhausted(fast_models):
    model = ScriptedModel({"tasklist.draft": ["one", "two"]})
    models = fast_models(model)
    assert [invoke_text("tasklist.draft", ASK, models).text for _ in range(2)] == ["one", "two"]

    with pytest.raises(UnscriptedCallError, match=r"ran out of responses for contract 'tasklist.draft' after 2 call"):
        invoke_text("tasklist.draft", ASK, models)


def test_unscripted_contract_names_itself_and_the_scripted_ones(fast_models):
    model = ScriptedModel({"tasklist.draft": ["x"], "assistant.intent": ["y"]})

    with pytest.raises(UnscriptedCallError) as caught:
        invoke_text("delivery.plan", ASK, fast_models(model))

    message = str(caught.value)
    assert "'delivery.plan'" in message
    assert "assistant.intent, tasklist.draft" in message
    assert model.contracts_called() == ["delivery.plan"]  # the attempt is still recorded


def test_unscripted_call_is_not_mistaken_for_a_contract_failure(fast_models):
    # A missing script is a test bug, not a model failure: it must not be swallowed into a repair.
    model = ScriptedModel({})
    with pytest.raises(UnscriptedCallError):
        invoke_contract("assistant.answer", Answer, ASK, fast_models(model))
    assert not isinstance(UnscriptedCallError("x"), ContractError)
    assert model.count("assistant.answer") == 1


def test_calls_record_contract_role_and_shape(fast_models):
    model = ScriptedModel({"assistant.intent": ["QA"], "delivery.manager": [AIMessage(content="")]})
    models = fast_models(model)

    def note(text: str) -> str:
        """Take a note."""
        return text

    invoke_text("assistant.intent", ASK, models)
    invoke_tool_turn("delivery.manager", ASK, models, [note])

    intent, manager = model.calls
    assert (intent.contract, intent.role, intent.structured, intent.tool_names) == ("assistant.intent", "classify", False, ())
    assert (manager.contract, manager.role, manager.tool_names) == ("delivery.manager", "manager", ("note",))
    assert intent.messages == tuple(ASK)
    assert model.contracts_called() == ["assistant.intent", "delivery.manager"]
    assert (model.count("assistant.intent"), model.count("delivery.plan")) == (1, 0)


def test_a_direct_call_without_a_contract_is_labelled_unlabelled():
    model = ScriptedModel({"unlabelled": ["plain"]})
    assert model.invoke("hello").content == "plain"
    assert (model.calls[0].contract, model.calls[0].role) == ("unlabelled", "unlabelled")


@pytest.mark.parametrize("entry", [{"summary": "x"}, "text", 3], ids=["dict", "str", "int"])
def test_a_script_entry_must_be_a_list_or_callable(entry):
    with pytest.raises(TypeError, match="must be a list of responses or a callable"):
        ScriptedModel({"assistant.answer": entry})


def test_callables_run_outside_the_lock_so_parallel_calls_can_meet(fast_models):
    barrier = threading.Barrier(2, timeout=5)

    def meet(messages):
        barrier.wait()  # would deadlock if the model held its lock while calling us
        return "met"

    model = ScriptedModel({"delivery.general_review": [meet, meet]})
    models = fast_models(model)

    with ThreadPoolExecutor(max_workers=2) as pool:
        texts = list(pool.map(lambda _: invoke_text("delivery.general_review", ASK, models).text, range(2)))

    assert texts == ["met", "met"]
    assert model.count("delivery.general_review") == 2


def test_top_level_callables_also_run_outside_the_lock(fast_models):
    barrier = threading.Barrier(2, timeout=5)

    def meet(messages):
        barrier.wait()
        return "met"

    model = ScriptedModel({"delivery.risk_review": meet})
    models = fast_models(model)

    with ThreadPoolExecutor(max_workers=2) as pool:
        texts = list(pool.map(lambda _: invoke_text("delivery.risk_review", ASK, models).text, range(2)))

    assert texts == ["met", "met"]

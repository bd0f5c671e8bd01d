"""A prompt's structured inputs travel in each call's metadata beside the contract's name (sync and
async, on every call of the contract: the repair too), plain messages carry none, and a real
provider's request never contains them."""

from __future__ import annotations

import asyncio
import gc
import json

from langchain_core.messages import HumanMessage, SystemMessage

from reins.runtime.contracts import ainvoke_contract, invoke_contract, invoke_text
from reins.runtime.llm.models import ModelSet
from reins.runtime.llm.prompt_inputs import HeldInputs, Prompt, Tagged, held_inputs, inputs_of
from reins.runtime.standins.scripted import ScriptedModel
from reins.schemas.delivery import PolishedSummary

MESSAGES = [SystemMessage(content="Polish the summary."), HumanMessage(content="<summary>\nx\n</summary>")]
INPUTS = {"status": "pass", "summary": "x"}


def test_the_inputs_reach_every_call_of_the_contract_in_its_metadata():
    model = ScriptedModel({"delivery.report_polish": [{"summary": ""}, {"summary": "In short: x."}]})  # one repair
    result = invoke_contract("delivery.report_polish", PolishedSummary, Prompt(MESSAGES, INPUTS), ModelSet.uniform(model))
    assert result.value.summary == "In short: x."
    assert [call.inputs for call in model.calls] == [INPUTS, INPUTS]
    assert [len(call.messages) for call in model.calls] == [2, 3]  # the prompt itself is unchanged


def test_the_async_driver_sends_the_same_inputs():
    model = ScriptedModel({"delivery.report_polish": [{"summary": "In short: x."}]})
    asyncio.run(ainvoke_contract("delivery.report_polish", PolishedSummary, Prompt(MESSAGES, INPUTS),
                                 ModelSet.uniform(model)))
    assert [call.inputs for call in model.calls] == [INPUTS]


def test_plain_messages_carry_no_inputs():
    model = ScriptedModel({"tasklist.draft": ["# Draft"]})
    invoke_text("tasklist.draft", MESSAGES, ModelSet.uniform(model))
    assert inputs_of(MESSAGES) is None
    assert [call.inputs for call in model.calls] == [{}]


def test_a_prompt_is_its_messages_and_a_tagged_piece_its_text():
    prompt = Prompt(MESSAGES, INPUTS)
    assert prompt == MESSAGES and inputs_of(prompt) == INPUTS
    piece = Tagged("<findings>\n[]\n</findings>", {"findings": []})
    assert piece == "<findings>\n[]\n</findings>" and piece.inputs == {"findings": []}
    assert json.dumps({"text": piece}) == json.dumps({"text": str(piece)})  # renders as plain text


def test_the_metadata_holds_a_handle_that_resolves_only_while_the_contract_runs():
    held = HeldInputs(INPUTS)
    handle = held.handle
    assert dict(held_inputs(handle)) == INPUTS and held_inputs("inputs-0") == {} and held_inputs(None) == {}
    del held
    gc.collect()
    assert held_inputs(handle) == {}  # nothing outlives the contract that held it

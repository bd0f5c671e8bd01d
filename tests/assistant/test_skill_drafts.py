"""Skills from experience: three successes on one topic propose a draft; it is listed only after a
person approves (or edits) it through the interrupt; rejected drafts never are."""

from __future__ import annotations

import pytest
from langgraph.types import Command

from reins.policies.assistant.memory import user_namespace
from reins.runtime.tools import skill_tools
from tests.assistant.helpers import answer, block, chat_registry, complex_, done, prompt_of, qa, summaries, tool_call

DRAFT = {"name": "rate-convert", "description": "Convert money with a fetched rate.", "instructions": "Call the calculator with amount*rate."}
REFLECTION = {"went_well": "calc", "went_wrong": "nothing", "next_time": "multiply by the rate", "keywords": ["rate", "convert"]}


@pytest.fixture
def skill_registry():
    registry = chat_registry()
    skill_tools.register(registry)
    return registry


def _script(draft=DRAFT) -> dict:
    def intent(messages):
        text = str(messages[-1].content)
        if "load it" in block(text, "request"):
            return complex_("load_skill")
        return complex_("calculator") if "convert" in block(text, "request") else qa()

    def step(messages):
        text = str(messages[-1].content)
        if '"ok": true' in block(text, "observations"):
            return done()
        if "load it" in block(text, "request"):
            return tool_call("load_skill", name="rate-convert")
        return tool_call("calculator", expression="10*1.1")

    return {
        "assistant.intent": intent,
        "assistant.step": step,
        "assistant.answer": lambda messages: answer("10*1.1 = 11.", "success"),
        "assistant.reflection": lambda messages: REFLECTION,
        "assistant.skill_draft": [draft],
    }


def _config(thread: str) -> dict:
    return {"configurable": {"thread_id": thread}}


def _index(run) -> str:
    return block(prompt_of(run.model, "assistant.intent"), "skills")


def _three_successes(run, **context) -> dict:
    for _ in range(3):
        result = run.ask("convert 10 EUR at rate 1.1", thread="work", human_review=True, **context)
    return result


def test_a_draft_is_listed_only_after_a_person_approves_it(runner, skill_registry):
    run = runner(_script(), registry=skill_registry)
    run.ask("convert 10 EUR at rate 1.1", thread="work", human_review=True)
    run.ask("convert 10 EUR at rate 1.1", thread="work", human_review=True)
    assert run.model.count("assistant.skill_draft") == 0  # two successes are not enough
    paused = run.ask("convert 10 EUR at rate 1.1", thread="work", human_review=True)
    assert run.model.count("assistant.skill_draft") == 1
    [pending] = paused["__interrupt__"]
    assert pending.value["kind"] == "skill_draft" and pending.value["draft"] == DRAFT
    assert paused["reply"] == "10*1.1 = 11."  # the answer was given before the pause
    assert run.store.search(user_namespace("local", "skills"))[0].value["status"] == "pending"

    run.ask("hello", thread="elsewhere")
    assert "rate-convert" not in _index(run)  # pending: not listed

    run.graph.invoke(Command(resume={"type": "maybe"}), _config("work"), context={"human_review": True})
    again = run.graph.get_state(_config("work")).interrupts
    assert again[0].value["error"] == "answer with a type among approve, edit, reject"  # asked again
    done_state = run.graph.invoke(Command(resume={"type": "approve"}), _config("work"), context={"human_review": True})
    assert summaries(done_state, "skill-review") == ["the reviewer approved skill rate-convert; listed from the next turn"]
    assert run.graph.get_state(_config("work")).interrupts == ()

    run.ask("hello", thread="elsewhere")
    assert "- rate-convert: Convert money with a fetched rate." in _index(run).splitlines()
    loaded = run.ask("load it please", thread="third")
    assert loaded["records"][0]["output"].startswith("Skill rate-convert (skill text: guidance only")
    assert "Call the calculator with amount*rate." in loaded["records"][0]["output"]

    _three_successes(run)  # a fourth, fifth … success on the same topic proposes nothing new
    assert run.model.count("assistant.skill_draft") == 1


def test_an_edited_draft_is_listed_as_edited_and_a_rejected_one_never(runner, skill_registry):
    run = runner(_script(), registry=skill_registry)
    _three_successes(run)
    edited = {**DRAFT, "name": "fx-convert", "description": "Edited by a person."}
    run.graph.invoke(Command(resume={"type": "edit", "draft": edited}), _config("work"), context={"human_review": True})
    run.ask("hello", thread="elsewhere")
    assert "- fx-convert: Edited by a person." in _index(run) and "rate-convert" not in _index(run)

    other = runner(_script(), registry=skill_registry)
    _three_successes(other)
    result = other.graph.invoke(Command(resume={"type": "reject", "reason": "too narrow"}), _config("work"),
                                context={"human_review": True})
    assert summaries(result, "skill-review") == ["the reviewer rejected skill rate-convert; it is not listed"]
    stored = other.store.search(user_namespace("local", "skills"))[0].value
    assert (stored["status"], stored["reason"]) == ("rejected", "too narrow")
    other.ask("hello", thread="elsewhere")
    assert "rate-convert" not in _index(other)


def test_no_draft_is_proposed_in_a_run_nobody_reviews(runner, skill_registry):
    run = runner(_script(), registry=skill_registry)
    for _ in range(4):
        result = run.ask("convert 10 EUR at rate 1.1", thread="work")
    assert run.model.count("assistant.skill_draft") == 0 and "__interrupt__" not in result
    assert run.store.search(user_namespace("local", "skills")) == []

"""OfflineModel: the responder registry, the encoder pass-through and the generic answer."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ConfigDict, Field

from reins.runtime.contracts import ContractError, invoke_contract, invoke_text, invoke_tool_turn
from reins.runtime.standins.offline import OfflineModel, OfflineRequest, framework, registered_contracts, responder


class Intent(BaseModel):
    model_config = ConfigDict(extra="forbid")
    intent: str
    words: int = Field(ge=0)


@pytest.fixture
def registry(monkeypatch):
    """An empty responder registry for this test; the pipelines' responders are left untouched."""
    isolated: dict = {}
    monkeypatch.setattr(framework, "_RESPONDERS", isolated)
    return isolated


@pytest.fixture
def offline(fast_models):
    return fast_models(OfflineModel())


def _ask(text: str) -> list:
    return [SystemMessage(content="Classify the request."), HumanMessage(content=text)]


def test_responder_answers_its_contract_from_the_input(registry, offline):
    @responder("assistant.intent")
    def classify(request: OfflineRequest) -> dict:
        words = request.user.split()
        return {"intent": "QA" if request.user.endswith("?") else "SIMPLE_TOOL", "words": len(words)}

    question = invoke_contract("assistant.intent", Intent, _ask("what is reins?"), offline)
    command = invoke_contract("assistant.intent", Intent, _ask("add 2 and 3"), offline)

    assert question.value == Intent(intent="QA", words=3)
    assert command.value == Intent(intent="SIMPLE_TOOL", words=4)
    assert registered_contracts() == ["assistant.intent"]


def test_request_helpers_read_tagged_blocks(registry, offline):
    seen: dict = {}

    @responder("tasklist.draft")
    def draft(request: OfflineRequest) -> str:
        seen.update(
            contract=request.contract,
            role=request.role,
            structured=request.structured,
            system=request.system,
            plan=request.block("plan"),
            missing=request.block("absent", "none"),
            allowed=request.json_block("allowed_actions"),
            broken=request.json_block("broken", default="fallback"),
        )
        return "# Tasks"

    prompt = [
        SystemMessage(content="Draft a task list."),
        HumanMessage(content="<plan>\nold plan\n</plan>"),
        HumanMessage(
            content='<plan>\n## Goal\nShip v2\n</plan>\n<allowed_actions>\n["ask_clarification"]\n</allowed_actions>'
            "\n<broken>\n{not json\n</broken>"
        ),
    ]
    assert invoke_text("tasklist.draft", prompt, offline).text == "# Tasks"
    assert seen == {
        "contract": "tasklist.draft",
        "role": "tasklist",
        "structured": False,
        "system": "Draft a task list.",
        "plan": "## Goal\nShip v2",  # the last block wins
        "missing": "none",
        "allowed": ["ask_clarification"],
        "broken": "fallback",
    }


def test_answers_are_deterministic(registry, offline):
    @responder("assistant.intent")
    def classify(request: OfflineRequest) -> dict:
        return {"intent": request.user.upper(), "words": len(request.user)}

    first = invoke_contract("assistant.intent", Intent, _ask("same input"), offline).value
    second = invoke_contract("assistant.intent", Intent, _ask("same input"), offline).value
    assert first == second


def test_encoder_role_passes_a_json_draft_through(registry, offline):
    calls: list[tuple[str, bool]] = []

    @responder("assistant.intent")
    def classify(request: OfflineRequest) -> dict:
        calls.append((request.role, request.structured))
        return {"intent": "COMPLEX", "words": 2}

    result = invoke_contract("assistant.intent", Intent, _ask("plan things"), offline, mode="two_step")

    assert result.value == Intent(intent="COMPLEX", words=2)
    assert calls == [("classify", False)]  # the responder drafts; the encoder never reaches it
    counts = result.metrics["assistant.intent"]
    assert (counts["business_calls"], counts["encoder_calls"], counts["repair_calls"]) == (1, 1, 0)


def test_encoder_cannot_invent_fields_from_a_prose_draft(registry, offline):
    @responder("assistant.intent")
    def prose(request: OfflineRequest) -> str:
        return "The user wants a plan."

    with pytest.raises(ContractError) as caught:
        invoke_contract("assistant.intent", Intent, _ask("plan things"), offline, mode="two_step")

    assert {issue.code for issue in caught.value.issues} == {"missing"}
    assert caught.value.metrics["assistant.intent"]["encoder_calls"] == 1
    assert caught.value.metrics["assistant.intent"]["repair_calls"] == 1


def test_contract_without_a_responder_gets_the_generic_answer(registry, offline):
    text = invoke_text("assistant.answer", _ask("hello"), offline).text
    assert "offline rule-based stand-in" in text and "REINS_MODEL" in text
    assert "rule-based" in OfflineModel().invoke("hello").content


def test_structured_call_without_a_responder_fails_its_contract(registry, offline):
    with pytest.raises(ContractError):
        invoke_contract("assistant.answer", Intent, _ask("hello"), offline)


def test_duplicate_responder_registration_is_rejected(registry):
    @responder("delivery.plan")
    def first(request: OfflineRequest) -> str:
        return "one"

    with pytest.raises(ValueError, match="already registered"):

        @responder("delivery.plan")
        def second(request: OfflineRequest) -> str:
            return "two"

    assert registry["delivery.plan"] is first


def test_responder_can_emit_tool_calls(registry, offline):
    @responder("delivery.manager")
    def manager(request: OfflineRequest) -> AIMessage:
        first_tool = request.tool_names[0]
        return AIMessage(content="", tool_calls=[{"name": first_tool, "args": {}, "id": "c1", "type": "tool_call"}])

    def plan_subagent(note: str = "") -> str:
        """Write the plan."""
        return note

    turn = invoke_tool_turn("delivery.manager", _ask("deliver"), offline, [plan_subagent])
    assert [call["name"] for call in turn.message.tool_calls] == ["plan_subagent"]


def test_offline_usage_is_counted(registry, offline):
    @responder("tasklist.draft")
    def draft(request: OfflineRequest) -> str:
        return "x" * 40

    counts = invoke_text("tasklist.draft", _ask("y" * 80), offline).metrics["tasklist.draft"]
    assert counts["output_tokens"] == 10
    assert counts["input_tokens"] == (len("Classify the request.") + 80) // 4


def test_structured_output_parses_like_a_provider_integration():
    payload = '{"intent": "QA", "words": 1}'
    assert OfflineModel().with_structured_output(Intent).invoke(payload) == Intent(intent="QA", words=1)
    assert OfflineModel().with_structured_output(Intent.model_json_schema()).invoke(payload) == {"intent": "QA", "words": 1}
    raw = OfflineModel().with_structured_output(Intent, include_raw=True).invoke('{"intent": "QA", "words": -1}')
    assert raw["parsed"] is None and raw["parsing_error"] is not None and isinstance(raw["raw"], AIMessage)


def test_the_pipelines_register_only_known_contracts():
    from reins.runtime.contracts import CONTRACT_ROLES

    assert set(registered_contracts()) <= set(CONTRACT_ROLES)


def test_stemming_from_many_threads_gives_the_stems_of_one_thread():
    """The parallel reviewers stem words from executor threads under ``invoke``; a shared Snowball
    stemmer without a lock gave wrong stems and IndexErrors there (a reviewer then failed)."""
    import itertools
    import sys
    import threading

    import snowballstemmer

    from reins.runtime.standins.offline import text_rules as delivery

    bases = ("connect", "relate", "generous", "nation", "rational", "hope", "operat", "formal", "sensitiv",
             "adjust", "depend", "stor", "patch", "secur", "authent")
    suffixes = ("ional", "ization", "ations", "fulness", "iveness", "alities", "ing", "edly", "ments", "ously")
    words = [base + suffix + end for base, suffix in itertools.product(bases, suffixes) for end in ("", "s", "es", "ly")]
    reference = snowballstemmer.stemmer("english")
    expected = {word: reference.stemWord(word) for word in words}
    delivery._stem.cache_clear()  # cold cache: every word goes to the shared stemmer
    stemmed: dict[str, str] = {}
    errors: list[BaseException] = []

    def stem_some(k: int) -> None:
        try:
            for word in words[k % 4::4]:
                stemmed[word] = delivery._stem(word)
        except Exception as error:  # collected, asserted below
            errors.append(error)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=stem_some, args=(k,)) for k in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
        delivery._stem.cache_clear()

    assert errors == []
    assert stemmed == expected

"""schemas/assistant.py: strict contracts (unknown fields, bounds, cross-field rules)."""

import pytest
from pydantic import ValidationError

from reins.schemas.assistant import AssistantAnswer, AssistantIntent, AssistantReflection, AssistantStep, MemoryNote

PLAN = {"goal": "answer", "steps": [{"id": 1, "tool": "calculator", "purpose": "add"}, {"id": 2, "tool": "clock", "purpose": "time"}]}


@pytest.mark.parametrize(
    ("payload", "valid"),
    [
        ({"intent": "QA", "reason": "chat"}, True),
        ({"intent": "SIMPLE_TOOL", "reason": "one call", "plan": None}, True),
        ({"intent": "COMPLEX", "reason": "two calls", "plan": PLAN}, True),
        ({"intent": "COMPLEX", "reason": "no plan"}, False),
        ({"intent": "QA", "reason": "plan", "plan": PLAN}, False),
        ({"intent": "CHAT", "reason": "x"}, False),
        ({"intent": "QA", "reason": "   "}, False),
        ({"intent": "QA", "reason": "x" * 301}, False),
        ({"intent": "QA", "reason": "x", "extra": 1}, False),
        ({"intent": "COMPLEX", "reason": "str id", "plan": {"goal": "g", "steps": [{"id": "1", "tool": "clock", "purpose": "p"}]}}, False),
        ({"intent": "COMPLEX", "reason": "float id", "plan": {"goal": "g", "steps": [{"id": 1.0, "tool": "clock", "purpose": "p"}]}}, False),
        ({"intent": "COMPLEX", "reason": "bool id", "plan": {"goal": "g", "steps": [{"id": True, "tool": "clock", "purpose": "p"}]}}, False),
        ({"intent": "QA", "reason": 5}, False),
        ({"intent": "COMPLEX", "reason": "dup", "plan": {"goal": "g", "steps": [PLAN["steps"][0]] * 2}}, False),
        ({"intent": "COMPLEX", "reason": "order", "plan": {"goal": "g", "steps": PLAN["steps"][::-1]}}, False),
        ({"intent": "COMPLEX", "reason": "many", "plan": {"goal": "g", "steps": [{"id": i, "tool": "clock", "purpose": "p"} for i in range(1, 12)]}}, False),
        ({"intent": "COMPLEX", "reason": "empty", "plan": {"goal": "g", "steps": []}}, False),
        ({"intent": "COMPLEX", "reason": "bad tool", "plan": {"goal": "g", "steps": [{"id": 1, "tool": "Bad Tool!", "purpose": "p"}]}}, False),
    ],
)
def test_intent_contract(payload, valid):
    if valid:
        AssistantIntent.model_validate(payload)
    else:
        with pytest.raises(ValidationError):
            AssistantIntent.model_validate(payload)


@pytest.mark.parametrize(
    ("payload", "valid"),
    [
        ({"calls": []}, True),
        ({"calls": [{"tool": "calculator", "args": {"expression": "1+1"}}]}, True),
        ({"calls": [{"tool": "plan-subagent", "args": {}}]}, True),  # shape only; the scope decides later
        ({"calls": [{"tool": "../etc", "args": {}}]}, False),
        ({"calls": [{"tool": "calculator", "args": {"expression": "x" * 5000}}]}, False),
        ({"calls": [{"tool": "calculator", "args": {f"k{i}": i for i in range(13)}}]}, False),
        ({"calls": [{"tool": "calculator", "args": {}, "extra": True}]}, False),
        ({"calls": [], "note": "n" * 1001}, False),
    ],
)
def test_step_contract(payload, valid):
    if valid:
        assert AssistantStep.model_validate(payload).finished is (not payload["calls"])
    else:
        with pytest.raises(ValidationError):
            AssistantStep.model_validate(payload)


@pytest.mark.parametrize(
    ("payload", "valid"),
    [
        ({"summary": "126", "evidence": ["calculator → 126"], "verdict": "success"}, True),
        ({"summary": "126", "verdict": "partial"}, True),
        ({"summary": "", "verdict": "success"}, False),
        ({"summary": "x" * 2001, "verdict": "success"}, False),
        ({"summary": "x", "verdict": "great"}, False),
        ({"summary": "x", "evidence": ["e"] * 11, "verdict": "success"}, False),
        ({"summary": "x", "evidence": "one string", "verdict": "success"}, False),
        ({"summary": "x", "verdict": "success", "confidence": 0.9}, False),
    ],
)
def test_answer_contract(payload, valid):
    if valid:
        AssistantAnswer.model_validate(payload)
    else:
        with pytest.raises(ValidationError):
            AssistantAnswer.model_validate(payload)


@pytest.mark.parametrize(
    ("keywords", "valid"),
    [(["rate"], True), (["Rate", "fx"], True), ([], False), (["a"] * 2, False), (["rate", "RATE"], False), (["k"] * 9, False)],
)
def test_reflection_contract(keywords, valid):
    payload = {"went_well": "ok", "went_wrong": "nothing", "next_time": "fetch first", "keywords": keywords}
    if valid:
        assert all(k == k.lower() for k in AssistantReflection.model_validate(payload).keywords)
    else:
        with pytest.raises(ValidationError):
            AssistantReflection.model_validate(payload)


def test_memory_note_rejects_unexpected_content():
    MemoryNote.model_validate({"text": "Lesson", "keywords": ["a"], "created_at": "2026-01-01T00:00:00+00:00"})
    with pytest.raises(ValidationError):
        MemoryNote.model_validate({"text": "Lesson", "created_at": "now", "kind": "instruction"})

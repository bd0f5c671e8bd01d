"""policies/assistant/answer_check.py: claims need execution records; internal markers never reach users."""

import pytest

from reins.policies.assistant.answer_check import (
    assign_plan_step,
    credit_plan_steps,
    check_answer,
    evidence_from_records,
    fallback_summary,
    final_verdict,
    numbers_without_support,
    find_unsupported_claims,
    merge_evidence,
    strip_internal_markers,
    unfinished_plan_steps,
)
from tests.assistant.helpers import chat_registry

# The aliases come from the tools' declarations, as the assistant passes them.
ALIASES = chat_registry().for_scope("chat").aliases()

CALC_126 = {"n": 1, "step": 1, "tool": "calculator", "args": {"expression": "(17+25)*3"}, "ok": True, "output": "126"}
CALC_FAILED = {"n": 1, "step": None, "tool": "calculator", "args": {"expression": "9**9**9"}, "ok": False, "output": "refused"}
CLOCK = {"n": 2, "step": 2, "tool": "clock", "args": {}, "ok": True, "output": "2026-01-02T03:04:05+00:00"}
HALF = {"n": 1, "step": None, "tool": "calculator", "args": {"expression": "7/2"}, "ok": True, "output": "3.5"}


@pytest.mark.parametrize(
    ("text", "records", "flagged"),
    [
        ("I called the calculator and got 42.", [], [("calculator", "no_execution")]),
        ("The calculator returned 126.", [CALC_126], []),
        ("I called the calculator and got 42.", [CALC_126], [("calculator", "value_mismatch")]),
        ("According to the calculator, (17+25)*3 = 126.", [CALC_126], []),
        ("The calculator returned 3.5 for 7/2.", [HALF], []),
        ("The calculator said 126.", [CALC_FAILED], [("calculator", "no_execution")]),
        ("I can use the calculator for that.", [], []),
        ("The answer is 42.", [], []),
        ("The clock says it is 2026-01-02T03:04:05+00:00.", [CLOCK], []),
        ("The clock says it is 09:00.", [CLOCK], [("clock", "value_mismatch")]),
        ("I fetched the page and it said hello.", [], [("http_get", "no_execution")]),
        ("I used read_doc and the plan has 3 phases.", [], [("read_doc", "no_execution")]),
        ("计算器返回了 42。", [], [("calculator", "no_execution")]),
    ],
)
def test_claims_need_a_matching_execution(text, records, flagged):
    assert [(f.tool, f.reason) for f in find_unsupported_claims(text, records, ALIASES)] == flagged


@pytest.mark.parametrize(
    ("text", "expected", "removed"),
    [
        ("Hello <ACTION>{\"tool\":\"calculator\"}</ACTION>there.", "Hello there.", 1),
        ("<PLAN>{\"goal\": \"x\"}</PLAN>Result: 5", "Result: 5", 1),
        ("Done. <plan>step 1</plan>", "Done.", 1),
        ('Use {"type":"tool","tool":"write","parameters":{"path":"a"},"stepId":1} now', "Use now", 1),
        ('Calling {"name": "calculator", "arguments": {"expression": "1+1"}}.', "Calling .", 1),
        ('Data: {"a": 1} stays', 'Data: {"a": 1} stays', 0),
        ("stray </observations> tag", "stray tag", 1),
        ("Open file:///etc/passwd now", "Open now", 1),
        ("```json\n{\"tool_calls\": []}\n```\nAnswer: 3", "Answer: 3", 1),
        ("plain answer", "plain answer", 0),
        ("Math: 3 < 4 and {braces", "Math: 3 < 4 and {braces", 0),
    ],
)
def test_strip_internal_markers(text, expected, removed):
    cleaned, count = strip_internal_markers(text)
    assert cleaned == expected
    assert count == removed


@pytest.mark.parametrize(
    ("proposed", "kwargs", "expected"),
    [
        ("success", {}, "success"),
        ("success", {"stop_reason": "step_limit"}, "partial"),
        ("success", {"unfinished_steps": (2,)}, "partial"),
        ("success", {"removed_claims": 1}, "partial"),
        ("success", {"records": [CALC_126, CALC_FAILED]}, "partial"),
        ("success", {"records": [CALC_FAILED]}, "failure"),
        ("partial", {"records": [CALC_126]}, "partial"),
        ("failure", {"records": [CALC_126]}, "failure"),
        ("excellent", {}, "failure"),
        ("success", {"intent_failed": True}, "failure"),
        ("partial", {"intent_failed": True, "records": [CALC_126]}, "failure"),
        ("success", {"unsupported_numbers": ("51",)}, "failure"),
        ("success", {"records": [CALC_126], "unsupported_numbers": ()}, "success"),
    ],
)
def test_runtime_caps_the_verdict(proposed, kwargs, expected):
    assert final_verdict(proposed, **kwargs) == expected


@pytest.mark.parametrize(
    ("summary", "records", "asked", "unsupported"),
    [
        ("The answer is 17*3.", [], "what is 17*3?", ()),  # only echoes the request
        ("The answer is 51.", [], "what is 17*3?", ("51",)),  # a result no tool produced
        ("The answer is 126.", [CALC_126], "what is (17+25)*3?", ()),
        ("The answer is 127.", [CALC_126], "what is (17+25)*3?", ("127",)),
        ("The answer is 126.", [CALC_FAILED], "what is (17+25)*3?", ("126",)),  # a failed run supports nothing
        ("No numbers here.", [], "hello", ()),
    ],
)
def test_numbers_without_support(summary, records, asked, unsupported):
    assert numbers_without_support(summary, records, asked) == unsupported


PLAN = [{"id": 1, "tool": "calculator", "purpose": "a"}, {"id": 2, "tool": "clock", "purpose": "b"}, {"id": 3, "tool": "calculator", "purpose": "c"}]


@pytest.mark.parametrize(
    ("records", "tool", "assigned", "unfinished"),
    [
        ([], "calculator", 1, (1, 2, 3)),
        ([{**CALC_126, "step": 1}], "calculator", 3, (2, 3)),
        ([{**CALC_126, "step": 1}], "clock", 2, (2, 3)),
        ([{**CALC_126, "step": 1}, {**CLOCK, "step": 2}, {**CALC_126, "step": 3}], "calculator", None, ()),
        ([{**CALC_FAILED, "step": 1}], "calculator", 1, (1, 2, 3)),
        ([], "http_get", None, (1, 2, 3)),
    ],
)
def test_plan_progress_is_decided_by_the_runtime(records, tool, assigned, unfinished):
    assert assign_plan_step(PLAN, records, tool) == assigned
    assert unfinished_plan_steps(PLAN, records) == unfinished


@pytest.mark.parametrize(
    ("records", "batch", "credited"),
    [
        ([], ["calculator", "calculator", "clock"], (1, 3, 2)),  # one parallel step serves each its own step
        ([], ["calculator", "calculator", "calculator"], (1, 3, None)),  # a third calculator call serves none
        ([], ["clock", "calculator"], (2, 1)),
        ([{**CALC_126, "step": 1}], ["calculator", "calculator"], (3, None)),
        ([{**CALC_FAILED, "step": 1}], ["calculator", "calculator"], (1, 3)),  # a failed step is served again
        ([], ["http_get", "calculator"], (None, 1)),
        ([], [], ()),
    ],
)
def test_each_call_of_a_parallel_batch_is_credited_to_its_own_plan_step(records, batch, credited):
    assert credit_plan_steps(PLAN, records, batch) == credited
    # one call alone is credited as before
    assert tuple(assign_plan_step(PLAN, records, tool) for tool in batch[:1]) == credited[:1]


def test_check_answer_removes_the_fabricated_sentence_and_keeps_the_rest():
    checked = check_answer(
        "I called the calculator and got 42. Ask me anything else.",
        ["calculator gave 42", "the user asked a question"],
        records=[],
        aliases=ALIASES,
    )
    assert checked.summary == "Ask me anything else."
    assert checked.evidence == ("the user asked a question",)
    assert [(f.tool, f.reason) for f in checked.findings] == [("calculator", "no_execution")] * 2
    assert "removed 2 claim(s)" in checked.notes[0]


def test_evidence_comes_from_records_and_is_bounded():
    records = [CALC_126, CALC_FAILED] + [dict(CALC_126, n=i) for i in range(3, 15)]
    evidence = evidence_from_records(records)
    assert evidence[:2] == ["calculator((17+25)*3) → 126", "calculator(9**9**9) → error: refused"]
    assert len(evidence) == 10
    assert merge_evidence(["a", "b"], ["b", "c"]) == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("records", "contains"),
    [([], "could not produce"), ([CALC_FAILED], "could not produce"), ([CALC_126], "calculator → 126")],
)
def test_fallback_summary(records, contains):
    assert contains in fallback_summary(records)


SENT_OK = [{"tool": "transfer_money", "args": {"recipient": "Bob"}, "ok": True, "output": "sent"}]
SENT_REJECTED = [{"tool": "transfer_money", "args": {"recipient": "Bob"}, "ok": False,
                  "output": "rejected by the user: not this one"}]
READ_ONLY = [{"tool": "calculator", "args": {"expression": "1+1"}, "ok": True, "output": "2"}]


@pytest.mark.parametrize("text, records, removed", [
    ("I have sent it.", SENT_REJECTED, ["I have sent it."]),
    ("I've transferred the money to Bob.", [], ["I've transferred the money to Bob."]),
    ("The payment was successfully sent. Anything else?", READ_ONLY, ["The payment was successfully sent."]),
    ("I have sent it.", SENT_OK, []),
    ("I have not sent it: you rejected the transfer.", SENT_REJECTED, []),
    ("The transfer has not been sent.", SENT_REJECTED, []),
    ("I can send it once you approve.", SENT_REJECTED, []),
    ("已发送。", SENT_REJECTED, ["已发送。"]),
])
def test_a_claim_that_an_action_was_done_needs_a_successful_side_effect(text, records, removed):
    checked = check_answer(text, [], records, aliases=ALIASES, side_effects={"transfer_money"})
    assert [f.sentence for f in checked.findings] == removed
    assert all(f.reason == "no_side_effect" for f in checked.findings)
    for sentence in removed:
        assert sentence not in checked.summary

"""Tool calls written as text: what is recovered, and everything that stays no call at all.

The accepted shapes are the ones llama-server really sent (Qwen2.5-Coder-0.5B, see the captures the
wire tests replay): bare JSON, one fenced block per reviewer, padding up to ``max_tokens``.
"""

import pytest

from reins.policies.models.text_tool_calls import TextToolCall, is_padding, recover_text_tool_calls

PLAN = ("plan-subagent",)
REVIEW = ("review-subagent", "risk-subagent", "boundary-subagent")
NOTE = {"note": "Plan the banner."}


def fenced(name: str, note: str) -> str:
    return f'```json\n{{\n  "name": "{name}",\n  "arguments": {{\n    "note": "{note}"\n  }}\n}}\n```'


THREE_FENCES = "\n\n\n".join(fenced(name, "Review it.") for name in REVIEW)


@pytest.mark.parametrize(
    ("text", "offered", "expected"),
    [
        ('{"name": "plan-subagent", "arguments": {"note": "Plan the banner."}}', PLAN, [("plan-subagent", NOTE)]),
        ('  \n{"name": "plan-subagent", "arguments": {}}\n ', PLAN, [("plan-subagent", {})]),
        # llama.cpp with tool_choice "required": the call, then padding up to max_tokens
        ('{"name": "plan-subagent", "arguments": {}}.' + "0" * 200, PLAN, [("plan-subagent", {})]),
        ('{"name": "plan-subagent", "arguments": {}}\n\n\n   \n', PLAN, [("plan-subagent", {})]),
        ('{"name": "plan-subagent", "arguments": {}}}}}', PLAN, [("plan-subagent", {})]),
        (fenced("plan-subagent", "Plan the banner."), PLAN, [("plan-subagent", NOTE)]),
        ('```\n{"name": "plan-subagent", "arguments": {}}\n```', PLAN, [("plan-subagent", {})]),
        (THREE_FENCES, REVIEW, [(name, {"note": "Review it."}) for name in REVIEW]),
        (THREE_FENCES + "\n\n" + "." * 50, REVIEW, [(name, {"note": "Review it."}) for name in REVIEW]),
        ('<tool_call>\n{"name": "plan-subagent", "arguments": {}}\n</tool_call>', PLAN, [("plan-subagent", {})]),
        ("".join(f'<tool_call>{{"name": "{n}", "arguments": {{}}}}</tool_call>\n' for n in REVIEW), REVIEW,
         [(n, {}) for n in REVIEW]),
        ('[{"name": "review-subagent", "arguments": {}}, {"name": "risk-subagent", "arguments": {}}]', REVIEW,
         [("review-subagent", {}), ("risk-subagent", {})]),
        ('{"name": "review-subagent", "arguments": {}} {"name": "review-subagent", "arguments": {}}', REVIEW,
         [("review-subagent", {}), ("review-subagent", {})]),  # recovered as written: the policy refuses it
        ('{"name": "plan-subagent", "arguments": {"note": "x", "plan": "mine"}}', PLAN,
         [("plan-subagent", {"note": "x", "plan": "mine"})]),  # arguments are the policy's to judge
    ],
    ids=["bare", "bare-whitespace", "padding-zeros", "padding-blank", "padding-closers", "fenced", "fenced-no-lang",
         "three-fences", "three-fences-padding", "tag", "three-tags", "list", "duplicate-call", "extra-argument"],
)
def test_recovered(text, offered, expected):
    calls = recover_text_tool_calls(text, offered)
    assert calls == tuple(TextToolCall(name, args) for name, args in expected)


@pytest.mark.parametrize(
    ("text", "offered"),
    [
        ("", PLAN),
        ("   \n", PLAN),
        ("I would start by asking the plan-subagent to draft a plan.", PLAN),
        ('Calling plan-subagent: {"name": "plan-subagent", "arguments": {}}', PLAN),
        ('{"name": "plan-subagent", "arguments": {}}\nThat starts the plan.', PLAN),
        ('{"name": "plan-subagent", "arguments": {}} ok', PLAN),
        ('{"name": "task-subagent", "arguments": {}}', PLAN),  # registered, but not offered in this phase
        ('{"name": "shell", "arguments": {"cmd": "rm -rf /"}}', PLAN),
        ('{"name": "plan-subagent", "arguments": {"note": "Understand the requirement and wr', PLAN),  # cut off
        (fenced("review-subagent", "a") + "\n\n```json\n{\n  \"name\": \"risk-subagent\",\n  \"argu", REVIEW),
        ('```json\n{"name": "plan-subagent", "arguments": {}}\n', PLAN),  # fence never closed
        ('<tool_call>{"name": "plan-subagent", "arguments": {}}', PLAN),  # tag never closed
        ('{"name": "plan-subagent", "arguments": {}}\n{"name": "plan-sub', PLAN),  # a second call cut off
        ('{"name": "plan-subagent", "arguments": {}}\n[', PLAN),
        ('{"name": "plan-subagent"}', PLAN),
        ('{"name": "plan-subagent", "arguments": "[]"}', PLAN),  # a string that holds no object
        ('{"name": "plan-subagent", "arguments": "{} and more"}', PLAN),
        ('{"name": "plan-subagent", "arguments": {}, "type": "function"}', PLAN),
        ('{"name": "plan-subagent", "arguments": {}, "id": 1}', PLAN),  # an id is a string or nothing
        ('{"name": "plan-subagent", "arguments": {}, "parameters": {}}', PLAN),  # which one?
        ('{"name": "plan-subagent", "name": "plan-subagent", "arguments": {}}', PLAN),  # duplicate key
        ('{"tool": "plan-subagent", "arguments": {}}', PLAN),
        ("[]", PLAN),
        ('["plan-subagent"]', PLAN),
        ('```json\n{"name": "plan-subagent", "arguments": {}} extra\n```', PLAN),
        ("<stage_intents>\n<stage_task>\n<stage_task_id>\n", PLAN),  # Gemma's answer to the same turn
        ('{"name": "plan-subagent", "arguments": {}}', ()),
        ("0" * 10, PLAN),  # padding alone is no call
    ],
    ids=["empty", "blank", "prose-naming-a-tool", "prose-before", "prose-after", "word-after", "not-offered",
         "unknown-tool", "cut-off", "cut-off-second-fence", "open-fence", "open-tag", "cut-off-second-call",
         "opener-after", "no-arguments", "string-not-object", "string-with-text", "extra-key", "numeric-id",
         "both-argument-keys", "duplicate-key", "wrong-key",
         "empty-list", "list-of-names", "text-in-fence", "gemma-tags", "nothing-offered", "padding-only"],
)
def test_not_recovered(text, offered):
    assert recover_text_tool_calls(text, offered) is None


def test_an_overlong_text_is_not_read():
    call = '{"name": "plan-subagent", "arguments": {}}'
    assert recover_text_tool_calls(call + " " * 40_000, PLAN) is None


@pytest.mark.parametrize(("tail", "padding"), [(".000", True), ("\n\n", True), ("}]", True), ("--", True),
                                                ("a", False), ("{", False), ("`", False), ('"', False), ("<", False),
                                                ("é", False)])
def test_padding(tail, padding):
    assert is_padding(tail) is padding

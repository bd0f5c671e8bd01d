"""Replanning through the graph: two failures in a row replan once, the third failure skips the step
and the answer says so; a failing replan contract skips too."""

from __future__ import annotations

from tests.assistant.helpers import REFLECTION, answer, block, complex_, done, prompt_of, summaries, tool_call

BAD_DOC = "docs://missing.md"


def _replan(*tools: str) -> dict:
    steps = [{"id": i, "tool": tool, "purpose": f"then {tool}"} for i, tool in enumerate(tools, start=1)]
    return {"reason": "read_doc keeps failing", "plan": {"goal": "answer anyway", "steps": steps}}


def test_a_step_failing_twice_is_replanned_once_and_its_third_failure_skips_it(runner):
    run = runner(
        {
            "assistant.intent": [complex_("calculator", "read_doc")],
            "assistant.step": [
                tool_call("calculator", expression="2+2"),
                tool_call("read_doc", uri=BAD_DOC), tool_call("read_doc", uri="docs://missing-too.md"),
                tool_call("read_doc", uri="docs://still-missing.md"),  # the replacement step fails: skipped
                done(),
            ],
            "assistant.replan": [_replan("read_doc")],
            "assistant.answer": [answer("2+2 = 4.", "success")],
            "assistant.reflection": [REFLECTION],
        }
    )
    result = run.ask("add 2+2 and read the doc")
    assert run.model.count("assistant.replan") == 1
    replan_prompt = prompt_of(run.model, "assistant.replan")
    assert "Plan step 2 failed twice in a row" in replan_prompt
    assert block(replan_prompt, "observations").count('"ok": false') == 2

    plan = result["plan"]
    assert [(s["id"], s["tool"]) for s in plan["steps"]] == [(1, "calculator"), (3, "read_doc")]
    assert (plan["replaced"], plan["replacement"], plan["skipped"]) == ([2], [3], [3])
    assert [r["step"] for r in result["records"]] == [1, 2, 2, 3]
    assert summaries(result, "replan") == ["step 2 failed twice; replanned as step(s) 3",
                                           "step 3 failed again; skipped; no plan step is left, the loop ends"]
    assert run.model.count("assistant.step") == 4  # step 1 done, step 3 skipped: the model is not asked again
    assert "Plan steps skipped after repeated failures: step 3 (read_doc: then read_doc)." in result["reply"]
    # The skipped step is not "unfinished": no check → act round is spent on it.
    assert result["check"]["unfinished_steps"] == [] and run.model.count("assistant.answer") == 1
    assert result["answer"]["verdict"] == "partial"
    # The step after the replan sees the new plan.
    assert '"replacement": [3]' in block(prompt_of(run.model, "assistant.step", 3), "plan")


def test_replanning_happens_at_most_once_per_turn(runner):
    run = runner(
        {
            "assistant.intent": [complex_("read_doc", "read_doc")],
            "assistant.step": [
                tool_call("read_doc", uri="docs://a.md"), tool_call("read_doc", uri="docs://b.md"),  # step 1 twice
                tool_call("read_doc", uri="docs://c.md"), tool_call("read_doc", uri="docs://d.md"),  # the new steps
                done(),
            ],
            "assistant.replan": [_replan("read_doc", "read_doc")],
            "assistant.answer": [answer("Nothing could be read.", "failure")],
            "assistant.reflection": [REFLECTION],
        }
    )
    result = run.ask("read both docs")
    assert run.model.count("assistant.replan") == 1
    assert result["plan"]["skipped"] == [3, 4]
    assert summaries(result, "replan") == [
        "step 1 failed twice; replanned as step(s) 3, 4", "step 3 failed again; skipped",
        "step 4 failed again; skipped; no plan step is left, the loop ends",
    ]


def test_a_failing_replan_skips_the_step(runner):
    run = runner(
        {
            "assistant.intent": [complex_("read_doc", "calculator")],
            "assistant.step": [tool_call("read_doc", uri="docs://a.md"), tool_call("read_doc", uri="docs://b.md"),
                               tool_call("calculator", expression="1+1"), done()],
            "assistant.replan": [{"reason": "x"}, {"reason": "x"}],  # invalid twice (once + the repair)
            "assistant.answer": [answer("1+1 = 2.", "success")],
            "assistant.reflection": [REFLECTION],
        }
    )
    result = run.ask("read a doc and add 1+1")
    assert result["plan"]["skipped"] == [1] and result["plan"]["replaced"] == [1]
    assert summaries(result, "replan")[0].startswith("step 1 failed twice; the replan failed (contract")
    assert [r["step"] for r in result["records"]] == [1, 1, 2]
    assert result["answer"]["verdict"] == "partial"


def test_simple_tool_turns_never_replan(runner):
    from tests.assistant.helpers import simple

    run = runner(
        {
            "assistant.intent": [simple()],
            "assistant.step": [tool_call("read_doc", uri="docs://a.md")],
            "assistant.answer": [answer("It failed.", "failure")],
        }
    )
    run.ask("read docs://a.md")
    assert run.model.count("assistant.replan") == 0


def test_a_skipped_step_ends_the_loop_when_no_other_step_is_left(runner):
    retries = [tool_call("read_doc", uri=f"docs://missing-{i}.md") for i in range(12)]  # a model that never gives up
    run = runner(
        {
            "assistant.intent": [complex_("read_doc")],
            "assistant.step": retries,
            "assistant.replan": [_replan("read_doc")],
            "assistant.answer": [answer("The document could not be read.", "failure")],
        }
    )
    result = run.ask("read the doc")
    assert [r["step"] for r in result["records"]] == [1, 1, 2]  # two failures, the replan's step fails: skipped
    assert result["plan"]["skipped"] == [2]
    assert run.model.count("assistant.step") == 3 and not result.get("stop_reason")  # not the step limit
    assert summaries(result, "replan")[-1] == "step 2 failed again; skipped; no plan step is left, the loop ends"
    assert "Plan steps skipped after repeated failures: step 2" in result["reply"]
    assert result["answer"]["verdict"] == "failure"


def test_after_a_skip_the_loop_ends_once_the_other_steps_are_done(runner):
    run = runner(
        {
            "assistant.intent": [complex_("read_doc", "calculator")],
            "assistant.step": [
                tool_call("read_doc", uri="docs://a.md"), tool_call("read_doc", uri="docs://b.md"),  # step 1 twice
                tool_call("read_doc", uri="docs://c.md"),  # the replacement fails: skipped
                tool_call("calculator", expression="1+1"),  # the last step left
                *[tool_call("read_doc", uri=f"docs://retry-{i}.md") for i in range(8)],  # never asked for
            ],
            "assistant.replan": [_replan("read_doc", "calculator")],
            "assistant.answer": [answer("1+1 = 2.", "success")],
            "assistant.reflection": [REFLECTION],
        }
    )
    result = run.ask("read the doc and add 1+1")
    assert [(r["tool"], r["step"], r["ok"]) for r in result["records"]] == [
        ("read_doc", 1, False), ("read_doc", 1, False), ("read_doc", 3, False), ("calculator", 4, True)]
    assert result["plan"]["skipped"] == [3]
    assert run.model.count("assistant.step") == 4 and not result.get("stop_reason")
    assert result["answer"]["verdict"] == "partial"  # a step was skipped

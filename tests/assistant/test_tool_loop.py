"""The assistant's bounded tool loop with ScriptedModel: guards, observations, scope, intents."""

from __future__ import annotations

import itertools

from langchain_core.messages import AIMessage
from pydantic import BaseModel, ConfigDict

from reins.policies.tools.loop_guards import REPEATED_CALL, STALLED, STEP_LIMIT, STOP_MESSAGES
from reins.runtime.tools.registry import RegisteredTool, SubagentToolDefinition
from tests.assistant.helpers import (
    CHAT_TOOLS,
    REFLECTION,
    answer,
    block,
    complex_,
    done,
    prompt_of,
    qa,
    simple,
    summaries,
    tool_call,
)


def test_a_loop_that_would_run_forever_stops_at_step_ten(runner):
    counter = itertools.count(1)
    run = runner(
        {
            "assistant.intent": [complex_("calculator")],
            # Always another, different call: only the step budget can end this.
            "assistant.step": lambda messages: tool_call("calculator", expression=f"{next(counter)}+1"),
            "assistant.answer": [answer("I computed several sums.")],
            "assistant.reflection": [REFLECTION],
        }
    )
    result = run.ask("keep adding forever")
    assert run.model.count("assistant.step") == 10
    assert [r["output"] for r in result["records"]] == [str(n + 1) for n in range(1, 11)]
    assert result["stop_reason"] == STEP_LIMIT
    assert STOP_MESSAGES[STEP_LIMIT] in result["reply"]
    assert result["answer"]["verdict"] == "partial"  # the model said success; the runtime caps it
    assert block(prompt_of(run.model, "assistant.answer"), "stop") == STOP_MESSAGES[STEP_LIMIT]
    assert run.model.contracts_called()[-2:] == ["assistant.answer", "assistant.reflection"]


def test_a_repeated_identical_call_stops_at_the_third_attempt(runner):
    run = runner(
        {
            "assistant.intent": [complex_("calculator", "clock")],
            "assistant.step": lambda messages: tool_call("calculator", expression="1+1"),
            "assistant.answer": [answer("1+1 = 2")],
            "assistant.reflection": [REFLECTION],
        }
    )
    result = run.ask("add one and one, repeatedly")
    assert run.model.count("assistant.step") == 3  # the third proposal is refused, not executed
    assert len(result["records"]) == 2
    assert result["stop_reason"] == REPEATED_CALL
    assert STOP_MESSAGES[REPEATED_CALL] in result["reply"]
    assert "Plan steps not finished: step 2 (clock: use clock)" in result["reply"]
    assert result["check"]["unfinished_steps"] == [2]


def test_a_stall_is_detected_when_different_calls_keep_returning_the_same(runner):
    expressions = iter(["2+2", "1+3", "3+1", "8/2", "16/4"])
    run = runner(
        {
            "assistant.intent": [complex_("calculator")],
            "assistant.step": lambda messages: tool_call("calculator", expression=next(expressions)),
            "assistant.answer": [answer("It is 4.")],
            "assistant.reflection": [REFLECTION],
        }
    )
    result = run.ask("find four")
    assert run.model.count("assistant.step") == 3
    assert [r["output"] for r in result["records"]] == ["4", "4", "4"]
    assert result["stop_reason"] == STALLED
    assert STOP_MESSAGES[STALLED] in result["reply"]
    assert any("stall" in line for line in summaries(result, "tool"))


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid")
    recipient: str
    body: str


def _messenger(registry, sent: list[str], reply: str = "None"):
    """A trusted side-effecting tool whose every success says the same thing."""
    def send(recipient: str, body: str) -> str:
        sent.append(recipient)
        if reply.startswith("error"):
            raise ConnectionError(reply)
        return reply

    registry.register(RegisteredTool("send_message", "Send a direct message", _Message, frozenset({"chat"}),
                                     func=send, approval="run", sinks=("recipient", "body"), free=("body",), actions=("send",)))
    return registry


def test_messages_to_different_people_with_the_same_acknowledgement_are_not_a_stall(runner, registry):
    sent: list[str] = []
    people = ["Alice", "Bob", "Charlie", "Eve"]
    run = runner(
        {
            "assistant.intent": [complex_("send_message")],
            "assistant.step": [tool_call("send_message", recipient=p, body=f"Congrats {p}") for p in people] + [done()],
            "assistant.answer": [answer("I wrote to all four.")] * 2,
            "assistant.reflection": [REFLECTION],
        },
        registry=_messenger(registry, sent),
    )
    # One "send" a person: after the first result (untrusted content) the data-flow policy lets no more
    # side effects of one kind run unasked than the request's words ask for.
    result = run.ask("send congratulations to Alice, send them to Bob, send to Charlie and send to Eve")
    assert "__interrupt__" not in result, result.get("__interrupt__")
    assert sent == people
    assert [r["output"] for r in result["records"]] == ["None"] * 4
    assert [r.get("changed") for r in result["records"]] == [True] * 4
    assert result.get("stop_reason") is None


def test_a_side_effect_that_keeps_failing_the_same_way_still_stalls(runner, registry):
    sent: list[str] = []
    people = ["Alice", "Bob", "Charlie", "Eve", "Mallory"]
    run = runner(
        {
            # One plan step a person (with one step, its skip after two failures would end the loop first).
            "assistant.intent": [complex_(*["send_message"] * len(people))],
            "assistant.step": [tool_call("send_message", recipient=p, body="hi") for p in people] + [done()],
            "assistant.answer": [answer("I could not write.")] * 2,
            "assistant.reflection": [REFLECTION],
        },
        registry=_messenger(registry, sent, reply="error: mail server down"),
    )
    result = run.ask("send hi to Alice, Bob, Charlie, Eve and Mallory")
    assert result["stop_reason"] == STALLED
    assert len(result["records"]) == 3 and not any(r.get("changed") for r in result["records"])


class _NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


def test_unknown_tools_bad_arguments_and_tool_exceptions_become_redacted_observations(runner, registry):
    def explode() -> str:
        raise RuntimeError("boom with key sk-abcdefghijklmnop1234 in /srv/app/secret/config.py")

    registry.register(RegisteredTool("flaky", "always fails", _NoArgs, frozenset({"chat"}), func=explode, read_only=True))
    script = iter(
        [
            tool_call("plan-subagent", note="plan it"),
            tool_call("calculator", expr="1+1"),
            tool_call("flaky"),
            tool_call("calculator", expression="2*3"),
            done(),
        ]
    )
    run = runner(
        {
            "assistant.intent": [complex_("plan-subagent", "calculator")],
            "assistant.step": lambda messages: next(script),
            "assistant.answer": [answer("2*3 = 6.")],
            "assistant.reflection": [REFLECTION],
        },
        registry=registry,
    )
    result = run.ask("plan and compute")
    outputs = [(r["tool"], r["ok"], r["output"]) for r in result["records"]]
    # A malformed call is one observation of {path, code} pairs, and names the tools there are.
    assert outputs[0][:2] == ("plan-subagent", False)
    assert outputs[0][2].startswith('malformed tool call: [{"path": "calls.0.tool", "code": "unknown_tool"}]')
    assert "available tools: calculator, clock" in outputs[0][2]
    assert outputs[1][:2] == ("calculator", False) and outputs[1][2].startswith(
        'malformed tool call: [{"path": "calls.0.args.expression", "code": "missing"}, '
        '{"path": "calls.0.args.expr", "code": "extra_forbidden"}]')
    assert outputs[2][:2] == ("flaky", False)
    assert "sk-abcdefghijklmnop1234" not in outputs[2][2] and "/srv/app" not in outputs[2][2]
    assert outputs[3] == ("calculator", True, "6")
    # The planned sub-agent step was dropped: the chat scope does not have it.
    assert result["plan"]["steps"] == [{"id": 2, "tool": "calculator", "purpose": "use calculator"}]
    assert result["plan"]["unavailable"] == ["plan-subagent"]
    assert "Planned tools not available here: plan-subagent." in result["reply"]
    assert result["answer"]["verdict"] == "partial"
    # The failed observations reached the model on the next turn, redacted.
    observed = block(prompt_of(run.model, "assistant.step"), "observations")
    assert "unknown_tool" in observed and "sk-abcdefghijklmnop1234" not in observed


def test_chat_cannot_reach_the_managers_subagent_tools(runner, registry):
    registry.register(
        RegisteredTool(
            name="plan-subagent",
            description="the manager's planner",
            args_schema=_NoArgs,
            scopes=frozenset({"delivery-chain-manager"}),
            subagent=SubagentToolDefinition(
                "plan-subagent", "plan", ("requirement",), "plan", ("no tools",), ("delivery-chain-manager",)
            ),
        )
    )
    assert "plan-subagent" in {t.name for t in registry.for_scope("delivery-chain-manager")}
    assert registry.for_scope("chat").names == CHAT_TOOLS
    run = runner(
        {
            "assistant.intent": [simple()],
            "assistant.step": [tool_call("plan-subagent")],
            "assistant.answer": [answer("No plan.")],
        },
        registry=registry,
    )
    result = run.ask("ask the planner")
    step_calls = [c for c in run.model.calls if c.contract == "assistant.step"]
    assert [c.tool_names for c in step_calls] == [CHAT_TOOLS]  # what the model was bound to
    assert all(c.tool_names == () for c in run.model.calls if c.contract != "assistant.step")
    assert result["records"][0]["ok"] is False and "unknown_tool" in result["records"][0]["output"]


def test_simple_tool_makes_exactly_one_call(runner):
    run = runner(
        {
            "assistant.intent": [simple()],
            "assistant.step": [tool_call("calculator", expression="(17+25)*3"), tool_call("clock")],
            "assistant.answer": [answer("(17+25)*3 = 126.")],
        }
    )
    result = run.ask("what is (17+25)*3?")
    assert run.model.contracts_called() == ["assistant.intent", "assistant.step", "assistant.answer"]
    assert [(r["tool"], r["output"]) for r in result["records"]] == [("calculator", "126")]
    assert result["answer"] == {
        "summary": "(17+25)*3 = 126.",
        "evidence": ["calculator((17+25)*3) → 126"],
        "verdict": "success",
    }


def test_qa_answers_without_tools(runner):
    run = runner({"assistant.intent": [qa()], "assistant.answer": [answer("Paris is the capital of France.")]})
    result = run.ask("What is the capital of France?")
    assert run.model.contracts_called() == ["assistant.intent", "assistant.answer"]
    assert result["records"] == [] and result["answer"]["verdict"] == "success"
    assert result["reply"] == "Paris is the capital of France."
    assert result["messages"][-1].content == "Paris is the capital of France."


def test_a_fabricated_tool_result_is_caught_and_removed(runner):
    run = runner(
        {
            "assistant.intent": [qa()],
            "assistant.answer": [answer("I called the calculator and got 42.", evidence=["calculator returned 42"])],
        }
    )
    result = run.ask("what is six times seven?")
    assert run.model.count("assistant.step") == 0  # nothing was executed
    assert "42" not in result["reply"]
    assert "no tool produced" in result["reply"]
    assert result["check"]["removed_claims"] == [{"tool": "calculator", "reason": "no_execution"}] * 2
    assert result["answer"]["evidence"] == []
    assert result["answer"]["verdict"] == "partial"
    assert any("removed 2 claim(s)" in line for line in summaries(result, "check"))


def test_secrets_the_model_echoes_never_reach_the_reply(runner):
    echoed = "Your key sk-echo0123456789abcdef and the file /home/alice/.ssh/id_rsa are noted."
    run = runner({"assistant.intent": [qa()], "assistant.answer": [answer(echoed, evidence=[echoed])]})
    result = run.ask("remember sk-echo0123456789abcdef")
    visible = str([result["reply"], result["answer"], result["messages"][-1].content])
    assert "sk-echo" not in visible and "/home/alice" not in visible
    assert "[redacted]" in result["reply"] and "[path]" in result["reply"]


def test_a_claim_contradicting_the_record_is_removed_and_the_true_part_kept(runner):
    run = runner(
        {
            "assistant.intent": [simple()],
            "assistant.step": [tool_call("calculator", expression="(17+25)*3")],
            "assistant.answer": [answer("The calculator returned 128. <ACTION>{\"tool\":\"calculator\"}</ACTION>It is a number.")],
        }
    )
    result = run.ask("what is (17+25)*3?")
    assert result["reply"].startswith("It is a number.")
    assert "128" not in result["reply"] and "ACTION" not in result["reply"]
    assert result["check"]["removed_claims"] == [{"tool": "calculator", "reason": "value_mismatch"}]
    assert result["check"]["markers_removed"] == 1


def test_an_invalid_intent_fails_closed_to_qa_without_tools(runner):
    run = runner(
        {
            "assistant.intent": [{"intent": "RUN_EVERYTHING"}, {"intent": "COMPLEX", "reason": "no plan"}],
            "assistant.answer": [answer("I can answer without tools.", verdict="partial")],
        }
    )
    result = run.ask("do something")
    assert run.model.contracts_called() == ["assistant.intent", "assistant.intent", "assistant.answer"]
    assert result["intent"] == "QA" and result["records"] == []
    assert any(line.startswith("QA (fallback") for line in summaries(result, "classify-intent"))


def test_a_failed_intent_never_ends_in_success_even_when_the_model_says_so(runner):
    # Seen on a real small model: the intent contract failed twice, the calculator never ran, and
    # "The answer is 17*3" came back as a success with exit 0.
    run = runner(
        {
            "assistant.intent": [{"intent": "MATH"}, {"intent": "MATH"}],
            "assistant.answer": [answer("The answer is 17*3.", verdict="success")],
        }
    )
    result = run.ask("what is 17*3?")
    assert result["records"] == [] and result["intent_failed"] is True
    assert result["answer"]["verdict"] == "failure"
    assert "no tool ran" in result["reply"] and "unverified" in result["reply"]


def test_a_tool_turn_whose_answer_states_a_number_no_tool_produced_fails(runner):
    run = runner(
        {
            "assistant.intent": [simple()],
            "assistant.step": [tool_call("calculator", expression="17*3"), done()],
            "assistant.answer": [answer("17*3 is 51, and doubled it is 102.", verdict="success")],
        }
    )
    result = run.ask("what is 17*3?")
    assert [r["output"] for r in result["records"]] == ["51"]
    assert result["answer"]["verdict"] == "failure"
    assert "No tool result supports these numbers in the answer: 102." in result["reply"]

    supported = runner(
        {
            "assistant.intent": [simple()],
            "assistant.step": [tool_call("calculator", expression="17*3"), done()],
            "assistant.answer": [answer("17*3 is 51.", verdict="success")],
        }
    ).ask("what is 17*3?")
    assert supported["answer"]["verdict"] == "success"


def test_an_invalid_answer_falls_back_to_the_execution_record(runner):
    run = runner(
        {
            "assistant.intent": [simple()],
            "assistant.step": [tool_call("calculator", expression="(17+25)*3")],
            "assistant.answer": [{"summary": ""}, {"verdict": "yes"}],
        }
    )
    result = run.ask("what is (17+25)*3?")
    assert run.model.count("assistant.answer") == 2  # one call, one repair
    assert "calculator → 126" in result["reply"]
    assert result["answer"]["verdict"] == "partial"


def test_a_model_failure_in_the_loop_still_answers_from_what_ran(runner):
    run = runner(
        {
            "assistant.intent": [complex_("calculator", "clock")],
            "assistant.step": [tool_call("calculator", expression="2+2"), TimeoutError("slow")],
            "assistant.answer": [answer("2+2 = 4.")],
            "assistant.reflection": [REFLECTION],
        }
    )
    result = run.ask("add and tell the time")
    assert result["stop_reason"] == "model_error"
    assert [r["output"] for r in result["records"]] == ["4"]
    assert result["answer"]["verdict"] == "partial"


def test_empty_input_gets_a_clear_answer_without_a_model_call(runner):
    run = runner({})
    result = run.ask("   ")
    assert run.model.calls == []
    assert result["reply"].startswith("Please type a message")


def test_slash_help_needs_no_model(runner):
    run = runner({})  # any model call would raise: nothing is scripted
    result = run.ask("/help")
    assert "/delivery-chain <requirement>" in result["reply"]
    assert run.model.calls == []


def test_with_the_shipped_registry_the_model_is_bound_to_chat_tools_only(runner):
    from reins.runtime.tools.toolbox import default_registry

    shipped = default_registry()
    subagents = {t.name for t in shipped.for_scope("delivery-chain-manager")}
    assert subagents  # the manager's five sub-agents are registered in the same registry
    run = runner(
        {
            "assistant.intent": [simple()],
            "assistant.step": [tool_call("review-subagent", note="review")],
            "assistant.answer": [answer("No review here.")],
        },
        registry=shipped,
    )
    result = run.ask("review my plan")
    bound = [c.tool_names for c in run.model.calls if c.contract == "assistant.step"]
    assert bound == [shipped.for_scope("chat").names] and not subagents & set(bound[0])
    assert set(CHAT_TOOLS) < set(bound[0])
    assert '"code": "unknown_tool"' in result["records"][0]["output"]


def test_three_parallel_calls_for_a_three_step_plan_finish_all_three_steps(runner):
    calls = [{"name": "calculator", "args": {"expression": e}, "id": f"par_{i}", "type": "tool_call"}
             for i, e in enumerate(["1+1", "2+2", "3+3"])]
    summary = "1+1 = 2, 2+2 = 4 and 3+3 = 6."
    run = runner(
        {
            "assistant.intent": [complex_("calculator", "calculator", "calculator")],
            "assistant.step": [AIMessage(content="", tool_calls=calls), done()],
            "assistant.answer": [answer(summary, "success")],
            "assistant.reflection": [REFLECTION],
        }
    )
    result = run.ask("what are 1+1, 2+2 and 3+3?")
    assert [(r["step"], r["output"]) for r in result["records"]] == [(1, "2"), (2, "4"), (3, "6")]
    assert [r["plan_step"] for r in result["trace"] if r["step"].startswith("tool-")] == [1, 2, 3]
    assert result["check"]["unfinished_steps"] == []
    assert result["answer"]["verdict"] == "success"
    assert run.model.count("assistant.answer") == 1  # no check → act round for steps that were done


def test_a_request_that_names_a_tool_calls_it_even_when_the_model_said_qa(runner):
    # Seen on Qwen2.5-Coder-1.5B: "Use the calculator: …" classified QA and answered from its own arithmetic.
    run = runner(
        {
            "assistant.intent": [qa("simple arithmetic")],
            "assistant.step": [tool_call("calculator", expression="(17+25)*3"), done()],
            "assistant.answer": [answer("(17+25)*3 = 126", evidence=["calculator: 126"])],
            "assistant.reflection": [REFLECTION],
        }
    )
    result = run.ask("Use the calculator: what is (17+25)*3?")
    assert result["intent"] == "SIMPLE_TOOL"
    assert [(r["tool"], r["ok"]) for r in result["records"]] == [("calculator", True)]
    assert any("the model said QA; the request asks for the tool calculator" in line
               for line in summaries(result, "classify-intent"))

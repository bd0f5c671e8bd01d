"""Progress events of a turn, and the `reins chat` command line."""

from __future__ import annotations

import io
import json

import pytest
from langchain_core.messages import HumanMessage

from reins.graphs.assistant import build_graph
from reins.cli import main
from reins.cli.chat import exit_code_for
from reins.policies.models.model_notice import STAND_IN_NOTICE
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.offline import OfflineModel
from tests.assistant.helpers import chat_registry


def test_a_turn_emits_safe_progress_events_for_each_tool_step():
    graph = build_graph(models=ModelSet.uniform(OfflineModel()), registry=chat_registry())
    events = [
        chunk
        for chunk in graph.stream(
            {"messages": [HumanMessage(content="compute 2+2 and tell me the time")]},
            {"configurable": {"thread_id": "p"}},
            stream_mode="custom",
        )
    ]
    steps = [(e["step"], e["status"]) for e in events]
    assert steps[0] == ("start", "running") and steps[-1] == ("end", "completed")
    assert ("tool-1", "running") in steps and ("tool-1", "completed") in steps and ("tool-2", "completed") in steps
    assert [s for s, status in steps if status == "completed" and s.startswith("tool-")] == ["tool-1", "tool-2"]
    assert all(e["workflow"] == "assistant" and e["run_id"] == "p" for e in events)
    tool_summaries = [e["summary"] for e in events if e["step"].startswith("tool-") and e["status"] == "completed"]
    assert tool_summaries == ["calculator: ok", "clock: ok"]  # names and status only, never tool output


@pytest.mark.parametrize("message", ["compute 2+2 and tell me the time", "why is the sky blue?", "/help", "   "])
def test_every_trace_record_is_a_step_the_progress_events_show(message):
    graph = build_graph(models=ModelSet.uniform(OfflineModel()), registry=chat_registry())
    events, values = [], {}
    for mode, chunk in graph.stream(
        {"messages": [HumanMessage(content=message)]}, {"configurable": {"thread_id": "t"}}, stream_mode=["custom", "values"]
    ):
        if mode == "custom":
            events.append(chunk)
        else:
            values = chunk
    finished = [(e["step"], e["summary"]) for e in events if e["status"] != "running" and e["step"] not in ("start", "end")]
    assert [(r["step"], r["summary"]) for r in values["trace"]] == finished
    assert values["trace"][0]["step"] == "memory"


@pytest.fixture
def cli_env(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REINS_CHECKPOINT", "memory")
    for name in ("REINS_MODEL", "REINS_MODEL_CHAT", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_chat_once_answers_through_the_calculator(cli_env, capsys):
    assert main(["chat", "--once", "what is (17+25)*3?"]) == 0
    out, err = capsys.readouterr()
    # The stand-in says so first: its answer is a rule's, not a language model's.
    assert out.splitlines()[:3] == [STAND_IN_NOTICE, "(17+25)*3 = 126.", "  · calculator((17+25)*3) → 126"]
    assert "Tool step 1: calculator" in err  # progress of the tool step


def test_chat_once_json(cli_env, capsys):
    assert main(["chat", "--once", "what is 6*7?", "--json", "--new-thread", "j1"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["thread"] == "j1" and payload["intent"] == "SIMPLE_TOOL"
    assert payload["answer"]["verdict"] == "success" and payload["records"][0]["output"] == "42"
    metrics = payload["metrics"]  # the turn's model calls
    assert metrics["business_calls"] >= 3 and metrics["fallbacks"] == 0 and metrics["failed_calls"] == 0
    assert metrics["fallbacks_per_role"] == {} or set(metrics["fallbacks_per_role"].values()) == {0}
    assert metrics["per_contract"]["assistant.intent"]["business_calls"] == 1


SECRET_URL = "http://admin:hunter2pass@evil.example.com/x?api_key=sk-abcdef1234567890ABCD"


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_chat_once_never_shows_secrets_from_the_request(cli_env, capsys, json_flag):
    # The message is redacted before it is stored: the tool only ever sees the placeholder, and
    # evidence and records cannot echo the credentials.
    assert main(["chat", "--once", f"fetch {SECRET_URL}", *json_flag]) == 4
    out, err = capsys.readouterr()
    assert "http_get refused" in out
    for secret in ("hunter2pass", "sk-abcdef1234567890ABCD"):
        assert secret not in out and secret not in err
    if json_flag:
        payload = json.loads(out)
        assert payload["records"][0]["tool"] == "http_get" and "[redacted" in payload["records"][0]["args"]["url"]


@pytest.mark.parametrize(
    ("message", "code", "stream", "text"),
    [
        ("/frobnicate", 2, "out", "Unknown command /frobnicate."),
        ("/delivery-chain", 2, "out", "Usage: /delivery-chain"),
        ("   ", 2, "err", "the message is empty"),
        ("what is 9**9**9?", 4, "out", "exponents above 1000"),
        ("why is the sky blue?", 1, "out", "rule-based stand-in"),
        ("/help", 0, "out", "Commands:"),
    ],
)
def test_chat_once_exit_codes(cli_env, capsys, message, code, stream, text):
    assert main(["chat", "--once", message]) == code
    captured = capsys.readouterr()
    assert text in (captured.out if stream == "out" else captured.err)


def test_interactive_chat_keeps_the_thread_until_exit(cli_env, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("what is 2*21?\n\nwhat time is it?\nexit\nnever read\n"))
    assert main(["chat"]) == 0
    out = capsys.readouterr().out
    assert out.count("assistant> ") == 2
    assert "2*21 = 42." in out and "The current time is " in out


@pytest.mark.parametrize(
    ("values", "code"),
    [
        ({"answer": {"verdict": "success"}}, 0),
        ({"answer": {"verdict": "partial"}}, 1),
        ({"answer": {"verdict": "failure"}}, 4),
        ({}, 4),
        ({"pipeline": {"status": "unknown_command"}, "answer": {"verdict": "failure"}}, 2),
        ({"pipeline": {"status": "blocked"}, "answer": {"verdict": "failure"}}, 3),
        ({"pipeline": {"status": "pass"}, "answer": {"verdict": "success"}}, 0),
    ],
)
def test_exit_code_for(values, code):
    assert exit_code_for(values) == code


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _screen(text: str, columns: int = 80) -> list[str]:
    """What a terminal shows after ``text`` (a terminal emulator: overwritten lines are gone)."""
    import pyte

    screen = pyte.Screen(columns, 40)
    pyte.Stream(screen).feed(text.replace("\n", "\r\n"))
    return [line.rstrip() for line in screen.display if line.strip()]


def test_chat_on_a_terminal_prints_the_reply_as_it_is_written(cli_env, monkeypatch):
    from reins.cli.chat_screen import ChatScreen

    pieces: list[str] = []
    terminal = _Terminal()
    original = ChatScreen.reply

    def spy(self, piece):
        pieces.append(piece)
        original(self, piece)

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(ChatScreen, "reply", spy)
    monkeypatch.setattr("sys.stdout", terminal)
    assert main(["chat", "--once", "what is (17+25)*3?"]) == 0
    assert len(pieces) >= 3 and "".join(pieces) == "(17+25)*3 = 126."
    shown = _screen(terminal.getvalue())
    assert shown[:2] == ["Produced by the offline rule-based stand-in, not a language model (set",
                         "REINS_MODEL to use one; see `reins doctor`)."]  # broken at a word, not at column 80
    end = shown.index("[success]")
    assert shown[end - 2:end + 1] == ["assistant> (17+25)*3 = 126.", "  · calculator((17+25)*3) → 126", "[success]"]
    assert shown[end + 1].startswith("  budget (used/worst case): calls 3/52 · ")  # what the turn used, last


def _rendered(draw) -> list[str]:
    from reins.cli.chat_screen import ChatScreen

    terminal, errors = _Terminal(), _Terminal()
    screen = ChatScreen(terminal, errors)
    screen.console.width = 80
    draw(screen)
    screen.stop()
    return _screen(terminal.getvalue())


def test_a_streamed_reply_the_check_changed_is_replaced_by_the_checked_text(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)

    def draw(screen):
        for piece in ("I called ", "the calculator ", "and got 42."):
            screen.reply(piece)
        screen.finish("No tool produced that result.")

    assert _rendered(draw) == ["assistant> No tool produced that result."]


def test_steps_that_end_while_the_reply_shows_are_printed_above_it_and_a_second_draft_replaces_the_first(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    step = {"type": "workflow-progress", "status": "completed", "title": "Check the answer", "summary": "findings"}

    def draw(screen):
        screen.reply("A first draft ")
        screen.reply("with *no* evidence.")
        screen(step)  # the check sends the turn back to its tools …
        screen.reply("The second draft.")  # … and the next draft replaces the first
        screen(step)
        screen.finish("The second draft.")

    assert _rendered(draw) == ["✓ Check the answer — findings", "✓ Check the answer — findings",
                               "assistant> The second draft."]


def test_chat_json_reports_what_the_turn_used_beside_its_worst_case(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("REINS_HOME", str(tmp_path))
    assert main(["chat", "--once", "what is (17+25)*3?", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    budget = payload["budget"]
    assert budget["worst_case"]["calls"] == 52 and budget["worst_case"]["tool_calls"] == 20
    assert budget["used"]["calls"] == payload["metrics"]["business_calls"] + payload["metrics"]["repair_calls"]
    assert budget["used"]["tool_calls"] == len(payload["records"]) == 1

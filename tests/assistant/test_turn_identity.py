"""A turn acts for the user who started it, also after a pause answered from elsewhere; and every
user id has its own memory, whatever characters it holds."""

from __future__ import annotations

import json

import pytest
from langgraph.types import Command

from reins.cli import main
from reins.policies.assistant.memory import user_namespace
from reins.runtime.tools import memory_tools
from tests.assistant.helpers import answer, qa, simple, tool_call

NOTE = "I deploy on Fridays"
APPROVE = {"type": "approve"}


@pytest.fixture
def memory_registry():
    from tests.assistant.helpers import chat_registry

    registry = chat_registry()
    memory_tools.register(registry)
    return registry


def _script(*steps) -> dict:
    request = lambda messages: str(messages[-1].content).split("<request>")[-1]  # noqa: E731
    return {
        "assistant.intent": lambda messages: simple() if any(w in request(messages) for w in ("remember", "forget")) else qa(),
        "assistant.answer": lambda messages: answer("ok"),
        "assistant.step": list(steps),
    }


def test_the_turn_identity_is_the_context_fields_it_copies():
    from reins.nodes.assistant.context import AssistantContext
    from reins.nodes.assistant.identity import identity_of
    from reins.nodes.assistant.state import TurnIdentity

    assert set(TurnIdentity.__annotations__) <= set(AssistantContext.__dataclass_fields__)
    assert identity_of(AssistantContext(user_id="ann", memory_scope="user")) == {"user_id": "ann", "memory_scope": "user"}
    assert identity_of(None) == {"user_id": "local", "memory_scope": "user"}  # the context's defaults


def _texts(run, user: str) -> list[str]:
    return [item.value["text"] for item in run.store.search(user_namespace(user))]


@pytest.mark.parametrize("resume_context", [None, {"user_id": "local"}, {"user_id": "mallory", "memory_scope": "user"}])
def test_alice_s_resumed_approval_acts_on_alice_s_memory_through_the_python_api(runner, memory_registry, resume_context):
    run = runner(_script(tool_call("remember", text=NOTE), tool_call("remember", text=NOTE),
                         tool_call("forget", about="deploy day")), registry=memory_registry)
    run.ask("remember that I deploy on Fridays", thread="a1", user_id="alice")
    run.ask("remember that I deploy on Fridays", thread="l1")  # user local has the same note
    run.ask("forget the deploy day", thread="f1", user_id="alice")
    assert run.graph.get_state({"configurable": {"thread_id": "f1"}}).interrupts  # paused before deleting

    # Answered with whatever context the caller has (none, another user): the turn is alice's.
    done = run.graph.invoke(Command(resume=APPROVE), {"configurable": {"thread_id": "f1"}}, context=resume_context)
    assert done["records"][-1]["output"] == f"forgot 1 note(s): “{NOTE}”"
    assert _texts(run, "alice") == []
    assert _texts(run, "local") == [NOTE]
    assert run.graph.get_state({"configurable": {"thread_id": "f1"}}).values["identity"] == {
        "user_id": "alice", "memory_scope": "user"}


def test_a_new_turn_starts_with_the_identity_of_its_own_context(runner, memory_registry):
    run = runner(_script(tool_call("remember", text=NOTE), tool_call("remember", text="My cat is Tom")),
                 registry=memory_registry)
    run.ask("remember that I deploy on Fridays", thread="shared", user_id="alice")
    run.ask("remember that my cat is Tom", thread="shared", user_id="bob", memory_scope="user")
    assert run.graph.get_state({"configurable": {"thread_id": "shared"}}).values["identity"] == {
        "user_id": "bob", "memory_scope": "user"}
    assert (_texts(run, "alice"), _texts(run, "bob")) == ([NOTE], ["My cat is Tom"])


@pytest.mark.parametrize(("first", "second"), [("team.lead", "team_lead"), ("x" * 120 + "a", "x" * 120 + "b")])
def test_users_whose_ids_collided_see_only_their_own_notes_through_the_python_api(runner, memory_registry, first, second):
    run = runner(_script(tool_call("remember", text="first's note"), tool_call("remember", text="second's note"),
                         tool_call("forget", about="note")), registry=memory_registry)
    run.ask("remember that", thread="a", user_id=first)
    run.ask("remember that", thread="b", user_id=second)
    assert (_texts(run, first), _texts(run, second)) == (["first's note"], ["second's note"])
    run.ask("forget the note", thread="c", user_id=second)
    run.graph.invoke(Command(resume=APPROVE), {"configurable": {"thread_id": "c"}})
    assert (_texts(run, first), _texts(run, second)) == (["first's note"], [])


# ------------------------------------------------------------------------------------------ CLI


def _notes(user: str, capsys) -> list[str]:
    assert main(["chat", "--memory", "--json", "--user", user]) == 0
    return [note["text"] for note in json.loads(capsys.readouterr().out)["notes"]]


def test_alice_s_resumed_approval_acts_on_alice_s_memory_over_the_cli(sqlite_cli, capsys):
    assert main(["chat", "--user", "alice", "--once", "remember that I deploy on Fridays"]) == 0
    assert main(["chat", "--once", "remember that I deploy on Fridays"]) == 0
    assert main(["chat", "--user", "alice", "--new-thread", "f1", "--once", "forget the deploy day"]) == 5
    capsys.readouterr()

    assert main(["resume", "f1", "--user", "bob", "--decision", json.dumps(APPROVE)]) == 2  # not bob's turn
    assert capsys.readouterr().err.strip() == (
        "reins: error: resume refused: the turn was started by user alice; resume it as that user (or without --user)")
    assert _notes("alice", capsys) == [NOTE]  # the refusal ran nothing

    assert main(["resume", "f1", "--decision", json.dumps(APPROVE)]) == 0  # no --user: the turn's own user
    assert f"forgot 1 note(s): “{NOTE}”" in capsys.readouterr().out
    assert (_notes("alice", capsys), _notes("local", capsys)) == ([], [NOTE])


def test_resume_with_the_user_who_started_the_turn_is_accepted(sqlite_cli, capsys):
    assert main(["chat", "--user", "alice", "--once", "remember that I deploy on Fridays"]) == 0
    assert main(["chat", "--user", "alice", "--new-thread", "f2", "--once", "forget the deploy day"]) == 5
    assert main(["resume", "f2", "--user", "alice", "--decision", json.dumps(APPROVE)]) == 0
    capsys.readouterr()
    assert _notes("alice", capsys) == []


def test_team_lead_and_team_underscore_lead_see_only_their_own_notes_over_the_cli(sqlite_cli, capsys):
    assert main(["chat", "--user", "team.lead", "--once", "remember that the release is on Monday"]) == 0
    assert main(["chat", "--user", "team_lead", "--once", "remember that the budget is frozen"]) == 0
    capsys.readouterr()
    assert _notes("team.lead", capsys) == ["the release is on Monday"]
    assert _notes("team_lead", capsys) == ["the budget is frozen"]
    main(["chat", "--user", "team.lead", "--memory-scope", "user", "--once", "when is the release?"])
    assert "Monday" in capsys.readouterr().out  # recalled by its owner
    main(["chat", "--user", "team_lead", "--memory-scope", "user", "--once", "when is the release?"])
    assert "Monday" not in capsys.readouterr().out  # team.lead's note is not team_lead's

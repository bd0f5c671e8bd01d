"""Memory a user steers: remember / forget on the user's notes, the scope that recalls them, semantic
recall through the store's index, and the `reins chat` flags."""

from __future__ import annotations

import json

import pytest

from reins.policies.models.model_notice import STAND_IN_NOTICE
from langgraph.store.memory import InMemoryStore

from reins.cli import main
from reins.policies.assistant.memory import user_namespace
from reins.runtime.tools import memory_tools
from reins.runtime.persistence.embeddings import LocalEmbeddings
from tests.assistant.helpers import answer, block, chat_registry, prompt_of, qa, simple, summaries, tool_call

NOTE = "I deploy on Fridays"


@pytest.fixture
def memory_registry():
    registry = chat_registry()
    memory_tools.register(registry)
    return registry


def _script(**extra) -> dict:
    return {
        "assistant.intent": lambda messages: simple() if "remember" in str(messages[-1].content).split("<request>")[-1]
        or "forget" in str(messages[-1].content).split("<request>")[-1] else qa(),
        "assistant.answer": lambda messages: answer("ok"),
        **extra,
    }


def test_a_remembered_note_is_recalled_in_a_new_thread_with_user_scope_only(runner, memory_registry):
    run = runner(_script(**{"assistant.step": [tool_call("remember", text=NOTE)]}), registry=memory_registry)
    result = run.ask("remember that I deploy on Fridays", thread="a")
    assert result["records"][0]["output"] == f"remembered: {NOTE}"
    stored = run.store.search(user_namespace("local"))
    assert [(i.value["text"], i.value["kind"]) for i in stored] == [(NOTE, "remembered")]

    run.ask("when do I deploy?", thread="b", memory_scope="user")
    assert block(prompt_of(run.model, "assistant.intent"), "recollections") == f"- You told me: {NOTE}"
    run.ask("when do I deploy?", thread="c", memory_scope="thread")
    assert block(prompt_of(run.model, "assistant.intent"), "recollections") == "(none)"
    run.ask("when do I deploy?", thread="d", memory_scope="user", user_id="bob")  # another user's notes: never
    assert block(prompt_of(run.model, "assistant.intent"), "recollections") == "(none)"


def _close_when_about_releases(texts: list[str]) -> list[list[float]]:
    """A stand-in embedding model: deploying and shipping releases are one topic, the rest another."""
    topic = ("deploy", "ship", "release")
    return [[1.0, 0.0] if any(word in text.lower() for word in topic) else [0.0, 1.0] for text in texts]


@pytest.mark.parametrize(("query", "found"), [("which weekday do we ship?", True), ("tell me about cats", False)])
def test_semantic_recall_finds_a_note_that_shares_no_word_when_the_embedder_says_close(runner, memory_registry, query, found):
    store = InMemoryStore(index={"embed": _close_when_about_releases, "dims": 2, "fields": ["text"]})
    run = runner(_script(**{"assistant.step": [tool_call("remember", text=NOTE)]}), registry=memory_registry, store=store)
    run.ask("remember that I deploy on Fridays", thread="a")
    assert not {"which", "weekday", "ship"} & set(NOTE.lower().split())  # no shared word
    run.ask(query, thread="b", memory_scope="user")
    expected = f"- You told me: {NOTE}" if found else "(none)"
    assert block(prompt_of(run.model, "assistant.intent"), "recollections") == expected


def test_the_local_embedder_is_deterministic_and_matches_word_stems():
    first, second = LocalEmbeddings(), LocalEmbeddings()
    assert first.embed_query(NOTE) == second.embed_query(NOTE)
    note, stem, other = first.embed_documents([NOTE, "deployments this week", "a cat on the mat"])
    similarity = lambda a, b: sum(x * y for x, y in zip(a, b))  # noqa: E731 - unit vectors
    assert similarity(note, stem) >= 0.35 and similarity(note, other) == 0.0


def test_forget_asks_first_then_deletes_the_matching_note_and_the_trace_names_it(runner, memory_registry):
    from langgraph.types import Command

    run = runner(
        _script(**{"assistant.step": [tool_call("remember", text=NOTE), tool_call("remember", text="My cat is Tom"),
                                      tool_call("forget", about="deploy day"), tool_call("forget", about="quantum physics")]}),
        registry=memory_registry,
    )
    run.ask("remember that I deploy on Fridays")  # remember writes only the user's own notes: no pause
    run.ask("remember that my cat is Tom")
    paused = run.ask("forget the deploy day")
    (pause,) = run.graph.get_state({"configurable": {"thread_id": "t1"}}).interrupts
    assert pause.value["tool"] == "forget" and pause.value["args"] == {"about": "deploy day"}
    assert len(run.store.search(user_namespace("local"))) == 2 and not paused.get("records")  # nothing deleted yet
    result = run.graph.invoke(Command(resume={"type": "approve"}), {"configurable": {"thread_id": "t1"}})
    assert summaries(result, "tool") == [f"forget: ok; approved; forgot 1 note(s): “{NOTE}”"]
    assert [i.value["text"] for i in run.store.search(user_namespace("local"))] == ["My cat is Tom"]
    run.ask("forget quantum physics")
    nothing = run.graph.invoke(Command(resume={"type": "approve"}), {"configurable": {"thread_id": "t1"}})
    assert nothing["records"][0] == {**nothing["records"][0], "ok": False, "output": "forget: no note matches that"}
    assert len(run.store.search(user_namespace("local"))) == 1


def test_remember_keeps_no_secret(runner, memory_registry):
    run = runner(_script(**{"assistant.step": [tool_call("remember", text="my key is sk-abcdefghijklmnopqrstuvwx1234")]}),
                 registry=memory_registry)
    run.ask("remember my key")
    [item] = run.store.search(user_namespace("local"))
    assert "sk-abcdefghijklmnopqrstuvwx1234" not in item.value["text"]


def test_reins_chat_remembers_across_runs_by_default_offline(sqlite_cli, capsys):
    assert main(["chat", "--once", "remember that I deploy on Fridays"]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == [STAND_IN_NOTICE, f"I will remember that: {NOTE}"]
    assert main(["chat", "--once", "when do I deploy?"]) == 0  # a new session: recalled
    assert "Fridays" in capsys.readouterr().out.splitlines()[1]
    main(["chat", "--memory-scope", "thread", "--once", "when do I deploy?"])  # thread-only: not recalled
    assert "Fridays" not in capsys.readouterr().out
    assert (sqlite_cli / "memory.db").is_file()  # in REINS_HOME

    assert main(["chat", "--memory", "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert [(n["scope"], n["kind"], n["text"]) for n in notes] == [("user", "remembered", NOTE)]
    assert main(["chat", "--memory"]) == 0
    assert capsys.readouterr().out.rstrip().endswith(f"remembered, {notes[0]['created_at']}] {NOTE}")


def test_reins_chat_memory_flags_refuse_bad_input(sqlite_cli, capsys):
    assert main(["chat", "--memory", "--once", "hi"]) == 2
    assert "--memory lists the notes" in capsys.readouterr().err
    assert main(["chat", "--memory-scope", "everyone", "--once", "hi"]) == 2
    assert "invalid choice: 'everyone'" in capsys.readouterr().err

"""Bad input an outside probe found: each is refused in one clean line or handled in linear time,
and secrets a run meets (in the environment, in a document it reads) never reach a checkpoint, a
model or a reply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from reins.cli import main
from reins.graphs.tasklist_agent import ResumeError, resume_command
from reins.policies.tasklist.plan import plan_reference
from reins.runtime.persistence.checkpoint import strict_serializer
from reins.runtime.config.paths import BUNDLED_DOCS
from reins.runtime.resources import ResourceResolver
from reins.runtime.standins.scripted import ScriptedModel
from tests.assistant.helpers import answer, qa
from tests.tasklist.builders import graph_for, tasklist_script

MEGABYTE = 1_000_000
PLAN = "docs://versions/v0.2.0-ready.md"


# ------------------------------------------------------------------- a request's longest word


@pytest.mark.timeout(120)  # the quadratic scan took 16 s at 40k characters and never ended at 1 MB
@pytest.mark.parametrize(
    "word",
    ["a" * MEGABYTE, "a" * MEGABYTE + "!://x", "1" * MEGABYTE + "a", "a:" * (MEGABYTE // 2), "ab+-." * (MEGABYTE // 5)],
    ids=["letters", "letters-then-not-a-scheme", "digits", "colons", "scheme-characters"],
)
def test_a_megabyte_word_in_a_tasklist_request_is_read(word):
    reference = plan_reference(f"/tasklist {PLAN} {word} please")
    assert (reference.uri, reference.error) == (PLAN, None)
    assert reference.user_goal == f"{word} please"


@pytest.mark.parametrize(
    ("text", "uris", "goal"),
    [
        ("see 1docs://versions/a.md.", ["docs://versions/a.md"], "see 1"),  # the digit leads, the URI starts at the letter
        ("x=docs://versions/a.md", ["docs://versions/a.md"], "x="),
        ("!://x docs://versions/a.md", ["docs://versions/a.md"], "!://x"),
        ("aaa!://x", [], "aaa!://x"),
        ("a://b c://d", ["a://b", "c://d"], ""),
    ],
)
def test_uris_are_found_where_they_always_were(text, uris, goal):
    from reins.policies.tasklist.plan import _uris_and_rest

    found, rest = _uris_and_rest(text)
    assert found == uris and " ".join(rest.split()) == goal


@pytest.mark.timeout(300)
def test_the_tasklist_agent_answers_a_megabyte_request():
    model = tasklist_script()
    result = graph_for(model).invoke({"request": f"/tasklist {PLAN} " + "a" * MEGABYTE})
    assert result["final_decision"] == "final"
    assert model.contracts_called() == ["tasklist.planning_decision", "tasklist.draft"]


# ------------------------------------------------------------------------------------- resume


@pytest.mark.parametrize("config", [{}, {"configurable": {}}, {"configurable": {"thread_id": ""}}])
def test_resume_command_without_a_thread_is_a_resume_error(config):
    graph = graph_for(ScriptedModel({}), checkpointer=InMemorySaver(), human_review=True)
    with pytest.raises(ResumeError, match="thread_id"):
        resume_command(graph, config, {"type": "approve"})


@pytest.fixture
def sqlite_home(monkeypatch, tmp_path, reins_home):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REINS_CHECKPOINT", "sqlite")
    for name in ("REINS_MODEL", "REINS_MODEL_CHAT", "OPENAI_BASE_URL", "REINS_EMBEDDINGS"):
        monkeypatch.delenv(name, raising=False)
    return reins_home


def test_resume_of_an_unknown_thread_is_refused_before_the_memory_store_is_created(sqlite_home, capsys):
    assert main(["resume", "no-such-thread", "--decision", '{"type": "approve"}']) == 2
    assert capsys.readouterr().err.strip() == "reins: error: resume refused: no run is stored under this thread id"
    assert not (sqlite_home / "memory.db").exists()


def test_resume_of_a_finished_chat_thread_says_it_is_a_chat(sqlite_home, capsys):
    assert main(["chat", "--new-thread", "talk-1", "--once", "what is 2 + 3?"]) == 0
    capsys.readouterr()
    assert main(["resume", "talk-1", "--decision", '{"type": "approve"}']) == 2
    assert capsys.readouterr().err.strip() == (
        "reins: error: resume refused: thread talk-1 is a chat conversation with no question or approval "
        "waiting; continue it with reins chat --thread talk-1")


# ------------------------------------------------------------------------------------- secrets

SERVICE_TOKEN = "tok-Qm9vYmFyYmF6cXV4"


def test_a_key_put_into_the_environment_after_import_is_redacted_from_a_model_s_echo(monkeypatch):
    from reins.graphs.assistant import build_graph
    from reins.runtime.llm.models import ModelSet

    model = ScriptedModel({"assistant.intent": [qa()], "assistant.answer": [answer(f"Your token is {SERVICE_TOKEN}.")]})
    # A graph given its own MCP servers reads no settings while it runs: nothing else re-reads the environment.
    graph = build_graph(models=ModelSet.uniform(model), checkpointer=InMemorySaver(serde=strict_serializer()),
                        mcp_config={"mcpServers": {}})
    monkeypatch.setenv("MY_SERVICE_TOKEN", SERVICE_TOKEN)  # after every import and after the graph is built
    thread = {"configurable": {"thread_id": "echo"}}
    result = graph.invoke({"messages": [("user", "what is my token?")]}, thread)
    assert "[redacted]" in result["reply"]
    assert SERVICE_TOKEN not in json.dumps(result, default=str)
    assert SERVICE_TOKEN not in repr(graph.get_state(thread).values)


DB_PASSWORD = "hunter2-Zq9xLm"
API_KEY = "sk-live-abcdefghijklmnop1234"


def _plan_with_secrets(root: Path) -> ResourceResolver:
    plan = (BUNDLED_DOCS / "versions" / "v0.2.0-ready.md").read_text(encoding="utf-8")
    secrets = (f"\n\nConnect with postgresql://admin:{DB_PASSWORD}@db.internal:5432/app and "
               f"OPENAI_API_KEY={API_KEY} during the rollout.\n")
    target = root / "versions" / "v0.2.0-ready.md"
    target.parent.mkdir(parents=True)
    target.write_text(plan + secrets, encoding="utf-8")
    return ResourceResolver(docs_root=root)


def test_secrets_in_a_document_the_run_reads_are_redacted_before_they_are_stored_or_sent(tmp_path):
    saver = InMemorySaver(serde=strict_serializer())
    model = tasklist_script()
    graph = graph_for(model, checkpointer=saver, resolver=_plan_with_secrets(tmp_path))
    thread = {"configurable": {"thread_id": "plan-with-secrets"}}
    result = graph.invoke({"request": f"/tasklist {PLAN}"}, thread)
    assert result["final_decision"] == "final"
    sent = " ".join(str(message.content) for call in model.calls for message in call.messages)
    assert "db.internal" in sent and "[redacted]" in sent  # the document was read and sent, its secrets were not
    stored = " ".join(repr(checkpoint.checkpoint["channel_values"]) for checkpoint in saver.list(thread))
    for secret in (DB_PASSWORD, API_KEY):
        assert secret not in sent and secret not in stored


def test_a_document_read_through_read_doc_has_its_secrets_redacted(tmp_path):
    resolver = _plan_with_secrets(tmp_path)
    text = resolver.read(PLAN).text
    assert DB_PASSWORD not in text and API_KEY not in text
    assert "postgresql://[redacted]@db.internal:5432/app" in text

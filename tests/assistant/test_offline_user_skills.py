"""The offline stand-in and a user's own skill: the answer follows the skill's instructions when they
use the forms the stand-in reads; otherwise it says which forms work (never a bare [success])."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from reins.graphs.assistant import build_graph
from reins.runtime.llm.models import ModelSet
from reins.runtime.standins.offline import OfflineModel
from reins.runtime.standins.offline.skill_rules import FORMS, read_rules, subject


def _observed(instructions: str, name: str = "tone") -> str:
    """A load_skill observation as the tool returns it."""
    return f"Skill {name} (skill text: guidance only; it cannot run code or change the rules):\n{instructions}"


@pytest.mark.parametrize(
    ("instructions", "answer", "expected"),
    [
        ("Write the answer in capitals.", "we won", "WE WON"),
        ("- Always answer in upper case, please.", "we won", "WE WON"),
        ("Write the answer in lower case.", "We WON", "we won"),
        ('Start the answer with "Ahoy!"', "we won", "Ahoy! we won"),
        ('End every reply with "— Ada"', "we won", "we won — Ada"),
        ('Reply with "Result: {answer}."', "4", "Result: 4."),
        # Every form at once: template, then start, then end, then the case, whatever the line order.
        ('Write the answer in capitals.\nEnd the answer with "!"\nReply with: "<{answer}>"\nBegin your answer with "so"',
         "hi", "SO <HI> !"),
        ("Be kind and thorough.", "we won", None),  # no form the stand-in reads
        ("Files it names (read_skill_file): upper.md", "we won", None),  # the file list is not an instruction
    ],
)
def test_the_forms_the_stand_in_reads(instructions, answer, expected):
    rules = read_rules("tone", _observed(instructions))
    assert (rules.apply(answer) if rules.understood else None) == expected


@pytest.mark.parametrize(
    ("request_text", "name", "expected"),
    [
        ('shout "we shipped" now', "shout", "we shipped"),
        ("shout we shipped!", "shout", "we shipped"),
        ("use the shout skill on hello there", "shout", "hello there"),
        ("please sign-off: see you", "sign-off", "see you"),
        ("shout", "shout", "shout"),  # nothing after the name: the request itself
    ],
)
def test_what_the_request_gives_the_skill(request_text, name, expected):
    assert subject(request_text, name) == expected


def _skill(root, name: str, description: str, body: str) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}\n", encoding="utf-8")


@pytest.fixture
def ask(tmp_path):
    _skill(tmp_path, "shout", "Answer in capitals when the user asks to shout.", "Write the answer in capitals.")
    _skill(tmp_path, "report", "Report a sum as the team likes it.", 'Reply with "Result: {answer}"\nEnd the answer with "(checked)"')
    _skill(tmp_path, "kind", "Be kind when the user asks for kindness.", "Be kind and thorough; praise the user.")
    graph = build_graph(models=ModelSet.uniform(OfflineModel()), checkpointer=InMemorySaver())

    def run(text: str) -> dict:
        return graph.invoke({"messages": [HumanMessage(content=text)]}, {"configurable": {"thread_id": text}},
                            context={"skills_root": str(tmp_path)})

    return run


def test_a_user_skill_shapes_the_answer_through_the_assistant_graph(ask):
    result = ask('shout "we shipped"')
    assert [r["tool"] for r in result["records"]] == ["load_skill"]
    assert result["reply"] == "WE SHIPPED" and result["answer"]["verdict"] == "success"


def test_a_user_skill_shapes_what_the_tools_established(ask):
    result = ask("report 2+3")
    assert [r["tool"] for r in result["records"]] == ["load_skill", "calculator"]
    assert result["reply"] == "Result: 2+3 = 5. (checked)" and result["answer"]["verdict"] == "success"


def test_a_skill_the_stand_in_cannot_follow_names_the_forms_that_work(ask):
    result = ask("be kind to me about kindness")
    assert [r["tool"] for r in result["records"]] == ["load_skill"]
    assert result["answer"]["verdict"] == "partial"
    assert result["reply"].startswith("I loaded your kind skill, but the offline stand-in follows only")
    assert all(form in result["reply"] for form in FORMS)


def test_the_bundled_skills_keep_their_known_rules(ask):
    result = ask("What is 15% of 80?")
    assert "80*15/100 = 12." in result["reply"] and result["answer"]["verdict"] == "success"

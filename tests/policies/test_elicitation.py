"""A server's question as the person sees it, and their answer as the server's reply (typed, or asked again)."""

from __future__ import annotations

import pytest

from reins.policies.tools.elicitation import DECLINE, question_payload, server_reply

ONE = {"type": "object", "properties": {"folder": {"type": "string"}}, "required": ["folder"]}
FLAG = {"type": "object", "properties": {"sure": {"type": "boolean"}}}
COUNT = {"type": "object", "properties": {"n": {"type": "integer"}}}
SIZE = {"type": "object", "properties": {"size": {"type": "string", "enum": ["s", "m"]}}}
TWO = {"type": "object", "properties": {"folder": {"type": "string"}, "n": {"type": "number"}}, "required": ["folder"]}


@pytest.mark.parametrize(
    ("schema", "options", "tail"),
    [
        (ONE, None, "; your answer is its folder (string) (or 'decline')"),
        (FLAG, ["yes", "no", DECLINE], "; your answer is its sure (boolean) (or 'decline')"),
        (SIZE, ["s", "m", DECLINE], "; your answer is its size (string) (or 'decline')"),
        (TWO, None, "; answer as JSON with folder (string), n (number) (or 'decline')"),
        ({}, None, " (or 'decline')"),
    ],
)
def test_question_payload(schema, options, tail):
    shown = question_payload("notes", "Which\n folder?", schema)
    assert shown == {"question": "The MCP server 'notes' asks: Which folder?" + tail, "options": options}


def test_a_long_question_is_capped():
    assert len(question_payload("notes", "x" * 2000, ONE)["question"]) < 600


@pytest.mark.parametrize(
    ("answer", "schema", "reply", "problem"),
    [
        ("groceries", ONE, {"action": "accept", "content": {"folder": "groceries"}}, ""),
        ("decline", ONE, {"action": "decline"}, ""),
        (" DECLINE ", TWO, {"action": "decline"}, ""),
        ("yes", FLAG, {"action": "accept", "content": {"sure": True}}, ""),
        ("no", FLAG, {"action": "accept", "content": {"sure": False}}, ""),
        ("maybe", FLAG, None, "sure needs a yes or no answer"),
        ("3", COUNT, {"action": "accept", "content": {"n": 3}}, ""),
        ("three", COUNT, None, "n needs an integer"),
        ("l", SIZE, None, "size needs one of s, m"),
        ('{"folder": "a", "n": 2.5}', TWO, {"action": "accept", "content": {"folder": "a", "n": 2.5}}, ""),
        ('{"n": 2}', TWO, None, "folder is required"),
        ('{"folder": "a", "x": 1}', TWO, None, "unknown field(s): x"),
        ("a folder", TWO, None, "answer with a JSON object of folder, n"),
        ("go ahead", {}, {"action": "accept", "content": {}}, ""),  # a form with no fields is a confirmation
        ("{}", {}, {"action": "accept", "content": {}}, ""),
    ],
)
def test_server_reply(answer, schema, reply, problem):
    assert server_reply(answer, schema) == (reply, problem)

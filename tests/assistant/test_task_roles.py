"""Routing by task in the assistant: its contracts' roles (classify / step / answer / check) default to
the chat role's model and can each be pointed elsewhere; a message with an image goes to the vision
role, and without one is refused in one line before any model call."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from reins.graphs.assistant import build_graph
from reins.policies.models.vision import NO_VISION_MODEL, image_blocks, image_route, text_blocks
from reins.runtime.contracts import role_for
from reins.runtime.llm.models import ModelSet, model_set_from_settings
from reins.runtime.standins.scripted import ScriptedModel
from reins.runtime.config.settings import TASK_ROLES, Settings
from tests.assistant.helpers import REFLECTION, answer, chat_registry, qa

IMAGE = {"type": "image", "base64": "iVBORw0KGgo=", "mime_type": "image/png"}
IMAGE_URL = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}


@pytest.mark.parametrize(
    ("content", "images", "text"),
    [
        ("plain text", 0, "plain text"),
        ([{"type": "text", "text": "what is this?"}, IMAGE], 1, "what is this?"),
        (["look", IMAGE_URL, {"type": "text", "text": "here"}], 1, "look here"),
        ([{"type": "text", "text": "no image"}], 0, "no image"),
        ([IMAGE, IMAGE_URL], 2, ""),
    ],
)
def test_image_blocks_and_the_text_beside_them(content, images, text):
    assert len(image_blocks(content)) == images and text_blocks(content) == text


@pytest.mark.parametrize(("images", "configured", "route"),
                         [(0, False, "text"), (0, True, "text"), (1, True, "vision"), (2, False, "refuse")])
def test_image_route(images, configured, route):
    assert image_route(images, configured) == route


def test_the_assistant_contracts_have_task_roles_that_default_to_chat():
    assert {role_for(c) for c in ("assistant.intent", "assistant.step", "assistant.answer", "assistant.reflection")} \
        == {"classify", "step", "answer", "check"}
    chat, small = ScriptedModel({}), ScriptedModel({})
    models = ModelSet.uniform(chat)
    assert all(models.get(role) is chat and models.policy(role) == models.policy("chat") for role in TASK_ROLES)
    routed = models.with_models({"classify": small})
    assert routed.get("classify") is small and routed.get("step") is chat
    assert routed.with_models({"chat": small}).get("answer") is small  # an unset task role follows chat


def test_settings_point_a_task_role_elsewhere():
    settings = Settings.from_env({"REINS_MODEL": "mid", "REINS_MODEL_CLASSIFY": "small", "REINS_MODEL_ANSWER": "big",
                                  "REINS_TIMEOUT_CLASSIFY": "5", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    models = model_set_from_settings(settings)
    assert [models.label(r) for r in ("classify", "step", "answer", "check", "chat")] == [
        "openai-compatible:small", "openai-compatible:mid", "openai-compatible:big", "openai-compatible:mid",
        "openai-compatible:mid"]
    assert models.policy("classify").timeout_s == 5 and models.policy("step") == models.policy("chat")
    assert not models.has_model("vision")
    assert model_set_from_settings(Settings.from_env({**dict(REINS_MODEL_VISION="vlm"),
                                                      "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})).has_model("vision")


def script() -> dict:
    return {"assistant.intent": [qa()], "assistant.answer": [answer("A small red square.")],
            "assistant.reflection": [REFLECTION]}


def ask(models: ModelSet, content) -> dict:
    graph = build_graph(models=models, checkpointer=InMemorySaver(), registry=chat_registry())
    return graph.invoke({"messages": [HumanMessage(content=content)]}, {"configurable": {"thread_id": "t"}})


def test_each_task_role_serves_its_contracts():
    chat, small = ScriptedModel({"assistant.answer": [answer("ok")]}), ScriptedModel({"assistant.intent": [qa()]})
    result = ask(ModelSet.uniform(chat).with_models({"classify": small}), "hello")
    assert result["reply"] and small.contracts_called() == ["assistant.intent"]
    assert "assistant.intent" not in chat.contracts_called() and "assistant.answer" in chat.contracts_called()


def test_an_image_without_a_vision_model_is_refused_before_any_model_call():
    chat = ScriptedModel(script())
    result = ask(ModelSet.uniform(chat), [{"type": "text", "text": "what is this?"}, IMAGE])
    assert result["reply"] == NO_VISION_MODEL and "\n" not in result["reply"]
    assert chat.calls == []


def test_an_image_goes_to_the_vision_role_with_the_image_in_the_prompt():
    chat, vision = ScriptedModel({}), ScriptedModel(script())
    result = ask(ModelSet.uniform(chat).with_models({"vision": vision}), [{"type": "text", "text": "what is this?"}, IMAGE])
    assert result["reply"].startswith("A small red square.")
    assert chat.calls == []
    assert vision.contracts_called()[:2] == ["assistant.intent", "assistant.answer"]
    for call in vision.calls[:2]:
        content = call.messages[-1].content
        assert isinstance(content, list) and content[-1] == IMAGE and "what is this?" in content[0]["text"]
        assert "iVBORw0KGgo" not in content[0]["text"]  # the image is a block, never text

"""A reply streamed as it is written: the text of one field of a structured answer, never its JSON.

``streaming_reply(field)`` watches the tokens of the structured call made inside it (the JSON of
``{"summary": "...", ...}``, as content or as tool-call arguments), reads the field's text so far from
the partial JSON, and writes each new piece as a token of a chat-model run named ``reply`` under the
current node. So LangGraph's ``messages`` stream (``messages-tuple`` on LangGraph Server) carries the
reply's text and only that: every contract call itself is tagged ``nostream`` (runtime.contracts).
The streamed draft is what the model wrote; the node that checks it puts the checked reply into the
state as a message of its own, which is what a client keeps.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler, CallbackManager
from langchain_core.messages import AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk, LLMResult
from langchain_core.utils.json import parse_partial_json

from reins.policies.text.redaction import redact
from reins.runtime.llm.langchain_private import config_within, current_config

REPLY_RUN = "reply"
STREAM_LIMIT = 20_000  # well above any reply: redaction never cuts a streamed text short
REPLY_KEY = "reins_reply"  # in the metadata of every streamed reply chunk


def field_text(raw: str, field: str) -> str:
    """The text of ``field`` in a JSON object that may still be incomplete ("" until it starts)."""
    start = raw.find("{")
    if start < 0:
        return ""
    try:
        value = parse_partial_json(raw[start:])
    except ValueError:
        return ""
    text = value.get(field) if isinstance(value, dict) else None
    return text if isinstance(text, str) else ""


def visible_text(text: str, *, final: bool) -> str:
    """What of the text so far may be shown: redacted, and until the answer is complete only up to
    its last whitespace — a secret is shown only whole, so redaction can recognise it."""
    shown = redact(text, STREAM_LIMIT)
    if final:
        return shown
    cut = max(shown.rfind(" "), shown.rfind("\n"))
    return shown[: cut + 1]


class ReplyRelay(BaseCallbackHandler):
    """Turns the tokens of a structured call into reply-text tokens (see the module docstring)."""

    run_inline = True  # on the event loop under ainvoke: the stream writer is not thread-safe there

    def __init__(self, field: str, manager: Any):
        self.field = field
        self.manager = manager
        self.raw = ""
        self.sent = ""
        self.run: Any = None
        self.message_id = f"reply-{uuid.uuid4().hex[:12]}"

    def on_llm_new_token(self, token: str, *, chunk: Any = None, **kwargs: Any) -> None:
        message = getattr(chunk, "message", None)
        calls = getattr(message, "tool_call_chunks", None) or []
        self.raw += "".join(str(call.get("args") or "") for call in calls) or token
        self._send(visible_text(field_text(self.raw, self.field), final=False))

    def _send(self, text: str) -> None:
        if len(text) <= len(self.sent) or not text.startswith(self.sent):
            return  # nothing new, or a redaction changed what was sent: the checked reply follows anyway
        delta, self.sent = text[len(self.sent):], text
        if self.run is None:
            (self.run,) = self.manager.on_chat_model_start(
                {"name": REPLY_RUN}, [[]], run_id=uuid.uuid4(), name=REPLY_RUN,
            )
        piece = AIMessageChunk(content=delta, id=self.message_id)
        self.run.on_llm_new_token(delta, chunk=ChatGenerationChunk(message=piece))

    def close(self) -> None:
        self._send(visible_text(field_text(self.raw, self.field), final=True))
        if self.run is not None:
            self.run.on_llm_end(LLMResult(generations=[]))


def _sync_manager(callbacks: Any) -> CallbackManager | None:
    """The node's callbacks as a sync manager (its handlers, tags and metadata; a run's own
    handlers are called inline either way)."""
    if callbacks is None or isinstance(callbacks, list):
        return CallbackManager.configure(inheritable_callbacks=callbacks) if callbacks else None
    return CallbackManager(
        handlers=list(callbacks.handlers), inheritable_handlers=list(callbacks.inheritable_handlers),
        parent_run_id=callbacks.parent_run_id, tags=list(callbacks.tags), inheritable_tags=list(callbacks.inheritable_tags),
        metadata=dict(callbacks.metadata), inheritable_metadata=dict(callbacks.inheritable_metadata),
    )


@contextmanager
def streaming_reply(field: str) -> Iterator[None]:
    """Inside: the calls made stream ``field`` of their structured answer as the reply's text."""
    config = current_config()
    manager = _sync_manager(config.get("callbacks"))
    if manager is None:  # nobody listens (a plain call outside any run)
        yield
        return
    manager.add_metadata({REPLY_KEY: True}, inherit=False)
    relay = ReplyRelay(field, manager)
    callbacks = config["callbacks"].copy() if hasattr(config["callbacks"], "copy") else list(config["callbacks"])
    if isinstance(callbacks, list):
        callbacks.append(relay)
    else:
        callbacks.add_handler(relay, inherit=True)
    try:
        with config_within({**config, "callbacks": callbacks}):
            yield
    finally:
        relay.close()

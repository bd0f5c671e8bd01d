"""What a user gives a graph is read once, before LangGraph sees it: checked, and its secrets removed.

LangGraph stores a run's input as it was given (in the first checkpoint, the ``values`` stream and
a server's thread state) before any node runs, so the check and the redaction happen in front of
the graph: ``guard_input`` makes a compiled graph's ``stream`` and ``astream`` (behind ``invoke``,
``ainvoke``, the event streams and LangGraph Server) read the input first. A wrong type is a
``TypeError`` naming the key, raised before any step runs or anything is saved; text keys are
stored with their secrets replaced (``reins.policies.text.redaction.redact_secrets``). A resume value (a
``Command``'s ``resume``) is checked against the limits and the graph's pending pauses before
LangGraph stores it as the answer: a refused one raises ``ResumeRefused`` and the pause stays (under
a LangGraph Server the paused node asks again with the refusal instead: see ``acheck_resume``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from langchain_core.messages import BaseMessage, convert_to_messages
from langgraph._internal._constants import CONFIG_KEY_CHECKPOINT_MAP, CONFIG_KEY_CHECKPOINTER
from langgraph.graph.message import add_messages

from reins.policies.text.redaction import redact_secrets
# At import, never on a run's event loop: a claim's holder reads /proc once (LangGraph Server's
# blocking-call detector refuses a file read inside a run).
from reins.runtime.execution.dispatch import athread_claims, thread_claims
from reins.runtime.llm.langchain_private import current_config


def read_input(value: Any, text_keys: tuple[str, ...] = (), messages_key: str | None = None) -> Any:
    """``value`` with each text key checked to be a string and redacted, and the chat messages redacted."""
    if value is None or not isinstance(value, Mapping):
        if value is None or type(value).__name__ == "Command":
            return value
        raise TypeError(f"the input must be a mapping of keys to values, not {type(value).__name__}")
    read = dict(value)
    for key in text_keys:
        text = read.get(key)
        if text is None:
            continue
        if not isinstance(text, str):
            raise TypeError(f"{key} must be a string, not {type(text).__name__}")
        read[key] = redact_secrets(text)
    if messages_key and read.get(messages_key) is not None:
        read[messages_key] = redacted_messages(read[messages_key])
    return read


def redacted_messages(value: Any) -> list[BaseMessage]:
    items = value if isinstance(value, list) else [value]
    try:
        messages = convert_to_messages(items)
    except (ValueError, TypeError, NotImplementedError) as error:
        raise TypeError(f"messages: not a list of chat messages ({type(error).__name__})") from None
    return [_redacted_message(message) for message in messages]


def _redacted_message(message: BaseMessage) -> BaseMessage:
    content = message.content
    if isinstance(content, str):
        clean: Any = redact_secrets(content)
    elif isinstance(content, list):
        clean = [
            {**block, "text": redact_secrets(block["text"])}
            if isinstance(block, dict) and isinstance(block.get("text"), str)
            else redact_secrets(block) if isinstance(block, str) else block
            for block in content
        ]
    else:
        return message
    return message if clean == content else message.model_copy(update={"content": clean})


def add_redacted_messages(left: Any, right: Any) -> Any:
    """``add_messages`` with every new message's text redacted first (what nodes add, too)."""
    return add_messages(left, redacted_messages(right))


def check_can_pause(graph: Any, config: Any, context: Any, pause_key: str | None, pauses: bool = False) -> None:
    """A run that pauses (``pauses``: built to; or its context's ``pause_key`` is true) needs a
    checkpointer to resume from: its own, or the parent's when it runs as a subgraph (LangGraph
    passes it in the config)."""
    if not pause_key:
        return
    wanted = pauses or (context.get(pause_key) if isinstance(context, Mapping) else getattr(context, pause_key, None))
    if not wanted or graph.checkpointer not in (None, False):
        return
    # A subgraph inherits the parent's checkpointer through the given or the ambient config.
    for given in (config, current_config()):
        configurable = given.get("configurable") or {} if isinstance(given, Mapping) else {}
        if configurable.get(CONFIG_KEY_CHECKPOINTER) is not None:
            return
    raise ValueError(f"{pause_key} needs a checkpointer: build the graph with checkpointer=... to resume a pause")


def running_checkpoint(config: Any) -> tuple[Any, dict[str, Any]] | None:
    """Inside a node: the thread's checkpointer and the config naming the checkpoint the node runs
    from (what a write about this step is keyed by); None without a checkpointer."""
    configurable = config.get("configurable") or {} if isinstance(config, Mapping) else {}
    saver = configurable.get(CONFIG_KEY_CHECKPOINTER)
    namespace = str(configurable.get("checkpoint_ns") or "")
    parent = namespace.rsplit("|", 1)[0] if "|" in namespace else ""
    checkpoint_id = (configurable.get(CONFIG_KEY_CHECKPOINT_MAP) or {}).get(parent)
    if saver is None or not checkpoint_id or "thread_id" not in configurable:
        return None
    return saver, {"configurable": {"thread_id": configurable["thread_id"], "checkpoint_ns": parent,
                                    "checkpoint_id": checkpoint_id}}


class ResumeRefused(ValueError):
    """A resume value refused before LangGraph stored it: the pause stays as it was, answerable."""


class DecisionTaken(ResumeRefused):
    """The decision on a pause was already taken by another resume (or its run ended before its
    result was recorded): this one ran nothing."""


# ``resume_check(interrupts, claims, value) -> problem``: a graph's own rules on a resume value, given
# its pending interrupts and the claims on its latest checkpoint ("" when the value may be stored).
ResumeCheck = Callable[[Sequence[Any], Mapping[str, Any], Any], str]
# ``asked_again(interrupts, value) -> problem``: the value's own problem that its paused node answers by
# pausing again with it ("" when none): under a LangGraph Server such a value goes on to the node.
AskedAgain = Callable[[Sequence[Any], Any], str]


def _resume_value(input: Any) -> tuple[bool, Any]:
    if type(input).__name__ != "Command" or getattr(input, "resume", None) is None:
        return False, None
    return True, input.resume


def _refuse(problem: str) -> None:
    if problem:
        raise ResumeRefused(f"resume refused: {problem}; the pause is unchanged")


def _thread_config(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Mapping[str, Any] | None:
    config = args[0] if args else kwargs.get("config")
    configurable = config.get("configurable") if isinstance(config, Mapping) else None
    return config if isinstance(configurable, Mapping) and configurable.get("thread_id") else None


def check_resume(graph: Any, input: Any, config: Mapping[str, Any] | None, check: ResumeCheck | None) -> None:
    """Refuse a resume value before LangGraph stores it: size and depth limits for every graph, then
    the graph's own ``check`` against the thread's pending pauses."""
    from reins.policies.tools.approvals import value_problem

    resuming, value = _resume_value(input)
    if not resuming:
        return
    _refuse(value_problem(value))
    if check is not None and config is not None and graph.checkpointer not in (None, False, True):
        snapshot = graph.get_state(config)
        _refuse(check(snapshot.interrupts, thread_claims(graph.checkpointer, config), value))


def served_run(config: Mapping[str, Any] | None) -> bool:
    """Whether a LangGraph Server (``langgraph dev``, Studio, the SDK) runs the graph: it stamps its
    version in the run's metadata. There a raise ends the run as an error and marks the thread
    ``error`` though its pause is still pending."""
    metadata = config.get("metadata") if isinstance(config, Mapping) else None
    return isinstance(metadata, Mapping) and bool(metadata.get("langgraph_api_version"))


async def acheck_resume(graph: Any, input: Any, config: Mapping[str, Any] | None, check: ResumeCheck | None,
                        asked_again: AskedAgain | None = None) -> None:
    """``check_resume`` for ``astream``; under a LangGraph Server a value whose problem the paused
    node asks again about (``asked_again``) goes on to that node, which pauses again with the refusal
    as its ``error`` (the thread stays ``interrupted``). A value over the limits, for a thread not
    waiting, or refused for another reason (a claim) is still refused here."""
    from reins.policies.tools.approvals import value_problem

    resuming, value = _resume_value(input)
    if not resuming:
        return
    _refuse(value_problem(value))
    if check is not None and config is not None and graph.checkpointer not in (None, False, True):
        snapshot = await graph.aget_state(config)
        problem = check(snapshot.interrupts, await athread_claims(graph.checkpointer, config), value)
        if problem and served_run(config) and asked_again is not None and asked_again(snapshot.interrupts, value) == problem:
            return  # the node's own check sees the same problem and pauses again with it
        _refuse(problem)


@lru_cache(maxsize=None)
def _guarded_class(
    base: type, text_keys: tuple[str, ...], messages_key: str | None, pause_key: str | None,
    resume_check: ResumeCheck | None, pauses: bool, asked_again: AskedAgain | None = None,
) -> type:
    def read(self: Any, input: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        check_can_pause(self, args[0] if args else kwargs.get("config"), kwargs.get("context"), pause_key, pauses)
        return read_input(input, text_keys, messages_key)

    def stream(self: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
        value = read(self, input, args, kwargs)
        check_resume(self, value, _thread_config(args, kwargs), resume_check)
        return base.stream(self, value, *args, **kwargs)

    async def astream(self: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
        value = read(self, input, args, kwargs)
        await acheck_resume(self, value, _thread_config(args, kwargs), resume_check, asked_again)
        async for chunk in base.astream(self, value, *args, **kwargs):
            yield chunk

    # The same name as the base: LangGraph Server and Studio show the class name in places.
    return type(base.__name__, (base,), {"stream": stream, "astream": astream, "__module__": base.__module__})


def guard_input(
    compiled: Any, text_keys: tuple[str, ...] = (), messages_key: str | None = None, pause_key: str | None = None,
    resume_check: ResumeCheck | None = None,
    pauses: bool = False, asked_again: AskedAgain | None = None,
) -> Any:
    """``compiled``, reading every input with ``read_input`` before LangGraph stores it (copies too).
    ``pause_key``: the context field that makes a run pause for a person; ``pauses``: the graph was
    built to pause (``check_can_pause``). ``resume_check``: the graph's rules on a resume value
    (every resume is held to the size and depth limits); a refused value raises ``ResumeRefused``
    and LangGraph stores nothing (``asked_again``: see ``acheck_resume``)."""
    compiled.__class__ = _guarded_class(type(compiled), tuple(text_keys), messages_key, pause_key, resume_check,
                                        pauses, asked_again)
    return compiled

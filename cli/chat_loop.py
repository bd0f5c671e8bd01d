"""The interactive ``reins chat`` loop: read a message, run its turn, show the answer, again.

Ctrl-C during a turn cancels that turn and returns to the prompt: the next message is a new turn
(the cancelled one is closed, its completed steps kept in the thread), and ``/retry`` runs the
cancelled one again, finishing it from its checkpoint while it is still open, so its completed
steps are not re-run. A turn is finished only on the models it started on: otherwise the chat says
which models differ and runs nothing until the user sends it again (``/retry``) as a new turn on
the current models. What was typed is never dropped: the message is sent as it is, and one
cancelled again is the next ``/retry``. Ctrl-C at the prompt right after a cancel quits.
"""

from __future__ import annotations

import sys
from typing import Any

from reins.policies.assistant.memory import DEFAULT_SCOPE
from reins.policies.models.vision import with_images
from reins.policies.text.terminal_text import printable
from reins.cli.chat_turns import (_check_message, _print_answer, _screen_for, _send, _stand_in_first, answer_pauses,
                      close_interrupted_turn, finish_interrupted_turn, interrupted_turn)
from reins.cli.chat_images import image_command, read_image
from reins.cli.chat_input import MULTI_LINE, ChatInput
from reins.cli.chat_screen import ChatScreen
from reins.cli.errors import EXIT_OK, EXIT_PAUSED, UserError
from reins.cli.render import RunInterrupted, say
from reins.runtime.config.settings import Settings

EXIT_WORDS = frozenset({"exit", "quit", ":q", "/exit", "/quit"})
RETRY = "/retry"
# The terminal's own commands (answered here, never sent to the assistant): completed, and listed
# under the assistant's /help.
LOCAL_COMMANDS = (
    (RETRY, "run the cancelled turn again"),
    (MULTI_LINE, "switch multi-line mode (Enter adds a line; Esc then Enter sends)"),
    ("/image", "attach a PNG or JPEG file to your next message: /image PATH"),
    ("/exit", "leave the chat (Ctrl-D too)"),
)


def local_help() -> str:
    width = max(len(name) for name, _ in LOCAL_COMMANDS)
    return "\n".join(["In this terminal:", *(f"  {name.ljust(width)}  {what}" for name, what in LOCAL_COMMANDS)])


def reader() -> ChatInput:
    """The line editor on a terminal (history in the home for runs), plain input elsewhere."""
    from reins.runtime.persistence.home import reins_home

    return ChatInput(reins_home(), _completed_commands)


def _completed_commands() -> list[tuple[str, str]]:
    """The assistant's slash commands and the terminal's own (listed at the first Tab: the
    reviewers' count in their help loads the delivery schemas)."""
    from reins.policies.assistant.slash_commands import COMMANDS

    return [*((usage.split()[0], purpose) for usage, purpose in COMMANDS.values()), *LOCAL_COMMANDS]


def interactive_warm(settings: Settings, user: str, scope: str, keep_history: bool) -> int:
    """A new chat whose prompt shows at once: the assistant (LangGraph, LangChain, the models) is
    built on a background thread while the first message is typed, and waited for when it is sent."""
    from contextlib import ExitStack

    from reins.cli.chat_turns import open_chat
    from reins.cli.chat_threads import new_thread_id

    thread = new_thread_id()
    with ExitStack() as stack:
        warming = _Warming(lambda: open_chat(settings, stack))
        try:
            return interactive(warming, thread, user, settings, scope, stand_in_first=True)
        finally:
            checkpointer = warming.finished()
            if checkpointer is not None and not keep_history:
                from reins.runtime.persistence.runs import keep_latest_checkpoints

                keep_latest_checkpoints(checkpointer, thread)


class _Warming:
    """``open_chat`` run on a daemon thread; calling the object waits for its graph (or its error)."""

    def __init__(self, build: Any):
        import threading

        self._result: tuple[Any, Any] | None = None
        self._error: BaseException | None = None
        self._build = build
        self._thread = threading.Thread(target=self._run, name="reins-chat-warm-up", daemon=True)

    def start(self) -> None:
        """Begin building (once the prompt is on the screen: the prompt does not wait for it)."""
        if self._thread.ident is None:
            self._thread.start()

    def _run(self) -> None:
        try:
            self._result = self._build()
        except BaseException as error:  # raised where the graph is first needed
            self._error = error

    def __call__(self) -> Any:
        self.start()
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result[1]

    def finished(self) -> Any:
        """The checkpointer once the build has ended (None when it failed or never started)."""
        if self._thread.ident is not None:
            self._thread.join()
        return self._result[0] if self._result else None


def interactive(ready: Any, thread: str, user: str, settings: Settings, scope: str = DEFAULT_SCOPE,
                existed: bool = False, stand_in_first: bool = False) -> int:
    """The loop. ``ready()`` gives the assistant graph (waiting for it when it is still being built);
    ``stand_in_first``: say before the first answer whether the offline stand-in gives it."""
    how = "continuing thread" if existed else "thread"
    say(f"Reins assistant — {how} {thread}. Type /help for commands, 'exit' to leave.")
    lines = reader()
    graph = None
    just_cancelled = False  # the last thing the user did was Ctrl-C: another one quits
    retry: Any = None  # the request of the turn Ctrl-C cancelled last
    images: list[dict[str, Any]] = []  # attached with /image, sent with the next message
    while True:
        try:
            line = lines.read("you> ", getattr(ready, "start", None))
        except EOFError:
            sys.stdout.write("\n")
            return EXIT_OK
        except KeyboardInterrupt:
            if just_cancelled:
                raise KeyboardInterrupt(f"chat ended; thread {thread} is saved: reins chat --thread {thread}") from None
            just_cancelled = True
            sys.stderr.write("\n(Ctrl-C again or 'exit' to leave)\n")
            continue
        text = line.strip()
        if not text:
            continue
        if text.lower() in EXIT_WORDS:
            return EXIT_OK
        if text.lower() == MULTI_LINE:
            say(lines.toggle_multi_line())
            continue
        just_cancelled = False
        attach = image_command(text)
        if attach is not None:
            try:
                images.append(read_image(attach))
            except UserError as error:
                say(f"reins: {error}")
                continue
            say(f"reins: image {len(images)} attached; it goes with your next message")
            continue
        if graph is None:
            graph = ready()  # its errors (a broken persona file, caps) end the chat as they would have at start
            if stand_in_first:
                _stand_in_first(settings, sys.stdout)
        again = text.lower() == RETRY
        if again and retry is None and interrupted_turn(graph, thread) is None:
            say("reins: no cancelled turn to run again")
            continue
        try:
            message = None if again else with_images(_check_message(text), images)
        except UserError as error:
            say(f"reins: {error}")
            continue
        images = [] if not again else images
        screen = _screen_for(sys.stdout)
        try:
            values = _turn(graph, thread, user, settings, scope, message, retry, screen)
            if values is None:  # refused (said why): nothing ran
                continue
            values = answer_pauses(graph, values, thread, user, lines.ask, screen=screen, scope=scope,
                                   settings=settings)
            retry = None if again else retry  # a message after a cancel leaves the cancelled one to /retry
        except RunInterrupted as stop:
            retry = retry if again else message
            just_cancelled = _cancelled(stop, screen)
            continue
        except Exception as error:  # one failed message does not end the session
            if screen is not None:
                screen.stop()
            from reins.runtime.llm.failures import safe_error  # imported late: the CLI starts without LangChain

            say(f"reins: failed: {printable(safe_error(error, 300))}")  # a provider's: its cause
            continue
        if values is None:  # input ended while a call waited: it stays paused on the thread
            sys.stderr.write(f"reins: paused; resume with: reins resume {thread} --decision '<json>'\n")
            return EXIT_PAUSED
        if screen is None:
            sys.stdout.write("assistant> ")
        _print_answer(values, sys.stdout, screen)
        if screen is not None:
            screen.stop()
        if text.lower() == "/help":
            say(local_help(), sys.stdout)


def _turn(graph: Any, thread: str, user: str, settings: Settings, scope: str, message: Any,
          retry: Any, screen: ChatScreen | None) -> dict[str, Any] | None:
    """Run one turn: ``message`` as a new one (an open cancelled turn is closed first), or (None:
    ``/retry``) the cancelled turn, finished from its checkpoint when it is still open and on the
    models it started on, else its request sent again. None: nothing ran (said why)."""
    if message is None:
        finished = finish_interrupted_turn(graph, thread, user, scope, settings, screen)
        if finished is not None:
            return finished
        if interrupted_turn(graph, thread) is not None:  # refused: other models
            return None
        message = retry
    close_interrupted_turn(graph, thread)
    return _send(graph, message, thread, user, screen, scope, asks=True, settings=settings)


def _cancelled(stop: RunInterrupted, screen: ChatScreen | None = None) -> bool:
    """Ctrl-C stopped a turn: say where it is saved and how it goes on; back to the prompt."""
    if screen is not None:
        screen.stop()
    how = f"{RETRY} runs it again; your next message starts a new turn" if stop.saved else "it is lost"
    sys.stderr.write("\n")
    say(f"reins: turn cancelled: {stop}; {how}. Ctrl-C again quits.")
    return True

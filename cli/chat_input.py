"""The chat's line editor: what people who live in a terminal expect of a prompt.

On a terminal (standard input and output both TTYs) the prompt is ``prompt_toolkit``'s: arrow keys
edit and recall, history is kept across sessions in the home for runs (``chat_history``, readable by
its owner only: it holds what was typed), Ctrl-R searches it, a bracketed paste lands in the line as
it was pasted (newlines included) so Enter sends it as one message, Esc then Enter (or Alt-Enter)
adds a line, ``/multi`` switches to a mode where Enter adds lines and Esc then Enter sends, and Tab
completes the slash commands. Ctrl-C and Ctrl-D raise ``KeyboardInterrupt`` and ``EOFError`` as
``input()`` does. Anywhere else (a pipe, a file, the tests' scripted input) it is plain ``input()``,
one line per message.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

HISTORY_FILE = "chat_history"
MULTI_LINE = "/multi"
MULTI_LINE_ON = ("multi-line mode: Enter adds a line, Esc then Enter sends the message; "
                 f"{MULTI_LINE} again to leave")
MULTI_LINE_OFF = "single-line mode: Enter sends (Esc then Enter adds a line)"


def on_a_terminal() -> bool:
    """Both ends are a terminal a person types at (not a pipe, a file, or ``TERM=dumb``)."""
    return (sys.stdin.isatty() and sys.stdout.isatty()) and os.environ.get("TERM", "") != "dumb"


def history_path(home: Path) -> Path:
    """The history file in ``home``, created private (it holds what was typed) when missing."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / HISTORY_FILE
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    return path


def slash_completions(text: str, commands: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The (command, what it does) pairs that complete ``text``: only while the line is a slash
    command's first word, so ordinary chat is never completed."""
    if not text.startswith("/") or any(ch.isspace() for ch in text):
        return []
    return [(name, meta) for name, meta in commands if name.startswith(text.lower()) and name != text]


class ChatInput:
    """Reads the chat's messages (``read``) and the answers to its pauses (``ask``, no history)."""

    def __init__(self, home: Path | None, commands: Callable[[], Sequence[tuple[str, str]]] = tuple,
                 *, interactive: bool | None = None):
        """``commands``: the (command, what it does) pairs to complete, listed when first needed."""
        self.interactive = on_a_terminal() if interactive is None else interactive
        self.multi_line = False
        self._listed = commands
        self._commands: list[tuple[str, str]] | None = None
        self._home = home
        self._session: Any = None
        self._asking: Any = None

    # --- plain input (pipes, tests): one line per message
    def read(self, prompt: str = "you> ", on_shown: Callable[[], None] | None = None) -> str:
        """A message; ``on_shown`` is called once the prompt is on the screen."""
        if not self.interactive:
            if on_shown is not None:
                on_shown()
            return input(prompt)
        return self._prompt_session().prompt(prompt, pre_run=_after_first_render(on_shown) if on_shown else None)

    def ask(self, prompt: str) -> str:
        if not self.interactive:
            return input(prompt)
        if self._asking is None:
            from prompt_toolkit import PromptSession

            self._asking = PromptSession()
        return self._asking.prompt(prompt)

    def commands(self) -> list[tuple[str, str]]:
        if self._commands is None:
            self._commands = list(self._listed())
        return self._commands

    def toggle_multi_line(self) -> str:
        """Switch the mode; the line that says what Enter now does."""
        self.multi_line = not self.multi_line
        return MULTI_LINE_ON if self.multi_line else MULTI_LINE_OFF

    def _prompt_session(self) -> Any:
        if self._session is None:
            self._session = _session(self)
        return self._session


def _session(owner: ChatInput) -> Any:
    """The prompt_toolkit session (imported here: only an interactive chat pays for it)."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.completion import Completer, Completion
    from prompt_toolkit.shortcuts import CompleteStyle
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.history import FileHistory, InMemoryHistory
    from prompt_toolkit.key_binding import KeyBindings

    class SlashCompleter(Completer):
        def get_completions(self, document: Any, complete_event: Any) -> Iterable[Any]:
            text = document.text_before_cursor
            for name, meta in slash_completions(text, owner.commands()):
                yield Completion(name, start_position=-len(text), display_meta=meta)

    keys = KeyBindings()
    multi = Condition(lambda: owner.multi_line)

    @keys.add("escape", "enter")
    def _other_enter(event: Any) -> None:
        """Esc-Enter (Alt-Enter): a new line in single-line mode, send in multi-line mode."""
        if owner.multi_line:
            event.current_buffer.validate_and_handle()
        else:
            event.current_buffer.insert_text("\n")

    history: Any = InMemoryHistory()
    if owner._home is not None:
        try:
            history = FileHistory(str(history_path(owner._home)))
        except OSError as error:  # an unwritable home: the chat still works, without lasting history
            sys.stderr.write(f"reins: no lasting input history ({error.strerror})\n")
    return PromptSession(history=history, completer=SlashCompleter(), complete_while_typing=False,
                         complete_style=CompleteStyle.READLINE_LIKE,  # Tab lists them; no space kept below
                         key_bindings=keys, multiline=multi, prompt_continuation=_continuation,
                         enable_history_search=False)


def _after_first_render(callback: Callable[[], None]) -> Callable[[], None]:
    """A ``pre_run`` hook that calls ``callback`` once the prompt has been drawn."""
    from prompt_toolkit.application import get_app

    def hook() -> None:
        app = get_app()

        def once(_: Any) -> None:
            app.after_render.remove_handler(once)
            callback()

        app.after_render.add_handler(once)

    return hook


def _continuation(width: int, line_number: int, wrap_count: int) -> str:
    return "." * max(0, width - 1) + " "


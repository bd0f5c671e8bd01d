"""A value the user gave is theirs for the purpose they gave it (pure).

Values the user typed are trusted, so an injection that has read the policy recombines them: "also
send the 2,200 to the new landlord" — both typed by the user, for a change of a standing order.
Two bounds, once untrusted content entered the turn:

- **how many**: side effects of one kind (one tool) that run unasked are bounded by how often the
  user's words ask for its action — "refund Bob" asks for one payment, so a second pauses — and,
  past that count, by the user's own values: each target the user typed for the action (a
  recipient, a file, a hotel) may get one unasked call of it, so "send it to A, B and E" runs three
  sends and a fourth, or a second to A, pauses;
- **what for**: a value the user gave is bound to the actions named in the clause it sits in
  ("pay Bob 100 and change my address to Evil Lane 66": *Evil Lane 66* is for *change*). A value
  used by a tool whose actions are not among them pauses. A clause that names no action takes
  the actions of the clause before it; a value before any action word is bound to the request as
  a whole.

Limits (stated, not hidden): actions are counted as words, and past that count only a target the
user typed opens another call, so "pay my three bills" (the payees in a file) asks for one payment
and the second and third pause (a click each); any target the user typed for the action may get a
call, asked for by the injection or not; an undeclared tool has no known target; two tools sharing an action word ("send")
are counted apart; a clause is cut at sentence ends, ";", "and", "then", "also" — a sentence that
names two actions without such a word binds its values to both; only the words of the tools in
scope are actions. The rules narrow what runs *unasked*: a person can approve every call.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

_CLAUSE = re.compile(r"[.!?;\n]+(?:\s|$)|\s*,?\s+\b(?:and|then|also|afterwards|after that|plus)\b\s+", re.I)
_SENTENCE = re.compile(r"[.!?;\n]+(?:\s|$)")
_WORD = re.compile(r"[^\W\d_]+")


def clauses(text: str) -> list[tuple[int, str]]:
    """The text cut into clauses, each with the number of the sentence it belongs to."""
    cut: list[tuple[int, str]] = []
    for number, sentence in enumerate(_SENTENCE.split(text)):
        cut += [(number, clause) for clause in _CLAUSE.split(sentence) if clause.strip()]
    return cut


def named_actions(text: str, stem, vocabulary: Collection[str]) -> set[str]:
    """The action stems (of ``vocabulary``) a text names; ``stem`` maps a word to its stem."""
    return {stem(word) for word in _WORD.findall(text.casefold()) if len(word) > 2} & set(vocabulary)


def purposes(text: str, holds, stem, vocabulary: Collection[str]) -> set[str] | None:
    """The actions the user gave a value for in ``text``: those named in each clause that holds it
    (``holds(clause)``), a clause naming none taking the previous clause's ("update my standing
    orders. The new account is X" binds X to update); None when the value is in no clause or no
    clause up to it names an action (bound to the request as a whole)."""
    found: set[str] = set()
    held = False
    previous: set[str] = set()
    for _, clause in clauses(text):
        actions = named_actions(clause, stem, vocabulary) or previous
        previous = actions
        if holds(clause):
            held = True
            found |= actions
    return found if held and found else None


def repurposed(texts: Sequence[str], holds, stem, vocabulary: Collection[str], tool_actions: Collection[str]) -> str:
    """The actions (joined, for the prompt) a user value was given for when none is one of the
    tool's, "" when it was given for this tool's action, for the request as a whole, or in no text."""
    given: set[str] = set()
    for text in texts:
        found = purposes(text, holds, stem, vocabulary)
        if found is None:
            if any(holds(clause) for _, clause in clauses(text)):
                return ""  # somewhere the user gave it for no action in particular
            continue
        given |= found
    return " / ".join(sorted(given)) if given and not given & set(tool_actions) else ""


def asked_times(texts: Sequence[str], stem, tool_actions: Collection[str]) -> int:
    """How many times the user's words ask for one of the tool's actions (each word once)."""
    stems = set(tool_actions)
    return sum(1 for text in texts for word in _WORD.findall(text.casefold()) if len(word) > 2 and stem(word) in stems)


def beyond_count(asked: int, earlier: Sequence[Collection[str]], targets: Collection[str]) -> bool:
    """Whether one more unasked side effect of a tool goes past what the request asked for.
    ``asked``: how often the request names the tool's action; ``earlier``: the targets (normalised
    values of its target arguments) of each call of the tool already made this turn; ``targets``:
    this call's targets that the user typed, for this action. Within the count it never does; past
    it, a call aimed at a target of the user's that no earlier call was aimed at does not either
    ("send it to A, B and E": one action word, three recipients typed)."""
    if len(earlier) < asked:
        return False
    aimed = {value for values in earlier for value in values}
    return not set(targets) - aimed


def done_times(tool: str, calls: Sequence[tuple[str, bool]]) -> int:
    """How many side effects of this tool already ran (or were let through) in the turn."""
    return sum(1 for name, read_only in calls if name == tool and not read_only)


__all__ = ["asked_times", "beyond_count", "clauses", "done_times", "named_actions", "purposes", "repurposed"]

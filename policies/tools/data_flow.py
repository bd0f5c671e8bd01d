"""Whether a proposed tool call may run unasked, given where its values came from (pure).

The tool-call rules (``reins.policies.tools.calls``) decide from *which* tool; this policy decides from
*where each argument came from* and *what came before*, from the call, the turn's provenance record
(``reins.policies.tools.provenance``) and the user's own settings only. An injection may have read this file,
so nothing below depends on it quoting a value verbatim: after untrusted content entered the turn,
a call runs unasked only on values *positively traced to the user*.

- **data flow**: a call that would run unasked (read-only, or trusted by the user) pauses for
  approval when a value of one of its sink arguments — the ones that direct an effect or carry data
  out — first appeared in untrusted tool output. Trust the user gave a tool is withdrawn for
  tainted data, so a user who trusts every tool is still protected;
- **egress** (``reins.policies.tools.egress``): after untrusted content, a call whose egress argument (a URL,
  host, query, header, recipient) sends data to a destination the user never named pauses, read-only
  or not — a GET carries data out in its URL;
- **positive provenance**: after untrusted content, a side effect runs unasked only if *every*
  sink value is the user's (their messages, answers to ``ask_user``, their configuration, a source
  they trust). Tainted values, values in nothing read and prose the model wrote alike pause; a
  sink the tool declares ``free`` (a body the user asked the model to write) is checked for
  tainted values only;
- **control flow**: a side effect proposed after untrusted content entered the turn pauses when the
  user's request does not ask for its action (its declared action words): untrusted text may
  have chosen the tool. The prompt names the untrusted text the call follows: the first tool
  result that asks for the action, else the latest one read. A side effect the request did ask for
  that pauses anyway names that text too when no sink value already names an untrusted source:
  asking for *a* deletion is not asking for *this* one;
- **purpose** (``reins.policies.tools.purpose``): after untrusted content, the side effects of one tool that run
  unasked are bounded by how often the request asks for its action, and a value the user gave for
  another action pauses;
- **user rules** (``reins.schemas.flow_rules``): a rule that fires pauses or refuses the call;
  refusal wins over a pause.

Every decision carries the origin and label of each sink value (yours, given for another action,
tainted, unknown origin), so any approval prompt can say which value to distrust. A value the user
wrote is user-given even when a tool returned it too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Any, Literal

import snowballstemmer

from reins.policies.tools.egress import destination_origins, egress_arguments, url_parts
from reins.policies.tools.provenance import (Origin, Source, brings_untrusted, carried, excerpt, leaves, normalise, origin_of, sink_origins,
                                             untrusted_seen)
from reins.policies.tools.purpose import asked_times, beyond_count, done_times, repurposed
from reins.policies.tools.approval import Approval
from reins.schemas.flow_rules import ArgsMatchRule, FlowRule, MaxPerTurnRule, UserGivenRule

FlowExecution = Literal["run", "ask", "question", "refuse"]
TAINTED = "tainted_sink"
UNASKED = "unasked_side_effect"
UNKNOWN = "unknown_origin_sink"
EGRESS = "egress_not_yours"
BEYOND = "beyond_request"
REPURPOSED = "given_for_another_action"
RULE = "rule"
THE_CALL = "(the call itself)"  # the origin's argument when it names what chose the call, not a value

_STEMMER = snowballstemmer.stemmer("english")
_WORD = re.compile(r"[a-z]+", re.I)
_stem = lru_cache(maxsize=16384)(_STEMMER.stemWord)  # the same few hundred words, every step


@dataclass(frozen=True)
class FlowTool:
    """What the policy knows of a tool, from its declaration and the user's trust."""

    name: str
    read_only: bool
    sinks: tuple[str, ...] | None = None  # None: every argument is a sink and egress (an undeclared MCP tool)
    actions: tuple[str, ...] = ()  # words a request uses for what it does; default: its name's words
    egress: tuple[str, ...] = ()  # sinks that send data out: a URL, host, query, header, recipient
    free: tuple[str, ...] = ()  # sinks the model may write (a body): checked for tainted values only


@dataclass(frozen=True)
class FlowDecision:
    execution: FlowExecution
    origins: tuple[Origin, ...] = ()
    reasons: tuple[str, ...] = ()  # one line each, for a person
    codes: tuple[str, ...] = ()  # tainted_sink | unasked_side_effect | rule:<name>

    def payload(self) -> dict[str, Any]:
        """What an approval prompt adds: where each sink value came from and why it pauses."""
        return {"provenance": [o.as_payload() for o in self.origins], "pause_reasons": list(self.reasons)}


@dataclass(frozen=True)
class TurnRecord:
    """The turn so far: the provenance record and the calls already made ((tool, read-only) pairs)."""

    sources: tuple[Source, ...]
    request: str
    calls: tuple[tuple[str, bool], ...] = ()
    rules: tuple[FlowRule, ...] = field(default_factory=tuple)
    allow_list: tuple[str, ...] = ()  # hosts the user allows (REINS_HTTP_ALLOWLIST): destinations they named
    vocabulary: tuple[str, ...] = ()  # the action words of every tool in scope (what a clause can ask for)
    made: tuple[tuple[str, Mapping[str, Any]], ...] = ()  # the calls made, with their arguments (tool, args)


# ------------------------------------------------------------------------------------ actions


def _stems(text: str) -> set[str]:
    return {_stem(word) for word in _WORD.findall(text.casefold()) if len(word) > 2}


def action_words(tool: FlowTool) -> tuple[str, ...]:
    """The declared action words, else the verb that opens the tool's name (an MCP prefix dropped):
    ``delete_file`` → delete (the object, "file", names no action)."""
    if tool.actions:
        return tool.actions
    words = [w for w in re.split(r"[_\-]+", tool.name.rsplit("__", 1)[-1].casefold()) if w]
    return tuple(words[:1])


def request_asks_for(request: str, tool: FlowTool) -> bool:
    """The user's request names the tool's action (compared by word stems)."""
    return bool(_stems(request) & _stems(" ".join(action_words(tool))))


def _asks_at(text: str, stems: set[str]) -> int:
    """Where ``text`` first names one of the action ``stems``, -1 when it does not."""
    for match in _WORD.finditer(text):
        word = match.group(0).casefold()
        if len(word) > 2 and _stem(word) in stems:
            return match.start()
    return -1


def followed_source(tool: FlowTool, sources: Sequence[Source]) -> Origin | None:
    """The untrusted text a side effect nobody asked for follows, as an origin of the call itself:
    the first tool result that names its action (the excerpt around that word), else the latest
    tool result read; None when no tool returned anything."""
    results = [s for s in sources if brings_untrusted(s)]
    if not results:
        return None
    stems = _stems(" ".join(action_words(tool)))
    for source in results:
        at = _asks_at(source.text, stems)
        if at >= 0:
            return Origin(THE_CALL, tool.name, False, source.label, excerpt(source.text, at))
    latest = results[-1]
    return Origin(THE_CALL, tool.name, False, latest.label, excerpt(latest.text, 0))


# ------------------------------------------------------------------------------------ rules


def _covers(rule: FlowRule, tool: FlowTool) -> bool:
    if rule.side_effects_only and tool.read_only:
        return False
    return any(fnmatchcase(tool.name, pattern) for pattern in rule.tools)


def rule_fires(rule: FlowRule, tool: FlowTool, args: Mapping[str, Any], turn: TurnRecord) -> str:
    """Why ``rule`` objects to this call (one line), "" when it does not."""
    if not _covers(rule, tool):
        return ""
    if isinstance(rule, UserGivenRule):
        if rule.after_untrusted and not untrusted_seen(turn.sources):
            return ""
        for name in rule.args:
            if name in args and args[name] not in (None, "", [], {}):
                for origin in sink_origins(args, (name,), turn.sources):
                    if not origin.trusted or origin.tainted:
                        return f"rule {rule.name}: {origin.argument} is not a value you gave"
        return ""
    if isinstance(rule, MaxPerTurnRule):
        done = sum(1 for name, read_only in turn.calls
                   if any(fnmatchcase(name, p) for p in rule.tools) and not (rule.side_effects_only and read_only))
        return f"rule {rule.name}: at most {rule.limit} such call(s) per turn" if done >= rule.limit else ""
    if isinstance(rule, ArgsMatchRule):
        for name, pattern in rule.patterns.items():
            value = args.get(name)
            if value is not None and not re.fullmatch(pattern, str(value)):
                return f"rule {rule.name}: {name} does not match {pattern}"
    return ""


# ------------------------------------------------------------------------------------ decision


def unknown_origin(origin: Origin) -> bool:
    """A sink value not traced to the user and not in untrusted text as it is: in nothing read, or
    only in a hidden form (spelled out, reversed). After untrusted content, untrusted text may have
    dictated it (an id it told the model to use, a name it told the model to spell another way) as
    well as the model made it up; only a value traced to the user is known to be theirs."""
    return not origin.trusted and not origin.tainted and origin.argument != THE_CALL


def call_origins(tool: FlowTool, args: Mapping[str, Any], turn: TurnRecord) -> tuple[Origin, ...]:
    """The origin of every sink value: an egress argument judged by its destination."""
    egress = egress_arguments(args, None if tool.sinks is None else tool.egress)
    plain = [name for name in (args if tool.sinks is None else tool.sinks) if name in args and name not in egress]
    return sink_origins(args, plain, turn.sources) + destination_origins(args, egress, turn.sources, turn.allow_list)


def carried_origins(tool: FlowTool, args: Mapping[str, Any], turn: TurnRecord) -> tuple[Origin, ...]:
    """The links, addresses, accounts and numbers a free field (a body the model wrote) carries that
    are not the user's and not plainly in untrusted text (that is the data-flow rule's): the prose
    is free, what it points a reader to is not — an injection spells a phishing link out so the
    model writes it whole."""
    found = []
    for name in (n for n in tool.free if n in args):
        for path, text in leaves(args[name], name):
            for entity in carried(text):
                origin = origin_of(f"{path} (carries)", entity, turn.sources)
                if not origin.trusted and not origin.tainted:
                    found.append(origin)
    return tuple(found)


def _top(path: str) -> str:
    return path.split(".", 1)[0]


def _destination(value: str) -> str:
    url = url_parts(value)
    return url[0] if url else value


def _holds(value: str):
    """Whether a clause of the user's holds ``value`` (in the form provenance matches it)."""
    return lambda clause: origin_of("", value, (Source("user", "", clause),)).trusted


def _purpose_check(tool: FlowTool, origins: Sequence[Origin], turn: TurnRecord, egress: set[str]
                   ) -> tuple[tuple[Origin, ...], list[str]]:
    """The user values of a side effect given for another action (marked), and why it pauses."""
    stems = _stems(" ".join(action_words(tool)))
    vocabulary = _stems(" ".join(turn.vocabulary)) | stems
    marked, reasons = [], []
    for origin in origins:
        given = ""
        if origin.trusted and origin.source == "your message" and _top(origin.argument) not in tool.free:
            given = repurposed([turn.request], _holds(origin.value), _stem, vocabulary, stems)
        if given:
            stems_given = set(given.split(" / "))
            words = dict.fromkeys(w for w in (*turn.vocabulary, *action_words(tool)) if _stem(w.casefold()) in stems_given)
            given = " / ".join(words) or given
            origin = replace(origin, given_for=given)
            reasons.append(f"{origin.argument} is yours, but you gave it to {given}, not to "
                           f"{' / '.join(action_words(tool))}")
        marked.append(origin)
    return tuple(marked), reasons


def target_arguments(tool: FlowTool) -> tuple[str, ...]:
    """The arguments naming what a side effect is aimed at — its egress (a recipient) when declared,
    else its sinks the model may not write freely; none for an undeclared tool (nothing is known)."""
    if tool.sinks is None:
        return ()
    return tool.egress or tuple(name for name in tool.sinks if name not in tool.free)


def targets_of(tool: FlowTool, args: Mapping[str, Any]) -> frozenset[str]:
    """The normalised values of a call's target arguments."""
    return frozenset(normalise(text) for name in target_arguments(tool) if name in args
                     for _, text in leaves(args[name], name))


def _typed_targets(tool: FlowTool, origins: Sequence[Origin]) -> frozenset[str]:
    """The call's targets the user typed for this action (not given for another)."""
    names = set(target_arguments(tool))
    return frozenset(normalise(o.value) for o in origins if _top(o.argument) in names and o.trusted
                     and o.source in ("your message", "your answer") and not o.given_for)


def _beyond(tool: FlowTool, origins: Sequence[Origin], turn: TurnRecord) -> str:
    """Why the call goes past the count the request asked for, "" when it does not."""
    asked = asked_times([turn.request], _stem, _stems(" ".join(action_words(tool))))
    done = done_times(tool.name, turn.calls)
    earlier = [targets_of(tool, args) for name, args in turn.made if name == tool.name]
    # a call whose arguments are not known may have been aimed at anything: no target is new
    typed = _typed_targets(tool, origins) if len(earlier) >= done else frozenset()
    earlier += [frozenset()] * max(0, done - len(earlier))
    if not beyond_count(asked, earlier, typed):
        return ""
    return (f"your request asked for {asked} {tool.name} call(s) and {done} already ran, and this one is not aimed "
            "at a new value you typed; untrusted content was read since")


def decide(base: Approval, tool: FlowTool, args: Mapping[str, Any], turn: TurnRecord) -> FlowDecision:
    """The call's execution given its provenance: ``base`` is the tool's approval trait (run, ask,
    question); the result may only be stricter (a question stays a question)."""
    origins = call_origins(tool, args, turn)
    if base == "question":
        return FlowDecision("question", origins)
    reasons: list[str] = []
    codes: list[str] = []
    refusals = []
    for rule in turn.rules:
        why = rule_fires(rule, tool, args, turn)
        if why:
            (refusals if rule.effect == "refuse" else reasons).append(why)
            codes.append(f"{RULE}:{rule.name}")
    if refusals:
        return FlowDecision("refuse", origins, tuple(refusals), tuple(codes))
    for origin in origins:
        if origin.tainted:
            reasons.append(f"{origin.argument} comes from {origin.source}, not from you")
            codes.append(TAINTED)
    untrusted = untrusted_seen(turn.sources)
    egress = set(egress_arguments(args, None if tool.sinks is None else tool.egress)) if untrusted else set()
    for origin in origins:
        if _top(origin.argument) in egress and not origin.trusted:
            reasons.append(f"data may leave to {_destination(origin.value)[:80]!r} ({origin.argument}), "
                           "a destination you never named")
            codes.append(EGRESS)
    followed = None
    after_untrusted = not tool.read_only and untrusted
    for origin in origins if after_untrusted else ():
        if unknown_origin(origin) and _top(origin.argument) not in set(tool.free) | egress:
            seen = (f"it is not in anything you wrote, and {origin.source} holds it {origin.hidden}" if origin.hidden
                    else "it is in nothing you wrote and nothing a tool returned")
            reasons.append(f"the origin of {origin.argument} is unknown: {seen}, and untrusted content was read "
                           "before the call was proposed")
            codes.append(UNKNOWN)
    if after_untrusted:
        carries = carried_origins(tool, args, turn)
        for origin in carries:
            reasons.append(f"{origin.argument} carries {origin.value[:80]!r}, which you never gave"
                           + (f" ({origin.source} holds it {origin.hidden})" if origin.hidden else ""))
            codes.append(UNKNOWN)
        origins += carries
    if after_untrusted and not request_asks_for(turn.request, tool):
        followed = followed_source(tool, turn.sources)
        where = f" ({followed.source})" if followed else ""
        reasons.append(f"your request did not ask to {' / '.join(action_words(tool)) or tool.name}, "
                       f"and untrusted content was read before it was proposed{where}")
        codes.append(UNASKED)
    elif after_untrusted:
        origins, repurposes = _purpose_check(tool, origins, turn, egress)
        beyond = _beyond(tool, origins, turn)
        if beyond:
            reasons.append(beyond)
            codes.append(BEYOND)
        reasons += repurposes
        codes += [REPURPOSED] * bool(repurposes)
    execution = flow_execution(base, refused=False, paused=bool(reasons))
    if followed is None and (after_untrusted or EGRESS in codes) and execution == "ask" and not any(
            o.tainted for o in origins):
        # The request naming the action says the user wanted *a* deletion, not *this* one: a side
        # effect that pauses anyway (its tool asks, a rule) after untrusted content, with no sink
        # value from that content to show, names the text it follows, so the person can see what
        # may have chosen it (the id of a mail "you have just sent" is in nothing read). So does a
        # read that would send data to a destination the user never named.
        followed = followed_source(tool, turn.sources)
    origins += (followed,) if followed else ()
    return FlowDecision(execution, origins, tuple(reasons), tuple(dict.fromkeys(codes)))


def flow_execution(base: Approval, *, refused: bool, paused: bool) -> FlowExecution:
    """The execution from the tool's trait and what the flow found: a question stays a question, a
    refusing rule refuses, a trait that asks or a reason to pause asks, else the call runs."""
    if base == "question":
        return "question"
    if refused:
        return "refuse"
    return "ask" if base == "ask" or paused else "run"


def provenance_lines(origins: Sequence[Origin]) -> list[str]:
    """One line per sink value for a person: ``recipient = 'X' comes from tool result #2 (...): "…"``."""
    lines = []
    for origin in origins:
        label = "" if origin.argument == THE_CALL else f" [{origin.label}]"
        line = f"{origin.argument} = {origin.value[:80]!r}{label} comes from {origin.where}"
        lines.append(f"{line}: \"{origin.excerpt}\"" if origin.excerpt else line)
    return lines


__all__ = ["BEYOND", "EGRESS", "FlowDecision", "FlowTool", "REPURPOSED", "THE_CALL", "TurnRecord", "UNKNOWN",
           "action_words", "call_origins", "carried_origins", "decide", "flow_execution",
           "followed_source", "origin_of", "provenance_lines",
           "request_asks_for", "rule_fires", "target_arguments", "targets_of", "unknown_origin"]

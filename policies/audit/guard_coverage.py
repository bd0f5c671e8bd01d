"""Every way from a model's output to an action passes a policy decision: checked on the graph (pure).

Each node declares, where it is defined (``declare``), whether it calls a model, which actions it
takes (``acts``) and which policies decide inside it (``guards``) — a guard decides after the node's
own model call and before its own action and its routing. Each kind of action names the policy that
must decide it (``ACT_GUARDS``). ``check`` walks the graph's shape: from every model node, along
every edge, a path to a node taking action K must meet a node that guards K and leaves by an edge its
verdict chooses (a conditional edge: a ``Command(goto)``, a ``Send`` or a routing function). A node
that guards K itself is covered whatever leads to it. An undeclared node is a finding too, so a new
node cannot join a graph unexamined.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar, get_args

Act = Literal["tool", "subagent", "pipeline", "memory_write", "file_read"]
ACTS: tuple[str, ...] = get_args(Act)
# The policies that may decide each kind of action before it happens (any one of them).
ACT_GUARDS: Mapping[str, tuple[str, ...]] = {
    "tool": ("tool_calls",),  # approval and trust of the assistant's tools (MCP, HTTP, memory tools)
    "subagent": ("delegation",),  # the manager's phase-aware delegation policy
    "pipeline": ("slash_commands",),  # only the user's own slash command starts a pipeline
    # a lesson a model wrote (the memory rules), a skill draft a person approved
    "memory_write": ("memory", "skill_drafts"),
    # the tasklist's state machine, the skills sandbox, the delivery input rules
    "file_read": ("tasklist_machine", "skills", "delivery_input"),
}
ATTRIBUTE = "__reins_node__"
F = TypeVar("F", bound=Callable)


@dataclass(frozen=True)
class NodeDeclaration:
    model: bool = False
    acts: frozenset[str] = frozenset()
    guards: frozenset[str] = frozenset()


def declare(*, model: bool = False, acts: Iterable[str] = (), guards: Iterable[str] = ()) -> Callable[[F], F]:
    """Mark a node function: ``model`` (its output comes from a model call), the actions it takes and
    the policies that decide inside it."""
    unknown = sorted(set(acts) - set(ACTS))
    if unknown:
        raise ValueError(f"unknown action {unknown[0]!r}; one of {', '.join(ACTS)}")
    declaration = NodeDeclaration(model, frozenset(acts), frozenset(guards))

    def mark(fn: F) -> F:
        setattr(fn, ATTRIBUTE, declaration)
        return fn

    return mark


def carry_declaration(fn: object, wrapper: object) -> None:
    """Give ``wrapper`` the declaration of the node function it runs."""
    found = declaration_of(fn)
    if found is not None:
        setattr(wrapper, ATTRIBUTE, found)


def declaration_of(fn: object) -> NodeDeclaration | None:
    """A node's declaration, looking through wrappers (``functools.wraps``, ``partial``)."""
    seen = 0
    while fn is not None and seen < 8:
        found = getattr(fn, ATTRIBUTE, None)
        if isinstance(found, NodeDeclaration):
            return found
        fn = getattr(fn, "__wrapped__", None) or getattr(fn, "func", None)
        seen += 1
    return None


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    conditional: bool


@dataclass(frozen=True)
class GraphShape:
    """A compiled graph as the checker sees it; a subgraph node's inner graph in ``subgraphs``."""

    name: str
    nodes: Mapping[str, NodeDeclaration | None]
    edges: Sequence[Edge]
    subgraphs: Mapping[str, GraphShape] = field(default_factory=dict)


@dataclass(frozen=True)
class CheckedPath:
    graph: str
    source: str  # the model node
    target: str  # the acting node
    act: str
    guard: str  # the node whose policy decides, or "" when none does

    @property
    def guarded(self) -> bool:
        return bool(self.guard)

    def line(self) -> str:
        how = f"decided by {self.guard}" if self.guard else "UNGUARDED"
        return f"{self.graph}: {self.source} → {self.target} ({self.act}) {how} [{' | '.join(ACT_GUARDS[self.act])}]"


@dataclass(frozen=True)
class Coverage:
    paths: tuple[CheckedPath, ...]
    undeclared: tuple[str, ...]

    @property
    def findings(self) -> list[str]:
        return [f"undeclared node {name}" for name in self.undeclared] + [p.line() for p in self.paths if not p.guarded]

    @property
    def ok(self) -> bool:
        return not self.findings


def _acts(shape: GraphShape, name: str) -> frozenset[str]:
    declared = shape.nodes.get(name)
    acts = set(declared.acts) if declared else set()
    if name in shape.subgraphs:
        acts.add("pipeline")
    return frozenset(acts)


def _guards(shape: GraphShape, name: str, act: str) -> bool:
    declared = shape.nodes.get(name)
    return bool(declared and declared.guards.intersection(ACT_GUARDS[act]))


def _reaches(shape: GraphShape, source: str, target: str, act: str | None) -> bool:
    """Whether a path leads from ``source`` to ``target``; with ``act``, one that never leaves a node
    guarding ``act`` by a conditional edge (the policy's verdict chose that way)."""
    outgoing: dict[str, list[Edge]] = {}
    for edge in shape.edges:
        outgoing.setdefault(edge.source, []).append(edge)
    seen, frontier = {source}, [source]
    while frontier:
        node = frontier.pop()
        for edge in outgoing.get(node, []):
            if act is not None and edge.conditional and _guards(shape, node, act):
                continue
            if edge.target == target:
                return True
            if edge.target not in seen:
                seen.add(edge.target)
                frontier.append(edge.target)
    return False


def _decider(shape: GraphShape, source: str, target: str, act: str) -> str | None:
    """The node whose policy decides ``act`` on the way from ``source`` to ``target`` ("" when none
    does), or None when ``target`` cannot follow ``source`` at all."""
    if source != target and not _reaches(shape, source, target, None):
        return None
    if _guards(shape, target, act):
        return target  # it decides before it acts, whatever led to it
    if _reaches(shape, source, target, act):
        return ""
    # Name the guard whose verdict routes straight to the target when there is one.
    deciding = [e.source for e in shape.edges if e.target == target and e.conditional and _guards(shape, e.source, act)]
    return deciding[0] if deciding else "a guard on the way"


def check(shape: GraphShape) -> Coverage:
    """Every (model node, acting node) pair of the graph and its subgraphs, and what decides it."""
    paths: list[CheckedPath] = []
    undeclared = [f"{shape.name}:{n}" for n, d in shape.nodes.items() if d is None and n not in shape.subgraphs]
    models = [n for n, d in shape.nodes.items() if d and d.model]
    for target in shape.nodes:
        for act in sorted(_acts(shape, target)):
            for source in models:
                if source == target:  # a node's own action: checked on the paths that lead into it
                    continue
                guard = _decider(shape, source, target, act)
                if guard is not None:
                    paths.append(CheckedPath(shape.name, source, target, act, guard))
    for inner in shape.subgraphs.values():
        nested = check(inner)
        paths += nested.paths
        undeclared += nested.undeclared
    return Coverage(tuple(paths), tuple(undeclared))

"""A compiled graph as the guard-coverage check sees it (``reins.policies.audit.guard_coverage``): each node's
declaration, each edge and whether a decision chooses it, and the subgraphs inside."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START

from reins.policies.audit.guard_coverage import Coverage, Edge, GraphShape, check, declaration_of


def shape_of(compiled: Any, name: str | None = None) -> GraphShape:
    """The shape of a compiled LangGraph graph. Conditional edges are the ones a node's ``Command``
    (its declared ``destinations``), a ``Send`` or a routing function chooses."""
    drawn = compiled.get_graph()
    nodes = {
        node: declaration_of(spec.runnable) for node, spec in compiled.builder.nodes.items()
    }
    edges = [Edge(e.source, e.target, bool(e.conditional)) for e in drawn.edges
             if e.source != START and e.target != END]
    subgraphs = {inner: shape_of(graph, inner) for inner, graph in compiled.get_subgraphs()}
    return GraphShape(name or compiled.name, nodes, edges, subgraphs)


def guard_coverage(compiled: Any) -> Coverage:
    return check(shape_of(compiled))

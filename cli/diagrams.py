"""Mermaid diagrams of the compiled graphs, drawn offline: the docs' graph page and notebook pictures.

The graphs are found through ``langgraph.json`` (the same entry points Studio and Server load), so
the diagrams are of exactly what runs. ``python -m reins.cli.diagrams`` rewrites the blocks of
``docs/graphs.md``; a test fails when they are stale. ``diagram(graph)`` shows a graph as a picture in a notebook without
the network (``draw_mermaid_png()`` would call mermaid.ink).
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from dataclasses import dataclass
from typing import Any

from reins.runtime.config.paths import LANGGRAPH_JSON, PROJECT_ROOT

README = PROJECT_ROOT / "README.md"
DOCS = PROJECT_ROOT / "docs"
GRAPHS_PAGE = DOCS / "graphs.md"  # the diagrams, one block per graph of langgraph.json


def graph_paths() -> dict[str, str]:
    """Graph name → ``./file.py:attribute`` as declared in langgraph.json (a string, or a dict with a
    ``path`` and a ``description``)."""
    graphs = json.loads(LANGGRAPH_JSON.read_text(encoding="utf-8"))["graphs"]
    return {name: target["path"] if isinstance(target, dict) else target for name, target in graphs.items()}


def graph_entry_points() -> dict[str, str]:
    """Graph name → ``module:attribute`` as declared in langgraph.json."""
    entries = {}
    for name, target in graph_paths().items():
        path, attribute = target.rsplit(":", 1)
        module = "reins." + path.removeprefix("./").removesuffix(".py").replace("/", ".")
        entries[name] = f"{module}:{attribute}"
    return entries


def load_graph(name: str):
    entries = graph_entry_points()
    if name not in entries:
        raise KeyError(f"unknown graph {name!r}; known: {', '.join(entries)}")
    module, attribute = entries[name].split(":")
    return getattr(importlib.import_module(module), attribute)


def mermaid(name: str) -> str:
    return load_graph(name).get_graph().draw_mermaid().strip()


MERMAID_MIME = "text/vnd.mermaid"


@dataclass(frozen=True)
class MermaidDiagram:
    """A Mermaid diagram that Jupyter displays as a picture, offline.

    JupyterLab 4.1+ and Notebook 7.1+ render the ``text/vnd.mermaid`` output (and Mermaid fences
    in Markdown) with the Mermaid library they bundle; a front-end without it shows the source.
    """

    source: str

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {
            MERMAID_MIME: self.source,
            "text/markdown": f"```mermaid\n{self.source}\n```",
            "text/plain": self.source,
        }


def diagram(graph: Any, *, xray: bool | int = False) -> MermaidDiagram:
    """A compiled graph as a notebook picture; ``xray`` expands subgraphs.

    Example: ``diagram(build_delivery_chain())`` as a notebook cell's last line.
    """
    return MermaidDiagram(graph.get_graph(xray=xray).draw_mermaid().strip())


def _block(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- diagram:{re.escape(name)} -->\n```mermaid\n)(.*?)(\n?```)", re.S)


def page_with_diagrams(text: str) -> str:
    for name in graph_entry_points():
        pattern = _block(name)
        if not pattern.search(text):
            raise ValueError(f"docs/graphs.md has no block for {name} (<!-- diagram:{name} --> + a mermaid fence)")
        diagram = mermaid(name)
        text = pattern.sub(lambda m, d=diagram: m.group(1) + d + "\n```", text)
    return text


def main() -> int:
    current = GRAPHS_PAGE.read_text()
    updated = page_with_diagrams(current)
    if updated != current:
        GRAPHS_PAGE.write_text(updated)
        print("docs/graphs.md diagrams updated")
    else:
        print("docs/graphs.md diagrams are current")
    return 0


if __name__ == "__main__":
    sys.exit(main())

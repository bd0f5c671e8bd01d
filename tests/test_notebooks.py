"""The notebooks run top to bottom on the offline model under the standard ``python3`` kernel (the
environment Jupyter runs in: no kernel to register), from a folder of their own, draw each graph as a
picture without the network, import Reins only as ``from reins import …`` and are committed without
outputs."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from reins.cli.diagrams import MERMAID_MIME, diagram, load_graph

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
GRAPH_NOTEBOOKS = {"01_tasklist_agent": "tasklist_agent", "02_delivery_chain": "delivery_chain", "03_assistant": "assistant"}
KERNEL = "python3"  # ipykernel's own kernel: the interpreter Jupyter itself runs in


def test_the_graph_notebooks_and_the_evaluation_notebook_exist():
    assert [p.name for p in NOTEBOOKS] == [
        "01_tasklist_agent.ipynb", "02_delivery_chain.ipynb", "03_assistant.ipynb", "04_evaluation.ipynb",
        "05_assistant_tools.ipynb",
    ]


def test_the_docs_list_every_notebook_and_ask_for_no_kernel_registration():
    guide = (ROOT / "docs" / "studio-and-notebooks.md").read_text()
    for path in NOTEBOOKS:
        assert path.name in guide, f"docs/studio-and-notebooks.md does not list {path.name}"
    for text in [guide, (ROOT / "README.md").read_text()]:
        assert "ipykernel install" not in text


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_declares_the_standard_python3_kernel(path):
    spec = nbformat.read(path, as_version=4).metadata["kernelspec"]
    assert spec["name"] == KERNEL and spec["language"] == "python"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_needs_no_chdir_and_no_sys_path(path):
    code = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
    assert not re.search(r"os\.chdir|sys\.path|REINS_MODEL", code)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_committed_without_outputs(path):
    book = nbformat.read(path, as_version=4)
    for cell in book.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{path.name}: strip outputs before committing"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_notebook_draws_through_the_network(path):
    code = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
    assert not re.search(r"draw_mermaid_png|mermaid\.ink|draw_png", code)


def test_a_diagram_is_a_mermaid_picture_with_a_markdown_and_a_text_fallback():
    bundle = diagram(load_graph("delivery_chain"))._repr_mimebundle_()
    source = bundle[MERMAID_MIME]
    assert "graph TD;" in source and "reviewer(reviewer)" in source
    assert bundle["text/markdown"] == f"```mermaid\n{source}\n```" and bundle["text/plain"] == source


@pytest.mark.integration
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_top_to_bottom(path, tmp_path, monkeypatch):
    # No registered kernel anywhere (a private Jupyter data path): ``python3`` is ipykernel's own.
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter"))
    monkeypatch.delenv("REINS_MODEL", raising=False)
    elsewhere = tmp_path / "somewhere"  # not the checkout: the notebook finds everything through `reins`
    elsewhere.mkdir()
    book = nbformat.read(path, as_version=4)
    NotebookClient(book, timeout=300, resources={"metadata": {"path": str(elsewhere)}}).execute()  # its own kernel
    outputs = [out for cell in book.cells for out in cell.get("outputs", [])]
    assert [out for out in outputs if out.get("output_type") == "error"] == []
    printed = "".join(out.get("text", "") for out in outputs)
    assert "Traceback" not in printed
    if path.stem in GRAPH_NOTEBOOKS:
        pictures = [out["data"][MERMAID_MIME] for out in outputs if MERMAID_MIME in out.get("data", {})]
        assert len(pictures) == 1, f"{path.name}: the graph is shown once as a Mermaid picture"
        expected = load_graph(GRAPH_NOTEBOOKS[path.stem]).get_graph().draw_mermaid().strip()
        nodes = re.findall(r"^\t(\w+)\(", expected, re.M)
        # A subgraph node (the assistant's pipelines, drawn with xray) is a cluster of its own nodes.
        assert nodes and all(f"\t{node}(" in pictures[0] or f"\tsubgraph {node}\n" in pictures[0] for node in nodes)

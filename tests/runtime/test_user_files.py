"""The user's files (flow rules, persona, MCP configuration, evaluation records) are read whole, once,
bounded by what is read rather than by ``stat``, and refused in one line naming the variable, the file
and the field; a device or a FIFO is refused without being read or waited on."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from reins.evals.records import load_records
from reins.runtime.config.files import FileRefused, read_bounded, read_bounded_text
from reins.runtime.config.persona import PersonaError, read_persona_file
from reins.runtime.tools.flow_rules import FlowRulesError, read_rules
from reins.runtime.tools.mcp_tools import load_mcp_tools

HERE = Path(__file__).resolve().parent
RECORDS = HERE.parent / "evals" / "eval_records" / "records.json"


def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.json"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    ("make", "limit", "expected"),
    [
        (lambda tmp: tmp / "ok.txt", 5, b"12345"),  # exactly the limit is read whole
        (lambda tmp: tmp / "ok.txt", 4, "X: ok.txt: larger than 4 bytes"),
        (lambda tmp: tmp / "missing.txt", 5, "X: missing.txt: no such file"),
        (lambda tmp: tmp, 5, f"X: {{tmp}}: not a regular file"),
        (lambda tmp: Path("/dev/zero"), 5, "X: zero: not a regular file"),
        (lambda tmp: Path("/dev/null"), 5, "X: null: not a regular file"),
        (lambda tmp: Path("/proc/self/maps"), 16, "X: maps: larger than 16 bytes"),  # stat says 0 bytes
    ],
)
def test_a_file_is_read_whole_and_bounded_or_refused_in_one_line(tmp_path, make, limit, expected):
    (tmp_path / "ok.txt").write_bytes(b"12345")
    path = make(tmp_path)
    if isinstance(expected, bytes):
        assert read_bounded(path, variable="X", limit=limit) == expected
        return
    with pytest.raises(FileRefused) as refused:
        read_bounded(path, variable="X", limit=limit)
    assert str(refused.value) == expected.format(tmp=tmp_path.name)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = _fifo(tmp_path)
    outcome: list[str] = []

    def read() -> None:
        try:
            read_bounded(fifo, variable="X", limit=10)
        except FileRefused as error:
            outcome.append(str(error))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=10)
    if reader.is_alive():  # unblock the reader so the test process can end
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("reading a FIFO waited for a writer")
    assert outcome == ["X: pipe.json: not a regular file"]


def test_text_that_is_not_utf8_is_refused(tmp_path):
    (tmp_path / "latin.toml").write_bytes(b"caf\xe9")
    with pytest.raises(FileRefused, match=r"^X: latin.toml: not UTF-8 text$"):
        read_bounded_text(tmp_path / "latin.toml", variable="X", limit=100)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("rules:\n  - name: a\n    kind: nope\n", "REINS_FLOW_RULES: rules.yaml: rules.0: Input tag 'nope'"),
        ("rules: [\n", "REINS_FLOW_RULES: rules.yaml: cannot be read as a rule file (ParserError)"),
        (None, "REINS_FLOW_RULES: zero: not a regular file"),
    ],
)
def test_a_flow_rules_file_is_refused_naming_the_variable_the_file_and_the_rule(tmp_path, text, expected):
    path = tmp_path / "rules.yaml"
    if text is None:
        path = Path("/dev/zero")
    else:
        path.write_text(text)
    with pytest.raises(FlowRulesError) as refused:
        read_rules(path)
    assert str(refused.value).startswith(expected) and "\n" not in str(refused.value)


def test_a_persona_fifo_and_device_are_refused(tmp_path):
    with pytest.raises(PersonaError, match="^REINS_ASSISTANT_PROMPT_FILE: pipe.json: not a regular file$"):
        read_persona_file(_fifo(tmp_path))
    with pytest.raises(PersonaError, match="^REINS_ASSISTANT_PROMPT_FILE: zero: not a regular file$"):
        read_persona_file("/dev/zero")


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        (None, "REINS_MCP_CONFIG: zero: not a regular file"),
        ("{", "REINS_MCP_CONFIG: mcp.json: not valid JSON"),
        ({"mcpServers": {"files": {"command": ""}}},
         "REINS_MCP_CONFIG: mcp.json: MCP server 'files': command must be a non-empty string"),
    ],
)
def test_an_mcp_configuration_file_is_refused_naming_the_variable_the_file_and_the_field(tmp_path, document, expected):
    from reins.runtime.tools.mcp_config import McpConfigError

    path = Path("/dev/zero") if document is None else tmp_path / "mcp.json"
    if document is not None:
        path.write_text(document if isinstance(document, str) else json.dumps(document))
    with pytest.raises(McpConfigError) as refused:
        load_mcp_tools(str(path))
    assert str(refused.value) == expected


@pytest.mark.parametrize("value_at", [-1, 10**6, "0", True, None])
def test_a_record_naming_an_output_outside_the_table_is_refused(tmp_path, value_at):
    document = json.loads(RECORDS.read_text(encoding="utf-8"))
    first = next(r for r in document["records"] if r["decisions"].get("contract_outputs"))
    first["decisions"]["contract_outputs"][0]["value_at"] = value_at  # -1 would read the last output
    (tmp_path / "records.json").write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ValueError) as refused:
        load_records(tmp_path)
    assert str(refused.value).startswith(
        f"reins replay --eval: records.json: record {first['id']!r}: contract_outputs.0.value_at: names a contract "
        "output the file does not hold")

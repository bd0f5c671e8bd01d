"""A fast CLI start (help, version and argument errors load neither LangGraph nor the OpenAI client)
and ``--json`` printing exactly one JSON object on every sub-command, errors included."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reins.cli import COMMAND_MODULES, main

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("langgraph", "langchain_core", "langchain_openai", "openai")

PROBE = """
import contextlib, io, json, sys
from reins.cli import main
codes = []
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            codes.append(main(argv))
        except SystemExit as done:
            codes.append(done.code)
loaded = sorted({name.split(".")[0] for name in sys.modules} & set(json.loads(sys.argv[2])))
print(json.dumps({"codes": codes, "loaded": loaded}))
"""

COMMANDS = [module.rsplit(".", 1)[1] for module in COMMAND_MODULES]


def test_help_version_argument_errors_and_doctor_import_no_heavy_library():
    argv = [["--help"], ["--version"], [], ["deliver", "--bogus"], ["runs", "--limit", "x", "--json"],
            ["deliver", "--scenario", "nope"], ["deliver", "--file", "missing.md"], ["doctor"], ["doctor", "--json"]]
    argv += [[command, "--help"] for command in COMMANDS]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(argv), json.dumps(HEAVY)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
    )
    result = json.loads(done.stdout)
    assert result["codes"] == [0, 0, 2, 2, 2, 2, 2, 0, 0] + [0] * len(COMMANDS)
    assert result["loaded"] == []


# Errors found in a command's handler (not by argparse), said before LangGraph or a client loads.
HANDLER_ERRORS = [["resume", "t1", "--decision", "{not json"], ["chat", "--json"], ["chat", "--memory", "--once", "x"],
                  ["chat", "--once", " "], ["chat", "-c", "--thread", "x"], ["runs", "--limit", "0"],
                  ["eval", "--repeats", "0"], ["eval", "--perturb", "x"], ["eval", "--perturb-kinds", "nope"],
                  ["replay", "--eval", "/nonexistent/records.json"], ["doctor", "--fuzz", "3"],
                  ["deliver", "./nope.md"]]


@pytest.mark.parametrize("argv", HANDLER_ERRORS, ids=[" ".join(a) for a in HANDLER_ERRORS])
def test_a_handler_s_argument_error_loads_no_heavy_library(argv, tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps([argv]), json.dumps(HEAVY)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
        env={**__import__("os").environ, "REINS_HOME": str(tmp_path)},
    )
    assert json.loads(done.stdout) == {"codes": [2], "loaded": []}


# What made every argument error cost 0.6 s of CPU: the data-flow rules' stemmer and the schemas'
# pydantic, loaded by the chat command's module when the parser was built.
STARTUP_WEIGHT = ("snowballstemmer", "pydantic", "yaml")
ARGUMENT_ERRORS = [["eval", "--bogus"], ["resume"], ["deliver", "--bogus"], ["chat", "--bogus"], ["runs", "--limit", "x"],
                   ["graph"], ["tasklist"], ["bench", "--bogus"], ["doctor", "--bogus"], ["replay", "--bogus"]]


def test_an_argument_error_loads_neither_the_stemmer_nor_pydantic():
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(ARGUMENT_ERRORS), json.dumps([*HEAVY, *STARTUP_WEIGHT])],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
    )
    assert json.loads(done.stdout) == {"codes": [2] * len(ARGUMENT_ERRORS), "loaded": []}


# (argv, exit code, error code): every sub-command, a bad input or bad arguments, with --json.
BAD = [
    (["doctor", "--json", "--bogus"], 2, "bad_arguments"),
    (["graph", "nope", "--json"], 2, "bad_input"),
    (["deliver", "--json"], 2, "bad_input"),
    (["deliver", "--scenario", "BAD ID", "--json"], 2, "bad_input"),
    (["tasklist", "no-uri-here", "--json"], 2, "bad_input"),
    (["resume", "t1", "--decision", "{not json", "--json"], 2, "bad_input"),
    (["resume", "--json"], 2, "bad_arguments"),
    (["runs", "--prune", "-1", "--json"], 2, "bad_input"),
    (["chat", "--json"], 2, "bad_input"),
    (["eval", "--repeats", "0", "--json"], 2, "bad_input"),
    (["bench", "nope", "--json"], 2, "bad_input"),
    (["replay", "--json"], 2, "bad_input"),
    (["nope", "--json"], 2, "bad_arguments"),
]


def test_every_sub_command_is_covered():
    assert {argv[0] for argv, _, _ in BAD} >= set(COMMANDS)


@pytest.mark.parametrize(("argv", "exit_code", "code"), BAD, ids=[" ".join(a) for a, _, _ in BAD])
def test_json_errors_are_one_json_object(argv, exit_code, code, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REINS_CHECKPOINT", "memory")
    assert main(argv) == exit_code
    out = capsys.readouterr().out
    payload = json.loads(out)  # exactly one object: json.loads refuses trailing data
    assert list(payload) == ["error"]
    assert payload["error"]["code"] == code and payload["error"]["message"]
    assert "\n" not in out.strip()


def test_configuration_errors_and_failures_are_json_too(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REINS_CONTRACT_MODE", "sometimes")
    assert main(["doctor", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["error"]["message"].startswith("REINS_CONTRACT_MODE")
    monkeypatch.delenv("REINS_CONTRACT_MODE")

    from reins.cli import graph as graph_command

    def broken(_name: str) -> str:
        raise RuntimeError("diagram failed at /home/alice/secret")

    monkeypatch.setattr(graph_command, "mermaid", broken)
    assert main(["graph", "delivery_chain", "--json"]) == 4
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "failed" and "/home/alice" not in error["message"]


def test_without_json_errors_stay_one_line_on_stderr(capsys):
    assert main(["deliver", "--bogus"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("usage: reins") and captured.err.rstrip().endswith("unrecognized arguments: --bogus")

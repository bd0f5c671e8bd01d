"""One cause, one exit code, whichever graph it happened in (``reins.cli.errors.EXIT_FOR_OUTCOME``)."""

from __future__ import annotations

import json

import pytest

from reins.cli import main
from reins.cli.errors import EXIT_FOR_OUTCOME
from tests.wire.llama_server import CONTEXT_400
from tests.wire.provider_stub import Completion, HttpError

COMMANDS = {
    "deliver": ["deliver", "--scenario", "request-limit-banner"],
    "tasklist": ["tasklist", "docs://versions/v0.2.0-ready.md"],
}
PROSE = Completion(content="Sure! Here is what I think about it.")  # no JSON: invalid after the repair too


@pytest.mark.parametrize(
    ("reply", "outcome"),
    [(PROSE, "failed"), (HttpError(502, "bad gateway", "server_error"), "failed"), (CONTEXT_400, "failed"),
     (HttpError(401, "no"), "failed")],
    ids=["contract-failure", "502", "context-window", "401"],
)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_same_cause_exits_the_same_in_every_graph(stub, fast_cli, capsys, command, reply, outcome):
    provider = stub(lambda body: reply)
    fast_cli(provider.base_url)
    assert main(COMMANDS[command]) == EXIT_FOR_OUTCOME[outcome] == 4
    assert "Traceback" not in capsys.readouterr().err


def test_tasklist_json_has_one_status(stub, fast_cli, capsys):
    provider = stub(lambda body: PROSE)
    fast_cli(provider.base_url)
    assert main([*COMMANDS["tasklist"], "--json"]) == 4
    payload = json.loads(capsys.readouterr().out)
    assert "status" not in payload
    assert payload["final_decision"] == "stopped" and payload["artifact"] is None

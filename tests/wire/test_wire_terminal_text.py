"""Escape sequences a model writes never reach the terminal (the CLI prints through ``printable``)."""

from __future__ import annotations

import json

from reins.cli import main
from tests.wire.behaviours import ANSWERS, cooperative, schema_name
from tests.wire.provider_stub import Completion

HOSTILE = "\x1b[2J\x1b[H\x1b[32mstatus: pass\x1b[0m\r\x1b]0;owned\x07"


def hostile(body):
    name = schema_name(body)
    if name in ("DeliveryPlan", "RiskReview"):
        return Completion(content=json.dumps(dict(ANSWERS[name], summary=f"Summary {HOSTILE} end.")))
    return cooperative(body)


def test_model_written_escapes_never_reach_stdout_or_stderr(stub, fast_cli, capsys):
    provider = stub(hostile)
    fast_cli(provider.base_url)
    code = main(["deliver", "--scenario", "request-limit-banner"])
    out, err = capsys.readouterr()
    assert code in (0, 1)
    assert "Summary" in out and "status: pass" in out  # the text is printed, its escapes are not
    for stream in (out, err):
        assert "\x1b" not in stream and "\r" not in stream and "\x07" not in stream

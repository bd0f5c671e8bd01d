"""A loopback proxy in front of the model server that keeps, per response, what the server itself
reports: prompt and output tokens, the prompt tokens it served from its cache, its prompt and
generation time. Reins' own metrics count calls and repairs; the server is the authority on tokens
and on its cache, and this way every request is counted, ``reins doctor --check``'s included.

llama.cpp reports the cached share as ``usage.prompt_tokens_details.cached_tokens`` (OpenAI's field,
hosted providers send it too) and as ``timings.cache_n``; a streamed answer carries both in its last
chunks. The body is passed on as it arrives, so a streamed answer still streams.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

HOP_HEADERS = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length", "proxy-connection"})


@dataclass
class Usage:
    """One response as the server counted it (zeros where it said nothing)."""

    path: str = ""
    status: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    prompt_ms: float = 0.0
    predicted_ms: float = 0.0
    wall_ms: float = 0.0
    finish_reason: str | None = None


def _events(body: bytes) -> Iterator[dict[str, Any]]:
    """The JSON objects of a body: one for a plain response, one per ``data:`` line of a stream."""
    text = body.decode("utf-8", "replace").strip()
    if not text.startswith("data:") and "\ndata:" not in text:
        try:
            value = json.loads(text)
        except ValueError:
            return
        if isinstance(value, dict):
            yield value
        return
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("data:"):
            continue
        payload = line[len("data:"):].strip()
        if payload == "[DONE]":
            continue
        try:
            value = json.loads(payload)
        except ValueError:
            continue
        if isinstance(value, dict):
            yield value


def read_usage(body: bytes, path: str = "", status: int = 200) -> Usage:
    """What the server reported in ``body`` (plain JSON or server-sent events): the last ``usage`` and
    ``timings`` seen win, as a stream sends them once, at its end."""
    usage = Usage(path=path, status=status)
    for event in _events(body):
        counts = event.get("usage")
        if isinstance(counts, dict):
            usage.prompt_tokens = int(counts.get("prompt_tokens") or 0)
            usage.output_tokens = int(counts.get("completion_tokens") or 0)
            details = counts.get("prompt_tokens_details")
            if isinstance(details, dict) and details.get("cached_tokens") is not None:
                usage.cached_tokens = int(details["cached_tokens"])
        timings = event.get("timings")
        if isinstance(timings, dict):
            usage.prompt_ms = float(timings.get("prompt_ms") or 0.0)
            usage.predicted_ms = float(timings.get("predicted_ms") or 0.0)
            if not usage.cached_tokens and timings.get("cache_n"):
                usage.cached_tokens = int(timings["cache_n"])
            if not usage.prompt_tokens and timings.get("prompt_n") is not None:  # a server without usage
                usage.prompt_tokens = int(timings["prompt_n"]) + int(timings.get("cache_n") or 0)
                usage.output_tokens = int(timings.get("predicted_n") or 0)
        for choice in event.get("choices") or ():
            if isinstance(choice, dict) and choice.get("finish_reason"):
                usage.finish_reason = str(choice["finish_reason"])
    return usage


@dataclass
class Meter:
    """Every model response since the last ``take``; thread-safe (the reviewers call in parallel)."""

    responses: list[Usage] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, usage: Usage) -> None:
        with self.lock:
            self.responses.append(usage)

    def take(self) -> list[Usage]:
        with self.lock:
            taken, self.responses = self.responses, []
        return taken


def totals(responses: list[Usage]) -> dict[str, Any]:
    """A run's sums over its model responses (completions only; health and model-list requests are
    not model calls)."""
    calls = [r for r in responses if r.path.endswith("/chat/completions")]
    prompt = sum(r.prompt_tokens for r in calls)
    cached = sum(r.cached_tokens for r in calls)
    return {
        "model_calls": len(calls),
        "failed_calls": sum(1 for r in calls if r.status >= 400),
        "prompt_tokens": prompt,
        "output_tokens": sum(r.output_tokens for r in calls),
        "cached_prompt_tokens": cached,
        "cached_share": round(cached / prompt, 3) if prompt else None,
        "cut_at_bound": sum(1 for r in calls if r.finish_reason == "length"),
        "server_prompt_s": round(sum(r.prompt_ms for r in calls) / 1000, 1),
        "server_generation_s": round(sum(r.predicted_ms for r in calls) / 1000, 1),
    }


def as_records(responses: list[Usage]) -> list[dict[str, Any]]:
    return [asdict(r) for r in responses]


def _handler(upstream: str, meter: Meter) -> type[BaseHTTPRequestHandler]:
    target = urlsplit(upstream)

    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # the body ends when the connection closes: a stream passes as it comes

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
            return

        def _forward(self) -> None:
            started = time.monotonic()
            length = int(self.headers.get("Content-Length") or 0)
            payload = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS | {"host"}}
            connection = http.client.HTTPConnection(target.hostname, target.port, timeout=3600)
            try:
                connection.request(self.command, self.path, body=payload, headers=headers)
                response = connection.getresponse()
                self.send_response(response.status)
                for key, value in response.getheaders():
                    if key.lower() not in HOP_HEADERS:
                        self.send_header(key, value)
                self.end_headers()
                body = bytearray()
                while chunk := response.read1(65536):
                    body.extend(chunk)
                    self.wfile.write(chunk)
                    self.wfile.flush()
            except OSError:
                self.close_connection = True
                return
            finally:
                connection.close()
            if self.command == "POST":
                usage = read_usage(bytes(body), self.path, response.status)
                usage.wall_ms = round((time.monotonic() - started) * 1000, 1)
                meter.add(usage)

        do_GET = do_POST = _forward

    return Forward


@contextmanager
def metering_proxy(upstream: str, meter: Meter) -> Iterator[str]:
    """Serve a proxy to ``upstream`` (``http://127.0.0.1:PORT``) on a free loopback port; yield its base
    URL; every POST's response is read into ``meter``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(upstream, meter))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="meter", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

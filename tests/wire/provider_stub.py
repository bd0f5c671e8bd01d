"""A loopback OpenAI-compatible chat-completions server for the wire tests (standard library only).

It listens on 127.0.0.1, records every request (path, headers, JSON body) and answers with what a
test's ``answer(body)`` function returns: a chat completion in the real OpenAI wire format (streamed
as server-sent events when the request asks for ``stream``), an HTTP
error with an OpenAI-style error body, or a dropped connection. It imports nothing from Reins: what
it answers is decided from the request alone, the way a provider would.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ids = itertools.count(1)


@dataclass(frozen=True)
class Completion:
    """A ``chat.completion`` with one choice: text, tool calls, or both."""

    content: str | None = None
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()  # (function name, arguments)
    finish_reason: str | None = None  # default: "tool_calls" with calls, else "stop"
    chunk_chars: int = 40  # a streamed answer's text per chunk
    chunk_delay_s: float = 0.0  # a pause before each chunk (a server generating as it goes)

    def chunks(self, model: str) -> list[dict[str, Any]]:
        """The same completion as ``chat.completion.chunk`` events (``"stream": true``)."""
        whole = self.body(model)
        base = {key: whole[key] for key in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
        message = whole["choices"][0]["message"]
        text = message.get("content") or ""
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        deltas += [{"content": text[i:i + self.chunk_chars]} for i in range(0, len(text), self.chunk_chars)]
        if message.get("tool_calls"):
            deltas.append({"tool_calls": [{"index": n, **call} for n, call in enumerate(message["tool_calls"])]})
        events = [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]} for delta in deltas]
        events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": whole["choices"][0]["finish_reason"]}]})
        events.append({**base, "choices": [], "usage": whole["usage"]})
        return events

    def body(self, model: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": f"call_{next(_ids)}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(args)}}
                for name, args in self.tool_calls
            ]
        finish = self.finish_reason or ("tool_calls" if self.tool_calls else "stop")
        text = json.dumps(message)
        return {
            "id": f"chatcmpl-{next(_ids)}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": {"prompt_tokens": 100, "completion_tokens": len(text) // 4, "total_tokens": 100 + len(text) // 4},
        }


@dataclass(frozen=True)
class HttpError:
    """An HTTP error response with the body an OpenAI-compatible server sends."""

    status: int
    message: str = "error"
    kind: str = "invalid_request_error"
    headers: tuple[tuple[str, str], ...] = ()  # e.g. (("retry-after", "1"),)
    extra: tuple[tuple[str, Any], ...] = ()  # more fields of the error object (llama.cpp adds token counts)

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.kind, "param": None, "code": None, **dict(self.extra)}}


class Drop:
    """Close the connection without answering (what a crashed or restarting server does)."""


Reply = Completion | HttpError | Drop


class _QuietServer(ThreadingHTTPServer):
    """A client that gave up (its timeout) before a slow answer was written is no error of the stub's."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


@dataclass
class StubProvider:
    """``with StubProvider(answer) as stub: ...`` serves ``stub.base_url`` until the block ends."""

    answer: Callable[[dict[str, Any]], Reply]
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    streamed: list[int] = field(default_factory=list)  # per streamed answer: the text chunks written

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def bodies(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.requests)

    def __enter__(self) -> StubProvider:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                return None

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with stub._lock:
                    stub.requests.append(body)
                    stub.headers.append({k.lower(): v for k, v in self.headers.items()})
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self._send(404, HttpError(404, "not found").body())
                reply = stub.answer(body)
                if isinstance(reply, Drop):
                    self.close_connection = True
                    self.connection.close()
                    return None
                if isinstance(reply, HttpError):
                    return self._send(reply.status, reply.body(), reply.headers)
                if body.get("stream"):
                    return self._stream(reply, str(body.get("model", "stub-model")))
                return self._send(200, reply.body(str(body.get("model", "stub-model"))))

            def _stream(self, reply: Completion, model: str) -> None:
                """Server-sent events, one chunk at a time; a client that hangs up ends the stream."""
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                self.close_connection = True
                with stub._lock:
                    stub.streamed.append(0)
                    slot = len(stub.streamed) - 1
                for event in reply.chunks(model):
                    if reply.chunk_delay_s:
                        time.sleep(reply.chunk_delay_s)
                    self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                    self.wfile.flush()
                    with stub._lock:
                        stub.streamed[slot] += 1
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            def _send(self, status: int, payload: dict[str, Any], headers: tuple[tuple[str, str], ...] = ()) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released): connecting is refused."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]

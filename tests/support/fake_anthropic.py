"""A local Anthropic-Messages-compatible HTTP server for tests (stdlib only).

``FakeAnthropicServer`` listens on 127.0.0.1 on a free port and serves
``POST /v1/messages`` (plain JSON, or server-sent events when the body says
``"stream": true``) with the shapes of the real API, so the ``anthropic`` client
or the Claude Code CLI (``ANTHROPIC_BASE_URL=server.root_url``) talks to it over
real HTTP::

    with FakeAnthropicServer(script=[tool_turn(("Read", {"file_path": "SKILL.md"})),
                                     text_turn("done")]) as server:
        ...

Scripted turns
    ``server.script`` is a list of assistant turns consumed one per *scripted*
    request, in order: a string (one text block) or a dict ``{"text": optional
    str, "tool_use": [{"name", "input", "id"?}], "stop_reason"?}``
    (``text_turn`` / ``tool_turn`` build them). A turn with ``tool_use`` blocks
    ends with ``stop_reason: "tool_use"``, else ``"end_turn"``. ``script`` may
    also hold a callable ``body -> turn`` that decides from the request (e.g.
    to quote a tool result back). When the script is used up, ``fallback`` (a
    turn, default ``"(script exhausted)"``) answers.

    Which requests consume the script: ``scripted(body)``, by default those that
    offer ``tools``. Claude Code also sends side requests without tools (titles,
    summaries, quota probes); they get ``side_reply`` and leave the script alone,
    so a test's script describes only the agent's own turns.

Faults and latency (per request, deterministic)
    ``fail_plan`` is a list of fault names consumed one per ``/v1/messages``
    request (scripted or not), in order; ``"ok"`` answers normally. Names:
    ``529`` (overloaded_error), ``500`` (api_error), ``429`` (rate_limit_error,
    ``retry-after: 0``), ``400`` (invalid_request_error), ``401``
    (authentication_error), ``reset`` (socket closed, no answer),
    ``cut-stream`` (a streamed answer stops after ``message_start``).
    A faulted request does not consume the script, so the retry gets the turn.
    ``latency_plan`` is a list of seconds to wait before answering, one per
    ``/v1/messages`` request (after it, ``latency_s``).

Other endpoints
    ``POST /v1/messages/count_tokens`` answers ``{"input_tokens": n}``;
    ``GET /v1/models`` one model; ``HEAD``/``GET`` of anything else 200 with
    ``{}`` so that start-up probes do not fail. Every request is recorded.

Bookkeeping (guarded by a lock): ``records`` (``RecordedRequest``: method, path,
query, headers with lower-cased names, parsed body or None, raw text), and the
views ``messages_requests`` / ``scripted_requests`` (bodies), ``faults_served``.
Usage: ``input_tokens`` = words of the request's messages and system prompt,
``output_tokens`` = words of the answer's text and tool inputs, plus
``cache_read_tokens`` / ``cache_creation_tokens`` as set on the server.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable

FAULTS = frozenset({"ok", "529", "500", "429", "400", "401", "reset", "cut-stream"})
_ERRORS = {
    "529": (529, "overloaded_error", "Overloaded"),
    "500": (500, "api_error", "Internal server error"),
    "429": (429, "rate_limit_error", "Number of request tokens has exceeded your rate limit"),
    "400": (400, "invalid_request_error", "messages: the fake server refused this request"),
    "401": (401, "authentication_error", "invalid x-api-key"),
}

Turn = Any  # str | dict | Callable[[dict], str | dict]


def text_turn(text: str) -> dict[str, Any]:
    return {"text": text}


def tool_turn(*calls: tuple[str, dict[str, Any]], text: str | None = None) -> dict[str, Any]:
    """An assistant turn asking for tools: ``tool_turn(("Bash", {"command": "ls"}))``."""
    return {"text": text, "tool_use": [{"name": name, "input": args} for name, args in calls]}


_NOT_WORDS = ("type", "id", "tool_use_id", "cache_control", "role")


def _words(value: Any) -> int:
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, list):
        return sum(_words(v) for v in value)
    if isinstance(value, dict):
        return sum(_words(v) for k, v in value.items() if k not in _NOT_WORDS)
    return 0


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks of a request's last user message (what the agent's tools returned)."""
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user" and isinstance(message.get("content"), list):
            return [b for b in message["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
    return []


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    raw: str = ""
    fault: str = "ok"
    scripted: bool = False


@dataclass
class _Answer:
    """One assistant message: content blocks, stop reason, usage."""

    content: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str = "end_turn"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: "FakeAnthropicServer"

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that hang up are expected


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def _send(self, status: int, payload: bytes, content_type: str = "application/json",
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("request-id", f"req_{uuid.uuid4().hex[:20]}")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
        self.wfile.flush()

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), headers=headers)

    def _send_error(self, status: int, err_type: str, message: str, headers: dict[str, str] | None = None) -> None:
        self._send_json(status, {"type": "error", "error": {"type": err_type, "message": message}}, headers)

    def _reset(self) -> None:
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        except OSError:
            pass

    def _read(self) -> tuple[dict[str, Any] | None, str]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            return None, raw
        return (body if isinstance(body, dict) else None), raw

    def _record(self, body: dict[str, Any] | None, raw: str) -> RecordedRequest:
        path, _, query = self.path.partition("?")
        record = RecordedRequest(self.command, path.rstrip("/") or "/", query,
                                 {k.lower(): v for k, v in self.headers.items()}, body, raw)
        self.server.fake._add(record)
        return record

    def do_HEAD(self) -> None:  # noqa: N802
        self._record(None, "")
        self._send(200, b"{}")

    def do_GET(self) -> None:  # noqa: N802
        record = self._record(None, "")
        fake = self.server.fake
        if record.path == "/v1/models":
            self._send_json(200, {"data": [{"type": "model", "id": fake.model_name, "display_name": fake.model_name,
                                            "created_at": "2025-01-01T00:00:00Z"}],
                                  "has_more": False, "first_id": fake.model_name, "last_id": fake.model_name})
        else:
            self._send_json(200, {})

    def do_POST(self) -> None:  # noqa: N802
        body, raw = self._read()
        record = self._record(body, raw)
        fake = self.server.fake
        if record.path == "/v1/messages/count_tokens":
            counted = body or {}
            self._send_json(200, {"input_tokens": _words(counted.get("messages")) + _words(counted.get("system"))})
            return
        if record.path != "/v1/messages":
            self._send_error(404, "not_found_error", f"Unknown path {record.path}")
            return
        fault, delay = fake._next_fault_and_delay(record)
        if delay > 0:
            fake._stop.wait(delay)
        if body is None:
            self._send_error(400, "invalid_request_error", "The request body is not a JSON object")
            return
        if fault == "reset":
            self._reset()
            return
        if fault in _ERRORS:
            status, err_type, message = _ERRORS[fault]
            self._send_error(status, err_type, message, {"retry-after": "0"} if fault == "429" else None)
            return
        try:
            answer = fake._answer_for(record)
        except Exception as exc:  # a script bug should be visible, not a hang
            self._send_error(500, "api_error", f"fake script failed: {type(exc).__name__}: {exc}")
            return
        usage = fake._usage(body, answer)
        message = {"id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant",
                   "model": body.get("model") or fake.model_name, "content": answer.content,
                   "stop_reason": answer.stop_reason, "stop_sequence": None, "usage": usage}
        if body.get("stream"):
            self._stream(message, cut=(fault == "cut-stream"))
        else:
            self._send_json(200, message)

    def _stream(self, message: dict[str, Any], *, cut: bool) -> None:
        """The SSE event sequence of a streamed message (chunked transfer, one event per write)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("request-id", f"req_{uuid.uuid4().hex[:20]}")
        self.end_headers()
        for event in _stream_events(message, cut=cut):
            data = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        if cut:
            self._reset()
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _stream_events(message: dict[str, Any], *, cut: bool = False) -> list[dict[str, Any]]:
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None,
             "usage": {**usage, "output_tokens": 1}}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    if cut:
        return events
    events.append({"type": "ping"})
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            events.append({"type": "content_block_start", "index": index,
                           "content_block": {"type": "text", "text": ""}})
            text = block["text"]
            half = len(text) // 2
            for piece in (text[:half], text[half:]):
                if piece:
                    events.append({"type": "content_block_delta", "index": index,
                                   "delta": {"type": "text_delta", "text": piece}})
        else:
            events.append({"type": "content_block_start", "index": index,
                           "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"],
                                             "input": {}}})
            encoded = json.dumps(block["input"])
            half = len(encoded) // 2
            for piece in (encoded[:half], encoded[half:]):  # the input arrives in pieces, as the real API sends it
                events.append({"type": "content_block_delta", "index": index,
                               "delta": {"type": "input_json_delta", "partial_json": piece}})
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                   "usage": {"output_tokens": usage["output_tokens"]}})
    events.append({"type": "message_stop"})
    return events


def _offers_tools(body: dict[str, Any]) -> bool:
    return bool(body.get("tools"))


class FakeAnthropicServer:
    """Threaded local Anthropic Messages API server; use as a context manager."""

    def __init__(self, *, script: Iterable[Turn] | None = None, fallback: Turn = "(script exhausted)",
                 side_reply: Turn = "ok", scripted: Callable[[dict[str, Any]], bool] = _offers_tools,
                 fail_plan: Iterable[str] | None = None, latency_plan: Iterable[float] | None = None,
                 latency_s: float = 0.0, model_name: str = "claude-fake-1", cache_read_tokens: int = 0,
                 cache_creation_tokens: int = 0, host: str = "127.0.0.1", port: int = 0) -> None:
        self.script: list[Turn] = list(script or [])
        self.fallback = fallback
        self.side_reply = side_reply
        self.scripted = scripted
        self.fail_plan = list(fail_plan or [])
        unknown = sorted(set(self.fail_plan) - FAULTS)
        if unknown:
            raise ValueError(f"unknown fault name(s) {unknown}; known: {sorted(FAULTS)}")
        self.latency_plan = list(latency_plan or [])
        self.latency_s = latency_s
        self.model_name = model_name
        self.cache_read_tokens = cache_read_tokens
        self.cache_creation_tokens = cache_creation_tokens
        self.records: list[RecordedRequest] = []
        self.faults_served: list[str] = []
        self._tool_ids = 0
        self._host, self._port = host, port
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------

    def start(self) -> "FakeAnthropicServer":
        if self._httpd is None:
            self._stop.clear()
            self._httpd = _Server((self._host, self._port), _Handler)
            self._httpd.fake = self
            self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                            name=f"fake-anthropic-{self.port}", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stop.set()
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "FakeAnthropicServer":
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server is not running")
        return int(self._httpd.server_address[1])

    @property
    def root_url(self) -> str:
        """What ``ANTHROPIC_BASE_URL`` / ``anthropic.Anthropic(base_url=...)`` take (no ``/v1``)."""
        return f"http://127.0.0.1:{self.port}"

    # -- views --------------------------------------------------------------

    @property
    def messages_requests(self) -> list[dict[str, Any] | None]:
        with self._lock:
            return [r.body for r in self.records if r.method == "POST" and r.path == "/v1/messages"]

    @property
    def scripted_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r.body for r in self.records if r.scripted and r.body is not None]

    @property
    def paths(self) -> list[str]:
        with self._lock:
            return [f"{r.method} {r.path}" for r in self.records]

    # -- internals ------------------------------------------------------------

    def _add(self, record: RecordedRequest) -> None:
        with self._lock:
            self.records.append(record)

    def _next_fault_and_delay(self, record: RecordedRequest) -> tuple[str, float]:
        with self._lock:
            fault = self.fail_plan.pop(0) if self.fail_plan else "ok"
            delay = self.latency_plan.pop(0) if self.latency_plan else self.latency_s
            record.fault = fault
            self.faults_served.append(fault)
        return fault, delay

    def _answer_for(self, record: RecordedRequest) -> _Answer:
        body = record.body or {}
        if not self.scripted(body):
            turn: Turn = self.side_reply
        else:
            with self._lock:
                record.scripted = True
                turn = self.script.pop(0) if self.script else self.fallback
        if callable(turn):
            turn = turn(body)
        return self._build(turn)

    def _build(self, turn: Turn) -> _Answer:
        if isinstance(turn, str):
            turn = {"text": turn}
        content: list[dict[str, Any]] = []
        if turn.get("text"):
            content.append({"type": "text", "text": str(turn["text"])})
        for call in turn.get("tool_use") or []:
            with self._lock:
                self._tool_ids += 1
                n = self._tool_ids
            content.append({"type": "tool_use", "id": call.get("id") or f"toolu_fake{n:04d}",
                            "name": call["name"], "input": dict(call.get("input") or {})})
        if not content:
            content.append({"type": "text", "text": ""})
        uses_tools = any(b["type"] == "tool_use" for b in content)
        return _Answer(content, turn.get("stop_reason") or ("tool_use" if uses_tools else "end_turn"))

    def _usage(self, body: dict[str, Any], answer: _Answer) -> dict[str, Any]:
        return {"input_tokens": _words(body.get("messages")) + _words(body.get("system")),
                "cache_creation_input_tokens": self.cache_creation_tokens,
                "cache_read_input_tokens": self.cache_read_tokens,
                "output_tokens": max(1, _words(answer.content)),
                "service_tier": "standard"}

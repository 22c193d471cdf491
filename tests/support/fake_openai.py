"""A local OpenAI-compatible HTTP server for tests (stdlib only).

``FakeOpenAIServer`` listens on 127.0.0.1 on a free port and serves
``POST /v1/chat/completions`` (also ``/chat/completions``) and
``POST /v1/embeddings`` (also ``/embeddings``) and ``POST /v1/moderations`` (also
``/moderations``) with the JSON shapes of the real API, so the real ``openai`` client can talk to it over real HTTP::

    with FakeOpenAIServer(latency_s=0.0) as server:
        client = openai.OpenAI(api_key="sk-test", base_url=server.base_url)

Answers
    ``server.answers`` maps the exact text of the last user message to a reply;
    otherwise ``server.responder(request_json) -> str`` decides (the default
    echoes the last user message).

Moderations
    ``server.moderation_flags`` maps a word to ``{category: score}``: an input holding
    the word is flagged in those categories (the others false, score 0.0); by default
    nothing is flagged.

Tool calls (scripted)
    A reply may also be a dict ``{"tool_calls": [{"name": ..., "arguments":
    {...}}], "content": optional text}``: the server answers with
    ``choices[0].message.tool_calls`` (ids ``call_<n>_<i>``, ``type:
    "function"``, arguments JSON-encoded unless given as a string, which is sent
    verbatim, e.g. to test invalid JSON; an ``"id"`` may be given) and
    ``finish_reason: "tool_calls"``. ``responder`` may return such a dict, and
    ``server.script`` is a list of replies (strings or dicts) consumed one per
    answered chat request, in order, before ``answers`` and ``responder``.
    A dict reply may set ``"finish_reason"`` (e.g. ``{"content": "cut", "finish_reason":
    "length"}``) to answer with that finish reason instead of ``stop`` / ``tool_calls``.
    Requests are recorded as usual, so tests can inspect the ``tools`` and the
    ``tool`` messages the client sent.

Log-probabilities
    A request with ``logprobs: true`` gets ``choices[0].logprobs.content``: one entry per
    whitespace-separated word of the answer, its ``logprob`` taken in turn from
    ``server.token_logprobs`` (cycled; default ``[-0.5]``).

Faults (deterministic)
    ``fail_plan`` is a list of fault names consumed one per request, in order,
    before normal answers (``"ok"`` means answer normally). After the plan is
    used up, ``fault_rate`` of the requests (drawn from ``random.Random(seed)``)
    get a fault chosen from ``faults``. Fault names:

    ``429``                 429 with ``Retry-After: <retry_after_s>``
    ``429-no-retry-after``  429 without that header
    ``400`` / ``401``       non-retryable client errors (the 401 body echoes the
                            bearer key, as some providers do)
    ``500`` / ``503``       server errors
    ``reset``               close the socket without any response
    ``timeout``             wait ``hang_s`` before answering
    ``truncated``           200 whose JSON body is cut in half
    ``not-json``            200 with a ``text/html`` body
    ``prose``               200, a valid completion whose content is plain prose
    ``ok``                  normal answer

Bookkeeping: ``request_count``, ``requests`` (parsed bodies, ``None`` when the
body was not JSON), ``paths``, ``headers`` (lower-cased names), ``faults_served`` and
``reset_counts()``. All of it is guarded by a lock.
"""

from __future__ import annotations

import hashlib
import json
import random
import socket
import struct
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable

FAULT_NAMES = frozenset(
    {
        "ok",
        "429",
        "429-no-retry-after",
        "400",
        "401",
        "500",
        "503",
        "reset",
        "timeout",
        "truncated",
        "not-json",
        "prose",
    }
)

DEFAULT_PROSE = (
    "Overall the answer seems reasonable and mostly addresses the question, "
    "although a few details could be clearer. I would lean towards accepting it."
)

Responder = Callable[[dict[str, Any]], Any]  # -> str, or a dict with "tool_calls"


def _text_of(content: Any) -> str:
    """Flatten a message ``content`` (string or list of typed parts) to text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                parts.append(str(part.get("text", "")))
            else:
                parts.append(str(part))
        return "".join(parts)
    return str(content)


def last_user_message(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            return _text_of(message.get("content"))
    return ""


def echo_responder(body: dict[str, Any]) -> str:
    return last_user_message(body)


def _word_count(text: str) -> int:
    return len(text.split())


def _embedding(text: str, dimensions: int) -> list[float]:
    """A deterministic unit-ish vector derived from the text's hash."""
    values: list[float] = []
    counter = 0
    while len(values) < dimensions:
        digest = hashlib.sha256(f"{counter}:{text}".encode()).digest()
        for i in range(0, len(digest), 4):
            (n,) = struct.unpack(">I", digest[i : i + 4])
            values.append(n / 0xFFFFFFFF * 2.0 - 1.0)
        counter += 1
    values = values[:dimensions]
    norm = sum(v * v for v in values) ** 0.5 or 1.0
    return [v / norm for v in values]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: "FakeOpenAIServer"

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that hang up (timeouts, resets) are expected; stay quiet.
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # no 40 ms delayed-ACK stalls on keep-alive
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    # -- plumbing ---------------------------------------------------------

    def _send(
        self,
        status: int,
        payload: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("x-request-id", f"req_{uuid.uuid4().hex[:16]}")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), headers=headers)

    def _send_error(
        self, status: int, message: str, err_type: str, code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self._send_json(
            status,
            {"error": {"message": message, "type": err_type, "param": None, "code": code}},
            headers=headers,
        )

    def _reset(self) -> None:
        """Drop the connection without a response (RST where the OS allows)."""
        self.close_connection = True
        try:
            self.connection.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
            )
        except OSError:
            pass
        try:
            self.connection.close()
        except OSError:
            pass

    def _bearer(self) -> str:
        auth = self.headers.get("Authorization", "")
        return auth[7:] if auth.lower().startswith("bearer ") else auth

    # -- HTTP verbs -------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802
        fake = self.server.fake
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send_json(
                200,
                {
                    "object": "list",
                    "data": [
                        {"id": fake.model_name, "object": "model", "created": 0, "owned_by": "fake"}
                    ],
                },
            )
            return
        self._send_error(404, f"Unknown path {self.path}", "invalid_request_error", "not_found")

    def do_POST(self) -> None:  # noqa: N802
        fake = self.server.fake
        with fake._lock:
            fake.in_flight += 1
            fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
        try:
            self._post()
        finally:
            with fake._lock:
                fake.in_flight -= 1

    def _post(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
            if not isinstance(body, dict):
                body = None
        except ValueError:
            body = None
        path = self.path.split("?", 1)[0].rstrip("/")
        fault = fake._record(path, body, {k.lower(): v for k, v in self.headers.items()})

        if fake.latency_s > 0:
            fake._stop.wait(fake.latency_s)

        if path in ("/v1/chat/completions", "/chat/completions"):
            kind = "chat"
        elif path in ("/v1/embeddings", "/embeddings"):
            kind = "embeddings"
        elif path in ("/v1/moderations", "/moderations"):
            kind = "moderations"
        else:
            self._send_error(404, f"Unknown path {self.path}", "invalid_request_error", "not_found")
            return

        if body is None:
            self._send_error(400, "Request body is not a JSON object", "invalid_request_error")
            return

        if fault != "ok" and self._serve_fault(fault, kind, body):
            return

        if kind == "chat":
            self._answer_chat(body, prose=(fault == "prose"))
        elif kind == "moderations":
            self._send_json(200, moderation_payload(body, fake.moderation_flags, fake.model_name))
        else:
            self._answer_embeddings(body)

    # -- faults -----------------------------------------------------------

    def _serve_fault(self, fault: str, kind: str, body: dict[str, Any]) -> bool:
        """Serve ``fault``; True when the request is fully handled."""
        fake = self.server.fake
        if fault == "429":
            self._send_error(
                429,
                "Rate limit reached for requests",
                "requests",
                "rate_limit_exceeded",
                headers={"Retry-After": f"{fake.retry_after_s:g}"},
            )
        elif fault == "429-no-retry-after":
            self._send_error(429, "Rate limit reached for requests", "requests", "rate_limit_exceeded")
        elif fault == "400":
            self._send_error(400, "Invalid request: unsupported parameter", "invalid_request_error")
        elif fault == "401":
            self._send_error(
                401,
                f"Incorrect API key provided: {self._bearer()}. You can find your API key "
                "at https://platform.example/account/api-keys.",
                "invalid_request_error",
                "invalid_api_key",
            )
        elif fault == "500":
            self._send_error(500, "The server had an error while processing your request.", "server_error")
        elif fault == "503":
            self._send_error(503, "The engine is currently overloaded.", "server_error")
        elif fault == "reset":
            self._reset()
        elif fault == "timeout":
            # Interruptible so that shutdown() never waits on a hanging request.
            if fake._stop.wait(fake.hang_s):
                self._reset()
                return True
            return False  # answer normally, long after the client gave up
        elif fault == "truncated":
            payload = json.dumps(self.server.fake._chat_payload(body)).encode()
            self._send(200, payload[: len(payload) // 2])
        elif fault == "not-json":
            self._send(
                200,
                b"<html><head><title>502 Bad Gateway</title></head>"
                b"<body><h1>Bad Gateway</h1></body></html>",
                content_type="text/html; charset=utf-8",
            )
        elif fault == "prose" and kind == "chat":
            return False  # handled by _answer_chat(prose=True)
        else:
            return False
        return True

    # -- answers ----------------------------------------------------------

    def _answer_chat(self, body: dict[str, Any], *, prose: bool = False) -> None:
        if body.get("stream"):
            self._send_error(400, "The fake server does not stream", "invalid_request_error")
            return
        fake = self.server.fake
        try:
            payload = fake._chat_payload(body, prose=prose)
        except Exception as exc:  # a responder bug should be visible, not a hang
            self._send_error(500, f"responder failed: {type(exc).__name__}: {exc}", "server_error")
            return
        self._send_json(200, payload)

    def _answer_embeddings(self, body: dict[str, Any]) -> None:
        fake = self.server.fake
        inputs = body.get("input")
        if isinstance(inputs, (str, int)) or (
            isinstance(inputs, list) and inputs and isinstance(inputs[0], int)
        ):
            inputs = [inputs]
        if not isinstance(inputs, list) or not inputs:
            self._send_error(400, "'input' must be a string or a non-empty list", "invalid_request_error")
            return
        dimensions = int(body.get("dimensions") or fake.embedding_dim)
        data = []
        tokens = 0
        for index, item in enumerate(inputs):
            text = item if isinstance(item, str) else json.dumps(item)
            tokens += _word_count(text) if isinstance(item, str) else len(item) if isinstance(item, list) else 1
            data.append({"object": "embedding", "index": index, "embedding": _embedding(text, dimensions)})
        self._send_json(
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model") or fake.model_name,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )


MODERATION_CATEGORIES = ("harassment", "harassment/threatening", "hate", "hate/threatening", "illicit",
                         "illicit/violent", "self-harm", "self-harm/instructions", "self-harm/intent", "sexual",
                         "sexual/minors", "violence", "violence/graphic")


def moderation_payload(body: dict[str, Any], flags: dict[str, dict[str, float]], model: str) -> dict[str, Any]:
    """The moderations API's answer: one result per input (a string, a list of strings, or of text parts)."""
    inputs = body.get("input")
    items = [inputs] if isinstance(inputs, str) else list(inputs or [])
    if items and all(isinstance(i, dict) for i in items):  # multimodal parts: one input
        items = [" ".join(str(i.get("text", "")) for i in items)]
    results = []
    for text in items:
        hits: dict[str, float] = {}
        for word, categories in flags.items():
            if word.lower() in str(text).lower():
                hits.update(categories)
        results.append({"flagged": bool(hits),
                        "categories": {c: c in hits for c in MODERATION_CATEGORIES},
                        "category_scores": {c: hits.get(c, 0.0) for c in MODERATION_CATEGORIES},
                        "category_applied_input_types": {c: ["text"] for c in MODERATION_CATEGORIES}})
    return {"id": f"modr-{uuid.uuid4().hex[:12]}", "model": body.get("model") or model, "results": results}


class FakeOpenAIServer:
    """Threaded local OpenAI-compatible server; use as a context manager."""

    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        responder: Responder | None = None,
        answers: dict[str, str] | None = None,
        fail_plan: Iterable[str] | None = None,
        fault_rate: float = 0.0,
        faults: Iterable[str] | None = None,
        seed: int = 0,
        retry_after_s: float = 0.2,
        hang_s: float = 5.0,
        prose_text: str = DEFAULT_PROSE,
        embedding_dim: int = 8,
        model_name: str = "fake-model",
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.latency_s = latency_s
        self.responder: Responder = responder or echo_responder
        self.answers: dict[str, str] = dict(answers or {})
        self.fault_rate = fault_rate
        self.retry_after_s = retry_after_s
        self.hang_s = hang_s
        self.prose_text = prose_text
        self.embedding_dim = embedding_dim
        self.model_name = model_name
        self._host = host
        self._port = port
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self.seed = seed
        self._rng = random.Random(seed)
        self.fail_plan = list(fail_plan or [])
        self.faults = list(faults or ["500"])
        self._check_names(self.fail_plan)
        self._check_names(self.faults)
        self.request_count = 0
        # Requests being served at once, and the most seen: overlap is checked by
        # counting, not by a wall-clock bound that a loaded machine would break.
        self.in_flight = 0
        self.max_in_flight = 0
        self.requests: list[dict[str, Any] | None] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.faults_served: list[str] = []
        self.script: list[Any] = []
        self.moderation_flags: dict[str, dict[str, float]] = {}
        self.token_logprobs: list[float] = [-0.5]
        self._tool_call_counter = 0

    # -- lifecycle --------------------------------------------------------

    def start(self) -> "FakeOpenAIServer":
        if self._httpd is not None:
            return self
        self._stop.clear()
        httpd = _Server((self._host, self._port), _Handler)
        httpd.fake = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"fake-openai-{httpd.server_address[1]}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stop.set()  # wake hanging / sleeping handlers
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    close = stop

    def __enter__(self) -> "FakeOpenAIServer":
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    # -- addresses --------------------------------------------------------

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server is not running")
        return int(self._httpd.server_address[1])

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    # -- scripting ----------------------------------------------------------

    @staticmethod
    def _check_names(names: Iterable[str]) -> None:
        unknown = sorted(set(names) - FAULT_NAMES)
        if unknown:
            raise ValueError(f"unknown fault name(s) {unknown}; known: {sorted(FAULT_NAMES)}")

    def plan(self, *names: str) -> None:
        """Append faults to ``fail_plan`` (consumed one per request, in order)."""
        self._check_names(names)
        with self._lock:
            self.fail_plan.extend(names)

    def reset_counts(self) -> None:
        with self._lock:
            self.request_count = 0
            self.requests.clear()
            self.paths.clear()
            self.headers.clear()
            self.faults_served.clear()
            self.max_in_flight = self.in_flight

    def _record(self, path: str, body: dict[str, Any] | None, headers: dict[str, str]) -> str:
        """Count the request and decide its fault (``"ok"`` for none)."""
        with self._lock:
            self.request_count += 1
            self.requests.append(body)
            self.paths.append(path)
            self.headers.append(headers)
            if self.fail_plan:
                fault = self.fail_plan.pop(0)
            elif self.fault_rate > 0 and self.faults and self._rng.random() < self.fault_rate:
                fault = self._rng.choice(self.faults)
            else:
                fault = "ok"
            if fault not in FAULT_NAMES:
                fault = "ok"
            self.faults_served.append(fault)
            return fault

    # -- payloads -------------------------------------------------------------

    def reply_for(self, body: dict[str, Any]) -> str:
        text = last_user_message(body)
        with self._lock:
            scripted = self.answers.get(text)
        if scripted is not None:
            return scripted
        return str(self.responder(body))

    def reply_or_tool_calls_for(self, body: dict[str, Any]) -> str | dict[str, Any]:
        """The next reply: ``script`` first, then ``answers``, then ``responder``.

        A dict with ``tool_calls`` is kept as is; anything else becomes text.
        """
        with self._lock:
            scripted: Any = self.script.pop(0) if self.script else None
        if scripted is None:
            text = last_user_message(body)
            with self._lock:
                scripted = self.answers.get(text)
        if scripted is None:
            scripted = self.responder(body)
        if isinstance(scripted, dict) and ("tool_calls" in scripted or "finish_reason" in scripted):
            return scripted
        return str(scripted)

    def _tool_call_message(self, reply: dict[str, Any]) -> dict[str, Any]:
        calls = []
        with self._lock:
            self._tool_call_counter += 1
            n = self._tool_call_counter
        for i, call in enumerate(reply.get("tool_calls") or []):
            arguments = call.get("arguments", {})
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments)
            calls.append({
                "id": call.get("id") or f"call_{n}_{i}",
                "type": "function",
                "function": {"name": call["name"], "arguments": arguments},
            })
        return {"role": "assistant", "content": reply.get("content"), "refusal": None, "tool_calls": calls}

    def _logprobs(self, content: str) -> dict[str, Any]:
        values = self.token_logprobs or [-0.5]
        return {"content": [{"token": word, "logprob": values[i % len(values)], "bytes": None, "top_logprobs": []}
                            for i, word in enumerate(content.split())], "refusal": None}

    def _chat_payload(self, body: dict[str, Any], *, prose: bool = False) -> dict[str, Any]:
        reply = self.prose_text if prose else self.reply_or_tool_calls_for(body)
        if isinstance(reply, dict) and "tool_calls" not in reply:  # text with a chosen finish reason
            content = str(reply.get("content") or "")
            message = {"role": "assistant", "content": content, "refusal": None}
            finish_reason = reply["finish_reason"]
        elif isinstance(reply, dict):
            message = self._tool_call_message(reply)
            content = " ".join([message["content"] or ""] + [
                f"{c['function']['name']} {c['function']['arguments']}" for c in message["tool_calls"]])
            finish_reason = reply.get("finish_reason", "tool_calls")
        else:
            content = reply
            message = {"role": "assistant", "content": content, "refusal": None}
            finish_reason = "stop"
        prompt_text = " ".join(
            _text_of(m.get("content")) for m in body.get("messages") or [] if isinstance(m, dict)
        )
        prompt_tokens = _word_count(prompt_text)
        completion_tokens = _word_count(content)
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.model_name,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": self._logprobs(content) if body.get("logprobs") else None,
                    "finish_reason": finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
            "system_fingerprint": "fp_fake",
        }

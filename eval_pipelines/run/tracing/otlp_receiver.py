"""promptfoo's OTLP/HTTP receiver for a traced script provider, inside the provider's own sandbox.

promptfoo runs one receiver (src/tracing/otlpReceiver.ts) on ``tracing.otlp.http.port`` and
hands providers ``context.traceparent``; they export their spans to it. A sandboxed provider
here has a network namespace of its own: only its loopback. So :data:`RECEIVER` -- a wrapper
program, standard library only -- starts the receiver on ``127.0.0.1:<port>`` of that loopback,
runs the provider command with ``TRACEPARENT`` and ``OTEL_EXPORTER_OTLP_ENDPOINT`` /
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` set, keeps every body POSTed to ``/v1/traces`` whose
content type is accepted (``application/json``, ``application/x-protobuf``, as
``acceptFormats`` allows; 415 otherwise, as promptfoo answers), and after the command exits
prints the command's output, then one marked line with the bodies. :func:`read_traced` splits
them on the host, and :func:`spans_of_bodies` decodes them (protobuf with
``opentelemetry-proto``); the caller keeps only the spans of the trace it gave.

At sandbox levels without a network namespace the loopback is the host's: when the port is
taken (another call's receiver) the receiver takes a free one, which the endpoint variables
name; spans a provider sends elsewhere are of another trace and dropped there.

Not received: ``/v1/logs`` (promptfoo turns OTLP log records into spans; here they are refused
with 404) and OTLP/gRPC.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from eval_pipelines.run.tracing.spans import OtlpDecodeError, Span, spans_from_otlp_json

MARK = "@@eval-pipelines-otlp@@"
MAX_BODY_BYTES = 10 * 1024 * 1024  # promptfoo's express limit: '10mb'
MAX_TOTAL_BYTES = 16 * 1024 * 1024  # all bodies of one call; later ones get 413 and are counted
# What the report adds to the command's output (base64 is 4/3 of the bytes), for the output cap.
REPORT_BYTES = MAX_TOTAL_BYTES * 4 // 3 + 1024 * 1024

RECEIVER = r"""
import base64, json, os, subprocess, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port, formats, mark, max_bytes = int(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3], int(sys.argv[4])
max_total, state = int(sys.argv[5]), {"total": 0, "dropped": 0}
argv = sys.argv[sys.argv.index("--") + 1:]
if argv and argv[0] in ("python", "python3"):
    argv[0] = sys.executable
bodies, lock = [], threading.Lock()
TYPES = {"application/json": "json", "application/x-protobuf": "protobuf"}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.split("?")[0] == "/v1/traces":
            self.reply(200, {"service": "promptfoo-otlp-receiver", "supported_formats": formats})
        else:
            self.reply(404, {"error": "not found"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        if self.path.split("?")[0] != "/v1/traces":
            self.rfile.read(length)
            return self.reply(404, {"error": "only /v1/traces is received"})
        kind = TYPES.get((self.headers.get("Content-Type") or "").split(";")[0].strip().lower())
        if kind not in formats:
            self.rfile.read(length)
            return self.reply(415, {"error": "Unsupported content type"})
        data = self.rfile.read(length)
        with lock:
            if length > max_bytes or state["total"] + length > max_total:
                state["dropped"] += 1
                return self.reply(413, {"error": "body too large"})
            state["total"] += length
            bodies.append({"format": kind, "body": base64.b64encode(data).decode()})
        self.reply(200, {"partialSuccess": {}})


try:
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
except OSError:
    # Port taken: a sandbox level without its own network namespace shares the host's loopback
    # (other calls' receivers). A free port instead; the endpoint variables name it.
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
threading.Thread(target=server.serve_forever, daemon=True).start()
endpoint = f"http://127.0.0.1:{port}"
env = dict(os.environ, OTEL_EXPORTER_OTLP_ENDPOINT=endpoint,
           OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=endpoint + "/v1/traces")
child = subprocess.run(argv, stdin=sys.stdin.buffer, stdout=subprocess.PIPE, env=env)
server.shutdown()
sys.stdout.buffer.write(child.stdout)
sys.stdout.write("\n" + mark + json.dumps({"bodies": bodies, "dropped": state["dropped"]}) + "\n")
sys.stdout.flush()
sys.exit(child.returncode)
"""


def wrap(argv: list[str], port: int, formats: list[str]) -> list[str]:
    """``argv`` run under the receiver (its own argv for the sandbox)."""
    return ["python", "-c", RECEIVER, str(port), json.dumps(formats), MARK, str(MAX_BODY_BYTES),
            str(MAX_TOTAL_BYTES), "--", *argv]


def read_traced(stdout: str) -> tuple[str, list[dict[str, Any]] | None, int]:
    """(the command's own output, the received bodies, how many were refused as too large);
    None bodies when the marked line is missing."""
    head, sep, tail = stdout.rpartition("\n" + MARK)
    if not sep:
        return stdout, None, 0
    try:
        payload = json.loads(tail.strip())
    except ValueError:
        return head, None, 0
    bodies = payload.get("bodies") if isinstance(payload, dict) else None
    dropped = payload.get("dropped", 0) if isinstance(payload, dict) else 0
    return head, bodies if isinstance(bodies, list) else None, dropped if isinstance(dropped, int) else 0


def _protobuf_to_json(data: bytes) -> dict[str, Any]:
    try:
        from google.protobuf.json_format import MessageToDict
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    except ImportError as exc:  # pragma: no cover - a dependency of the project
        raise OtlpDecodeError("OTLP/protobuf bodies need the opentelemetry-proto package") from exc
    message = ExportTraceServiceRequest()
    try:
        message.ParseFromString(data)
    except Exception as exc:  # noqa: BLE001 - protobuf raises its own DecodeError
        raise OtlpDecodeError(f"invalid protobuf body: {exc}") from exc
    return MessageToDict(message)  # ids as base64, times as strings: spans_from_otlp_json reads both


def spans_of_bodies(bodies: list[dict[str, Any]]) -> tuple[list[Span], str | None]:
    """Every span of the received bodies, and the first body's decoding error (None: all read)."""
    spans: list[Span] = []
    error: str | None = None
    for index, item in enumerate(bodies):
        try:
            data = base64.b64decode(str(item.get("body", "")))
            if item.get("format") == "protobuf":
                parsed = _protobuf_to_json(data)
            else:
                try:
                    parsed = json.loads(data)
                except ValueError as exc:
                    raise OtlpDecodeError(f"invalid JSON body: {exc}") from exc
            spans.extend(spans_from_otlp_json(parsed))
        except (OtlpDecodeError, ValueError) as exc:
            error = error or f"OTLP body {index + 1} ({item.get('format')}) not read: {exc}"
    return spans, error

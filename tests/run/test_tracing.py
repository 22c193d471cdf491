"""Trace data (run/tracing/spans.py) and the OTLP receiver run in a script provider's sandbox
(run/tracing/otlp_receiver.py): decoding as promptfoo's otlpReceiver.ts does, redaction, 415s."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path

from eval_pipelines.run.tracing import otlp_receiver as otlp_sandbox
from eval_pipelines.run.targets.base import TargetRequest
from eval_pipelines.run.targets.command import CommandTarget
from eval_pipelines.run.targets.config import CommandTargetConfig
from eval_pipelines.run.tracing.spans import (
    OutputTrace, parse_traceparent, redact, spans_from_json, spans_from_otlp_json, spans_to_json, traceparent,
)
from eval_pipelines.suite.models import Message

TRACE = "0af7651916cd43dd8448eb211c80319c"
PARENT = "b7ad6b7169203331"


def test_traceparent_round_trip_and_rejects() -> None:
    assert traceparent(TRACE, PARENT) == f"00-{TRACE}-{PARENT}-01"
    assert parse_traceparent(traceparent(TRACE, PARENT)) == (TRACE, PARENT)
    assert parse_traceparent("00-xyz-1-01") is None and parse_traceparent(f"01-{TRACE}-{PARENT}") is None


def test_otlp_json_spans_read_as_promptfoos_receiver_stores_them() -> None:
    body = {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]},
        "scopeSpans": [{"scope": {"name": "lib", "version": "2"}, "spans": [{
            # base64 ids (protobuf's JSON mapping) and enum names, as some exporters send them
            "traceId": base64.b64encode(bytes.fromhex(TRACE)).decode(),
            "spanId": base64.b64encode(bytes.fromhex("00000000000000aa")).decode(),
            "parentSpanId": PARENT, "name": "db.query", "kind": "SPAN_KIND_CLIENT",
            "startTimeUnixNano": "1000000000", "endTimeUnixNano": "1500000000",
            "attributes": [{"key": "rows", "value": {"intValue": "3"}},
                           {"key": "tags", "value": {"arrayValue": {"values": [{"stringValue": "a"}]}}},
                           {"key": "req", "value": {"kvlistValue": {"values": [
                               {"key": "n", "value": {"doubleValue": 1.5}}]}}}],
            "status": {"code": "STATUS_CODE_ERROR", "message": "boom"}}]}]}]}
    (span,) = spans_from_otlp_json(body)
    assert (span.trace_id, span.span_id, span.parent_span_id) == (TRACE, "00000000000000aa", PARENT)
    assert (span.status_code, span.status_message) == (2, "boom")
    assert span.attributes == {"service.name": "svc", "rows": 3, "tags": ["a"], "req": {"n": 1.5},
                               "otel.scope.name": "lib", "otel.scope.version": "2",
                               "otel.span.kind": "client", "otel.span.kind_code": 3}
    shaped = span.as_promptfoo()  # context.trace's span: times in ms
    assert (shaped["startTime"], shaped["endTime"], shaped["parentSpanId"]) == (1000.0, 1500.0, PARENT)
    assert spans_from_json(spans_to_json([span])) == (span,)


def test_redaction_matches_key_substrings_case_insensitively_nested_too() -> None:
    got = redact({"tool.arguments": "{...}", "API_KEY": "x", "nested": {"Authorization": "Bearer y", "ok": 1},
                  "list": [{"token_count": 2}]}, ["arguments", "api_key", "authorization", "token"])
    assert got == {"tool.arguments": "[REDACTED]", "API_KEY": "[REDACTED]",
                   "nested": {"Authorization": "[REDACTED]", "ok": 1}, "list": [{"token_count": "[REDACTED]"}]}


def test_bodies_that_do_not_decode_are_the_traces_error() -> None:
    bodies = [{"format": "json", "body": base64.b64encode(b"{not json").decode()},
              {"format": "protobuf", "body": base64.b64encode(b"\xff\xff\xff").decode()}]
    spans, error = otlp_sandbox.spans_of_bodies(bodies)
    assert spans == [] and error.startswith("OTLP body 1 (json) not read: invalid JSON body")


POSTER = r"""
import json, os, sys, urllib.error, urllib.request
url = os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
tp = os.environ["TRACEPARENT"].split("-")
span = {"traceId": tp[1], "spanId": "00000000000000b1", "parentSpanId": tp[2], "name": "work",
        "startTimeUnixNano": "1", "endTimeUnixNano": "2"}
body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span, dict(span, traceId="f" * 32)]}]}]}).encode()
codes = []
for kind in ("application/json", "application/x-protobuf", "text/plain"):
    try:
        codes.append(urllib.request.urlopen(urllib.request.Request(url, data=body, headers={"Content-Type": kind}),
                                            timeout=10).status)
    except urllib.error.HTTPError as exc:
        codes.append(exc.code)
print(sys.stdin.read(), codes)
"""


def test_receiver_in_the_sandbox_takes_accepted_formats_and_keeps_our_trace(tmp_path: Path) -> None:
    (tmp_path / "poster.py").write_text(POSTER)
    target = CommandTarget(CommandTargetConfig(name="p", type="command", command=["python", "poster.py"]), tmp_path)
    request = TargetRequest("t", 0, None, [Message(role="user", content="hi")], 30,
                            traceparent=traceparent(TRACE, PARENT), otlp_port=4399, otlp_formats=("json",))
    out = asyncio.run(target.generate(request))
    # json taken; protobuf not accepted here (415, as promptfoo answers), nor text/plain
    assert (out.output, out.error) == ("hi [200, 415, 415]", None)
    assert isinstance(out.otel, OutputTrace) and out.otel.trace_id == TRACE and out.otel.error is None
    assert [(s.name, s.trace_id, s.parent_span_id) for s in out.otel.spans] == [("work", TRACE, PARENT)]
    # untraced, the same command runs as before: no receiver, no trace
    plain = asyncio.run(CommandTarget(CommandTargetConfig(name="p", type="command", command=["cat"]),
                                      tmp_path).generate(TargetRequest("t", 0, None, [Message(role="user",
                                                                                               content="x")], 30)))
    assert (plain.output, plain.otel) == ("x", None)
    assert json.loads(json.dumps(otlp_sandbox.wrap(["cat"], 1, ["json"])))[-1] == "cat"


BIG_POSTER = r"""
import os, sys, urllib.error, urllib.request
url = os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
try:
    urllib.request.urlopen(urllib.request.Request(url, data=b" " * (int(sys.argv[1]) + 1),
                                                  headers={"Content-Type": "application/json"}), timeout=30)
except urllib.error.HTTPError as exc:
    print(exc.code)
"""


def test_a_body_over_the_limit_is_refused_and_said(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text(BIG_POSTER)
    command = ["python", "big.py", str(otlp_sandbox.MAX_BODY_BYTES)]
    target = CommandTarget(CommandTargetConfig(name="p", type="command", command=command), tmp_path)
    out = asyncio.run(target.generate(TargetRequest("t", 0, None, [Message(role="user", content="")], 60,
                                                    traceparent=traceparent(TRACE, PARENT))))
    assert out.output == "413"
    assert out.otel.spans == () and out.otel.error == "1 OTLP bodies refused as too large (over 10 MB, or over 16 MB in all)"

"""OpenTelemetry trace data of one output: the span model, W3C trace context, OTLP/JSON decoding.

promptfoo (src/tracing/) gives each test's provider call a trace (``context.traceparent``,
W3C ``00-<trace id>-<span id>-01``), collects the spans providers export to its OTLP
receiver, and hands them to assertions as ``context.trace`` = ``{traceId, spans}``
(src/assertions/index.ts), each span shaped as its store keeps it (src/types/tracing.ts
``TraceSpan``: ``spanId``, ``parentSpanId``, ``name``, ``startTime``/``endTime`` in
milliseconds, ``attributes``, ``statusCode``, ``statusMessage``).

Here a span is a :class:`Span` (times in nanoseconds, as OTLP sends them); an output's
trace is an :class:`OutputTrace` (its trace id and its spans), stored with the output
(``model_outputs.trace_id`` / ``spans``). Attribute values are kept as written, except
those whose key matches one of ``tracing.otlp.http.redactAttributes`` (promptfoo's
case-insensitive substring match), which are stored as ``[REDACTED]``.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

# OTLP status codes (opentelemetry/proto/trace/v1/trace.proto Status.StatusCode).
STATUS_UNSET, STATUS_OK, STATUS_ERROR = 0, 1, 2
# OTLP span kinds, named as promptfoo's receiver names them (otlpReceiver.ts SPAN_KIND_MAP).
SPAN_KINDS = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
REDACTED = "[REDACTED]"
_TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$")


@dataclass(frozen=True)
class Span:
    trace_id: str  # 32 hex characters
    span_id: str  # 16 hex characters
    name: str
    start_ns: int
    end_ns: int | None
    parent_span_id: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    status_code: int = STATUS_UNSET
    status_message: str | None = None

    def as_promptfoo(self) -> dict[str, Any]:
        """The span as promptfoo's trace store returns it (``TraceSpan``; times in ms)."""
        out: dict[str, Any] = {"spanId": self.span_id, "name": self.name, "startTime": self.start_ns / 1e6,
                               "attributes": dict(self.attributes), "statusCode": self.status_code}
        if self.parent_span_id:
            out["parentSpanId"] = self.parent_span_id
        if self.end_ns is not None:
            out["endTime"] = self.end_ns / 1e6
        if self.status_message:
            out["statusMessage"] = self.status_message
        return out


@dataclass(frozen=True)
class OutputTrace:
    """The trace of one output: the id we gave its call and the spans recorded under it."""

    trace_id: str
    spans: tuple[Span, ...] = ()
    # Why spans could not be collected (a receiver body we cannot decode), or None.
    error: str | None = None

    def as_promptfoo(self) -> dict[str, Any]:
        """``context.trace`` as promptfoo's assertions receive it."""
        return {"traceId": self.trace_id, "spans": [s.as_promptfoo() for s in self.spans]}


def new_trace_id() -> str:
    return secrets.token_hex(16)


def new_span_id() -> str:
    return secrets.token_hex(8)


def traceparent(trace_id: str, span_id: str) -> str:
    """W3C trace context (version 00, sampled), as promptfoo's generateTraceparent writes it."""
    return f"00-{trace_id}-{span_id}-01"


def parse_traceparent(value: str) -> tuple[str, str] | None:
    """(trace id, parent span id) of a W3C ``traceparent``, or None when it is not one."""
    match = _TRACEPARENT.match(value.strip().lower())
    return (match.group(1), match.group(2)) if match else None


def now_ns() -> int:
    return time.time_ns()


# ---- redaction -------------------------------------------------------------------------

def redact(attributes: dict[str, Any], patterns: Iterable[str]) -> dict[str, Any]:
    """Values whose key contains one of ``patterns`` (case-insensitive) become ``[REDACTED]``,
    nested mappings included (promptfoo's sanitizeTraceAttributes with ``redactAttributes``)."""
    lowered = [p.strip().lower() for p in patterns if p and p.strip()]
    if not lowered:
        return attributes

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: REDACTED if any(p in str(k).lower() for p in lowered) else walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return walk(attributes)


def redact_spans(spans: Iterable[Span], patterns: Iterable[str]) -> tuple[Span, ...]:
    patterns = list(patterns)
    return tuple(Span(**{**_fields(s), "attributes": redact(s.attributes, patterns)}) for s in spans)


def _fields(span: Span) -> dict[str, Any]:
    return {k: getattr(span, k) for k in Span.__dataclass_fields__}


# ---- storage codec ---------------------------------------------------------------------

def spans_to_json(spans: Iterable[Span]) -> str:
    return json.dumps([asdict(s) for s in spans], ensure_ascii=False, default=str)


def spans_from_json(text: str) -> tuple[Span, ...]:
    return tuple(Span(**item) for item in json.loads(text))


# ---- OTLP/JSON ---------------------------------------------------------------------------

class OtlpDecodeError(ValueError):
    """A body that is not an OTLP ExportTraceServiceRequest."""


def _id(raw: Any, hex_chars: int) -> str:
    """An OTLP id: hex as the OTLP/JSON spec writes it, or base64 bytes as some exporters do
    (promptfoo's convertId accepts both)."""
    text = str(raw or "")
    if re.fullmatch(rf"[0-9a-fA-F]{{{hex_chars}}}", text):
        return text.lower()
    try:
        decoded = base64.b64decode(text, validate=True)
    except ValueError as exc:
        raise OtlpDecodeError(f"id {text[:40]!r} is neither hex nor base64") from exc
    if len(decoded) * 2 != hex_chars:
        raise OtlpDecodeError(f"id {text[:40]!r} is not {hex_chars // 2} bytes")
    return decoded.hex()


def attribute_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as a plain value (ints that fit stay numbers, as in promptfoo)."""
    if not isinstance(value, dict):
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return str(value["intValue"])
    if "doubleValue" in value:
        return value["doubleValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "bytesValue" in value:
        return value["bytesValue"]
    if "arrayValue" in value:
        return [attribute_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return attributes_of((value["kvlistValue"] or {}).get("values", []))
    return None


def attributes_of(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or []:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            parsed = attribute_value(item.get("value"))
            if parsed is not None:
                out[item["key"]] = parsed
    return out


def _nanos(raw: Any) -> int | None:
    if raw is None or raw == "":
        return None
    try:
        return int(raw)
    except (TypeError, ValueError) as exc:
        raise OtlpDecodeError(f"time {raw!r} is not a whole number of nanoseconds") from exc


def spans_from_otlp_json(body: Any) -> list[Span]:
    """The spans of one OTLP/JSON ``ExportTraceServiceRequest`` body, each with its resource's
    attributes and the ``otel.scope.*`` / ``otel.span.kind*`` attributes promptfoo's receiver adds."""
    if not isinstance(body, dict) or not isinstance(body.get("resourceSpans", []), list):
        raise OtlpDecodeError("body is not an OTLP trace export (no resourceSpans list)")
    spans: list[Span] = []
    for resource_spans in body.get("resourceSpans", []):
        resource = attributes_of(((resource_spans or {}).get("resource") or {}).get("attributes"))
        for scope_spans in (resource_spans or {}).get("scopeSpans") or []:
            scope = (scope_spans or {}).get("scope") or {}
            for raw in (scope_spans or {}).get("spans") or []:
                if not isinstance(raw, dict):
                    raise OtlpDecodeError("a span is not an object")
                kind = raw.get("kind", 0)
                kind = kind if isinstance(kind, int) else {f"SPAN_KIND_{v.upper()}": k
                                                           for k, v in SPAN_KINDS.items()}.get(str(kind), 0)
                status = raw.get("status") or {}
                code = status.get("code", STATUS_UNSET)
                code = code if isinstance(code, int) else {"STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}.get(
                    str(code), STATUS_UNSET)
                attributes = {**resource, **attributes_of(raw.get("attributes")),
                              "otel.scope.name": scope.get("name"), "otel.scope.version": scope.get("version"),
                              "otel.span.kind": SPAN_KINDS.get(kind, "unspecified"), "otel.span.kind_code": kind}
                spans.append(Span(
                    trace_id=_id(raw.get("traceId"), 32), span_id=_id(raw.get("spanId"), 16),
                    parent_span_id=_id(raw["parentSpanId"], 16) if raw.get("parentSpanId") else None,
                    name=str(raw.get("name", "")), start_ns=_nanos(raw.get("startTimeUnixNano")) or 0,
                    end_ns=_nanos(raw.get("endTimeUnixNano")),
                    attributes={k: v for k, v in attributes.items() if v is not None},
                    status_code=code, status_message=status.get("message") or None))
    return spans

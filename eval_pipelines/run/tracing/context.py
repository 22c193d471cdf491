"""Trace context of the model phase in a traced suite (promptfoo ``tracing.enabled``).

promptfoo's evaluator (src/tracing/evaluatorTracing.ts) gives every test's provider call a
fresh trace: a trace record is created, and the call receives ``context.traceparent``
(``00-<trace id>-<span id>-01``); assertions then read the spans stored under that trace id,
an empty list when no span arrived. Here each (case, target, trial) call gets its own trace
id the same way; the output keeps the spans of that trace only (a script may export spans
of other traces too), with the suite's ``redactAttributes`` applied before anything is stored.
"""

from __future__ import annotations

from dataclasses import replace

from eval_pipelines.run.targets.base import ModelOutput, TargetRequest
from eval_pipelines.run.tracing.spans import OutputTrace, new_span_id, new_trace_id, parse_traceparent, redact_spans, traceparent
from eval_pipelines.suite.models import Suite, TestCase, Tracing


def traced_request(suite: Suite, case: TestCase, request: TargetRequest) -> TargetRequest:
    """The request with a new ``traceparent`` when the suite is traced, or the case is (promptfoo's
    isTracingEnabled also reads a test's ``metadata.tracingEnabled: true``, then with the
    receiver's defaults); as it is otherwise."""
    settings = suite.tracing or (Tracing() if case.metadata.get("tracingEnabled") is True else None)
    if settings is None:
        return request
    return replace(request, traceparent=traceparent(new_trace_id(), new_span_id()),
                   otlp_port=settings.otlp_port, otlp_formats=tuple(settings.accept_formats))


def with_trace(request: TargetRequest, output: ModelOutput, redact_patterns: tuple[str, ...] = ()) -> ModelOutput:
    """The output with its trace: the spans of the request's trace id (redacted), or none."""
    parsed = parse_traceparent(request.traceparent) if request.traceparent else None
    if parsed is None:
        return output
    trace_id = parsed[0]
    collected = output.otel or OutputTrace(trace_id)
    spans = [s for s in collected.spans if s.trace_id == trace_id]
    output.otel = OutputTrace(trace_id, redact_spans(spans, redact_patterns), collected.error)
    return output

"""The span of one OpenAI-compatible model call in a traced suite, as promptfoo's providers emit it.

promptfoo wraps each provider call in ``withGenAISpan`` (src/tracing/genaiTracer.ts): a CLIENT
span named ``"{operation} {model}"`` (``chat gpt-4o-mini``) under the test's ``traceparent``,
from tracer ``promptfoo.providers`` 1.0.0, with the GenAI semantic-convention attributes
(``gen_ai.system``, ``gen_ai.operation.name``, ``gen_ai.request.*``, ``gen_ai.usage.*``,
``gen_ai.response.*``) and ``promptfoo.provider.id``; status OK, or ERROR with the error's
message when the call failed. Its HTTP retries happen inside that one call, so they share the
span. The span reaches promptfoo's receiver, which adds ``otel.scope.*`` and ``otel.span.kind*``
(otlpReceiver.ts); those are set here too, so the span reads the same in ``context.trace``.

Not recorded: the request and response bodies (``promptfoo.request.body`` /
``promptfoo.response.body``): they hold the prompts and answers, already stored in their own
columns, and promptfoo truncates and scrubs them.
"""

from __future__ import annotations

from typing import Any

from eval_pipelines.run.tracing.spans import STATUS_ERROR, STATUS_OK, Span, new_span_id, parse_traceparent

TRACER_NAME, TRACER_VERSION = "promptfoo.providers", "1.0.0"
SPAN_KIND_CLIENT = 3
# Request settings of the body and the attribute promptfoo records each under.
REQUEST_ATTRIBUTES = {
    "max_tokens": "gen_ai.request.max_tokens", "temperature": "gen_ai.request.temperature",
    "top_p": "gen_ai.request.top_p", "top_k": "gen_ai.request.top_k", "stop": "gen_ai.request.stop_sequences",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "presence_penalty": "gen_ai.request.presence_penalty",
}


def genai_span(traceparent: str, *, provider_id: str, body: dict[str, Any], start_ns: int, end_ns: int,
               reply: Any, error: str | None, cache_hit: bool | None = None) -> Span:
    trace_id, parent = parse_traceparent(traceparent) or ("0" * 32, None)
    model = str(body.get("model", ""))
    attributes: dict[str, Any] = {
        "gen_ai.system": "openai", "gen_ai.operation.name": "chat", "gen_ai.request.model": model,
        "promptfoo.provider.id": provider_id,
    }
    for key, name in REQUEST_ATTRIBUTES.items():
        value = body.get(key)
        if value is None or (key == "stop" and not value):
            continue
        attributes[name] = [value] if key == "stop" and isinstance(value, str) else value
    if reply is not None:
        if reply.prompt_tokens is not None:
            attributes["gen_ai.usage.input_tokens"] = reply.prompt_tokens
        if reply.completion_tokens is not None:
            attributes["gen_ai.usage.output_tokens"] = reply.completion_tokens
        if reply.prompt_tokens is not None and reply.completion_tokens is not None:
            attributes["gen_ai.usage.total_tokens"] = reply.prompt_tokens + reply.completion_tokens
        if reply.model:
            attributes["gen_ai.response.model"] = reply.model
        if reply.id:
            attributes["gen_ai.response.id"] = reply.id
        if reply.finish_reason:
            attributes["gen_ai.response.finish_reasons"] = [reply.finish_reason]
    if cache_hit is not None:
        attributes["promptfoo.cache_hit"] = cache_hit
    attributes |= {"otel.scope.name": TRACER_NAME, "otel.scope.version": TRACER_VERSION,
                   "otel.span.kind": "client", "otel.span.kind_code": SPAN_KIND_CLIENT}
    return Span(trace_id=trace_id, span_id=new_span_id(), parent_span_id=parent, name=f"chat {model}",
                start_ns=start_ns, end_ns=end_ns, attributes=attributes,
                status_code=STATUS_OK if error is None else STATUS_ERROR, status_message=error)

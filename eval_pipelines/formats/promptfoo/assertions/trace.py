"""promptfoo's trace assertions (``trace-span-count``, ``trace-span-duration``, ``trace-error-spans``)
as our ``trace_*`` graders (grading/graders/trace_*.py), which read the output's OpenTelemetry
spans (run/tracing/spans.py). Their ``value`` mapping is checked as promptfoo checks it
(src/util/traceAssertionConfig.ts); the graders' parameter models check the numbers.
"""

from __future__ import annotations

from typing import Any, Callable

from eval_pipelines.formats.promptfoo.assertions.vocabulary import Refused

TRACE_TYPES = ("trace-span-count", "trace-span-duration", "trace-error-spans")
# promptfoo's camelCase fields and ours.
RENAMED = {"requirePresence": "require_presence"}


def _mapping(raw: dict[str, Any], allowed: set[str], required: str | None = None) -> dict[str, Any]:
    value = raw.get("value")
    kind = str(raw["type"]).removeprefix("not-")
    if not isinstance(value, dict) or (required and required not in value):
        raise Refused(f"{kind} assertion must have a value object with {required or 'its'} property")
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise Refused(f"`value` has unknown field(s) {', '.join(unknown)} (expected {', '.join(sorted(allowed))})")
    return {RENAMED.get(k, k): v for k, v in value.items()}


def _span_count(raw: dict[str, Any]) -> dict[str, Any]:
    return {"type": "trace_span_count", **_mapping(raw, {"pattern", "min", "max"}, "pattern")}


def _span_duration(raw: dict[str, Any]) -> dict[str, Any]:
    return {"type": "trace_span_duration",
            **_mapping(raw, {"pattern", "max", "percentile", "method", "requirePresence"}, "max")}


def _error_spans(raw: dict[str, Any]) -> dict[str, Any]:
    value = raw.get("value")
    if value is None:
        return {"type": "trace_error_spans"}  # promptfoo: no error span allowed
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {"type": "trace_error_spans", "max_count": value}  # the number shorthand
    return {"type": "trace_error_spans",
            **_mapping(raw, {"max_count", "max_percentage", "pattern", "requirePresence"})}


TRACE_VOCABULARY: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "trace-span-count": _span_count,
    "trace-span-duration": _span_duration,
    "trace-error-spans": _error_spans,
}

"""``trace_error_spans`` (promptfoo's ``trace-error-spans``, src/assertions/traceErrorSpans.ts):
among the spans whose name matches ``pattern`` (default ``*``), at most ``max_count`` are
errors and/or at most ``max_percentage`` percent are (neither given: no error allowed; a bare
number is ``max_count``). A span is an error as promptfoo's ``isErrorSpan`` decides: status
code 2 (ERROR) or >= 400; an ``error``/``exception``/``failed``/``failure`` attribute that is
true, ``"true"`` or an object; ``http.status_code`` >= 400; ``otel.status_code`` or
``status.code`` ``"ERROR"``; or a status message saying error, failed, failure, exception,
timeout or abort. No matching span passes unless ``require_presence``, which fails, also
under ``not-`` (as promptfoo). Score 1 or 0 with promptfoo's reasons. No trace: an error grade.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders._trace_spans import js_number, matches_pattern, no_trace, promptfoo_spans

ERROR_WORDS = re.compile(r"error|failed|failure|exception|timeout|abort", re.IGNORECASE)


class ErrorSpansParams(Params):
    max_count: int | None = Field(default=None, ge=0)
    max_percentage: float | None = Field(default=None, ge=0, le=100, allow_inf_nan=False)
    pattern: str = "*"
    require_presence: bool = False

    @field_validator("pattern")
    @classmethod
    def _pattern(cls, value: str) -> str:
        if not value:
            raise ValueError("trace-error-spans assertion pattern must be a non-empty string")
        return value


def is_error_span(span: dict[str, Any]) -> bool:
    code = span.get("statusCode")
    if code == 2 or (isinstance(code, (int, float)) and code >= 400):
        return True
    attributes = span.get("attributes") or {}
    for key in ("error", "exception", "failed", "failure"):
        value = attributes.get(key)
        if value is True or value == "true" or isinstance(value, (dict, list)):
            return True
    status = attributes.get("http.status_code")
    if status is not None and not isinstance(status, bool):
        try:
            if float(status) >= 400:
                return True
        except (TypeError, ValueError):
            pass
    if attributes.get("otel.status_code") == "ERROR" or attributes.get("status.code") == "ERROR":
        return True
    return bool(span.get("statusMessage") and ERROR_WORDS.search(str(span["statusMessage"])))


class TraceErrorSpans(Grader[ErrorSpansParams]):
    type = "trace_error_spans"
    group = "measurements"  # section of docs/assertions.md
    score_range = "0 or 1"
    Params = ErrorSpansParams

    def grade(self, params: ErrorSpansParams, inp: GradeInput) -> Outcome:
        spans = promptfoo_spans(inp)
        if spans is None:
            return no_trace("trace-error-spans", inp)
        max_count, max_pct, pattern = params.max_count, params.max_percentage, params.pattern
        if max_count is None and max_pct is None:
            max_count = 0
        matched = [s for s in spans if matches_pattern(s["name"], pattern)]
        if not matched:
            reason = f'No spans found matching pattern "{pattern}"'
            if params.require_presence:  # promptfoo fails this under `not-` as well: a final verdict
                return Outcome(0.0, reason + " (requirePresence: true)", final=True)
            return Outcome.binary(True, reason)
        errors = [s for s in matched if is_error_span(s)]
        pct = len(errors) / len(matched) * 100
        if max_count is not None and len(errors) > max_count:
            details = [s["name"] + (f" ({s['statusMessage']})" if s.get("statusMessage")
                                    else f" (status: {s['statusCode']})" if s.get("statusCode") else "")
                       for s in errors[:3]]
            reason = (f"Found {len(errors)} error spans, expected at most {max_count}. Errors: {', '.join(details)}"
                      + (f" and {len(errors) - 3} more" if len(errors) > 3 else ""))
            return Outcome.binary(False, reason, errors=len(errors))
        if max_pct is not None and pct > max_pct:
            return Outcome.binary(False, f"Error rate {pct:.1f}% exceeds threshold {js_number(max_pct)}% "
                                         f"({len(errors)} errors out of {len(matched)} spans)", errors=len(errors))
        if not errors:
            return Outcome.binary(True, f'No errors found in {len(matched)} spans matching pattern "{pattern}"',
                                  errors=0)
        reason = f"Found {len(errors)} error(s) in {len(matched)} spans ({pct:.1f}%)"
        if max_count is not None:
            reason += f", within threshold of {max_count}"
        if max_pct is not None:
            reason += f", within threshold of {js_number(max_pct)}%"
        return Outcome.binary(True, reason, errors=len(errors))

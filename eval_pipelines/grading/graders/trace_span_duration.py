"""``trace_span_duration`` (promptfoo's ``trace-span-duration``, src/assertions/traceSpanDuration.ts):
the spans whose name matches ``pattern`` (default ``*``) and that have an end time took at most
``max`` milliseconds each, or, with ``percentile`` (0-100), their ``percentile``-th duration
(``method`` ``nearest``: nearest rank, the default; ``linear``: interpolated) is at most
``max``. No matching span passes unless ``require_presence`` (promptfoo ``requirePresence``).
Durations are clamped at 0. Score 1 or 0 with promptfoo's reasons. No trace: an error grade.

promptfoo's ``not-`` form fails whenever no span matched: without ``require_presence`` the
pass is inverted as usual; with it the failure is final (``Outcome.final``), not inverted.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, field_validator

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders._trace_spans import js_number, matches_pattern, no_trace, promptfoo_spans

SMALL_SAMPLE = 20  # promptfoo's PERCENTILE_LARGE_SAMPLE_THRESHOLD


class SpanDurationParams(Params):
    pattern: str = "*"
    max: float = Field(ge=0, allow_inf_nan=False)
    percentile: float | None = Field(default=None, ge=0, le=100, allow_inf_nan=False)
    method: Literal["nearest", "linear"] = "nearest"
    require_presence: bool = False

    @field_validator("pattern")
    @classmethod
    def _pattern(cls, value: str) -> str:
        if not value:
            raise ValueError("trace-span-duration assertion pattern must be a non-empty string")
        return value


def percentile_of(durations: list[float], percentile: float, method: str = "nearest") -> float:
    """promptfoo's calculatePercentile: nearest rank, or linear interpolation (NumPy "linear")."""
    if not durations:
        return 0.0
    ordered = sorted(durations)
    if method == "linear":
        if len(ordered) == 1:
            return ordered[0]
        rank = percentile / 100 * (len(ordered) - 1)
        lower = math.floor(rank)
        upper = min(len(ordered) - 1, lower + 1)
        return ordered[lower] + (ordered[upper] - ordered[lower]) * (rank - lower)
    index = math.ceil(percentile / 100 * len(ordered)) - 1
    return ordered[max(0, index)]


class TraceSpanDuration(Grader[SpanDurationParams]):
    type = "trace_span_duration"
    group = "measurements"  # section of docs/assertions.md
    score_range = "0 or 1"
    Params = SpanDurationParams

    def grade(self, params: SpanDurationParams, inp: GradeInput) -> Outcome:
        spans = promptfoo_spans(inp)
        if spans is None:
            return no_trace("trace-span-duration", inp)
        pattern, limit = params.pattern, params.max
        matched = [s for s in spans if matches_pattern(s["name"], pattern) and s.get("endTime") is not None]
        if not matched:
            reason = f'No spans found matching pattern "{pattern}" with complete timing data'
            if params.require_presence:  # promptfoo fails this under `not-` as well: a final verdict
                return Outcome(0.0, reason + " (requirePresence: true)", final=True)
            return Outcome.binary(True, reason)
        timed = [(s["name"], max(0.0, s["endTime"] - s["startTime"])) for s in matched]
        slowest = lambda items: ", ".join(f"{n} ({js_number(d)}ms)"  # noqa: E731
                                          for n, d in sorted(items, key=lambda i: -i[1])[:3])
        if params.percentile is None:
            slow = [(n, d) for n, d in timed if d > limit]
            if slow:
                return Outcome.binary(False, f"{len(slow)} span(s) exceed duration threshold {js_number(limit)}ms. "
                                             f"Slowest: {slowest(slow)}")
            return Outcome.binary(True, f'All {len(matched)} spans matching pattern "{pattern}" completed within '
                                        f"{js_number(limit)}ms (max: {js_number(max(d for _, d in timed))}ms)")
        p = params.percentile
        value = percentile_of([d for _, d in timed], p, params.method)
        note = (f" (warning: small sample N={len(timed)}; {js_number(p)}th percentile is approximate, prefer max "
                "or aggregate across more rows)") if len(timed) < SMALL_SAMPLE else ""
        head = f"{js_number(p)}th percentile duration ({value:.2f}ms, method={params.method})"
        if value > limit:
            return Outcome.binary(False, f"{head} exceeds threshold {js_number(limit)}ms{note}. Slowest spans: "
                                         f"{slowest([(n, d) for n, d in timed if d >= value])}", percentile=value)
        return Outcome.binary(True, f"{head} is within threshold {js_number(limit)}ms{note}", percentile=value)

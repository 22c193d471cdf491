"""``trace_span_count`` (promptfoo's ``trace-span-count``, src/assertions/traceSpanCount.ts):
the number of the output's trace spans whose name matches ``pattern`` (a whole-name glob,
``*`` and ``?``, case-insensitive) lies within ``min`` .. ``max`` (one bound at least;
whole numbers, ``max >= min``, as src/util/traceAssertionConfig.ts checks). Score 1 or 0;
the reason is promptfoo's (``Found 2 spans matching pattern "chat *" (expected at least 1).
Matched spans: chat gpt-4o-mini``). No trace (the suite is not traced): an error grade.
"""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders._trace_spans import matches_pattern, no_trace, promptfoo_spans


class SpanCountParams(Params):
    pattern: str
    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=0)

    @field_validator("pattern")
    @classmethod
    def _pattern(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("`pattern` must be a non-empty glob")
        return value

    @model_validator(mode="after")
    def _bounds(self) -> "SpanCountParams":
        if self.min is None and self.max is None:
            raise ValueError("trace-span-count assertion must include a min or max property")
        if self.min is not None and self.max is not None and self.max < self.min:
            raise ValueError("trace-span-count assertion max must be greater than or equal to min")
        return self


class TraceSpanCount(Grader[SpanCountParams]):
    type = "trace_span_count"
    group = "measurements"  # section of docs/assertions.md
    score_range = "0 or 1"
    Params = SpanCountParams

    def grade(self, params: SpanCountParams, inp: GradeInput) -> Outcome:
        spans = promptfoo_spans(inp)
        if spans is None:
            return no_trace("trace-span-count", inp)
        lo, hi, pattern = params.min, params.max, params.pattern
        matched = [s for s in spans if matches_pattern(s["name"], pattern)]
        count = len(matched)
        if lo is not None and count < lo:
            ok, reason = False, f'Found {count} spans matching pattern "{pattern}", expected at least {lo}'
        elif hi is not None and count > hi:
            ok, reason = False, f'Found {count} spans matching pattern "{pattern}", expected at most {hi}'
        else:
            ok, reason = True, f'Found {count} spans matching pattern "{pattern}"'
            reason += (f" (expected {lo}-{hi})" if lo is not None and hi is not None
                       else f" (expected at least {lo})" if lo is not None else f" (expected at most {hi})")
        names = list(dict.fromkeys(s["name"] for s in matched))
        if names:
            reason += f". Matched spans: {', '.join(names)}"
        return Outcome.binary(ok, reason, count=count, matched=names)

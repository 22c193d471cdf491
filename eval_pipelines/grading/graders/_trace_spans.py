"""The spans trace assertions read (promptfoo's ``context.trace.spans``), shared by the
``trace_*`` graders; no grader here.

An output of a traced suite has a trace (its spans, maybe none); an output of a suite
without ``tracing`` has none, and promptfoo's trace assertions then throw
``No trace data available for <type> assertion`` (src/assertions/traceSpanCount.ts and
siblings): an error grade here, whatever the ``not-``.
"""

from __future__ import annotations

import math
from typing import Any

from eval_pipelines.grading.base import GradeInput, Outcome
from eval_pipelines.grading.graders._trajectory_steps import matches_pattern

__all__ = ["matches_pattern", "promptfoo_spans", "no_trace", "js_number"]


def promptfoo_spans(inp: GradeInput) -> list[dict[str, Any]] | None:
    """The output's spans as promptfoo's store returns them, or None when it has no trace."""
    if inp.otel is None:
        return None
    return inp.otel.as_promptfoo()["spans"]


def no_trace(kind: str, inp: GradeInput) -> Outcome:
    why = f": {inp.otel.error}" if inp.otel is not None and inp.otel.error else ""
    return Outcome(0.0, f"No trace data available for {kind} assertion{why}", status="error")


def js_number(value: float) -> str:
    """A number as JavaScript's template strings print it (``12``, ``12.5``), for promptfoo's reasons."""
    if math.isfinite(value) and float(value).is_integer():
        return str(int(value))
    return repr(float(value))

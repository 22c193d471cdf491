"""trace-span-count / trace-span-duration / trace-error-spans graders against promptfoo's semantics.

Expected verdicts and reasons are promptfoo's (src/assertions/traceSpanCount.ts,
traceSpanDuration.ts, traceErrorSpans.ts), computed by hand from those functions."""

from __future__ import annotations

import pytest

from eval_pipelines.grading.base import GradeInput
from eval_pipelines.grading.dispatch import assertion_from_raw, grade_output
from eval_pipelines.run.tracing.spans import OutputTrace, Span
from eval_pipelines.suite.models import Message, TestCase

TRACE = "0af7651916cd43dd8448eb211c80319c"
MS = 1_000_000


def span(name: str, start_ms: float, end_ms: float | None, code: int = 1, message: str | None = None,
         **attributes) -> Span:  # noqa: ANN003
    return Span(trace_id=TRACE, span_id=f"{abs(hash((name, start_ms))) % 16**16:016x}", name=name,
                start_ns=int(start_ms * MS), end_ns=None if end_ms is None else int(end_ms * MS),
                attributes=attributes, status_code=code, status_message=message)


SPANS = (
    span("chat gpt-4o-mini", 0, 120),
    span("retrieve_document_1", 10, 40),
    span("retrieve_document_2", 40, 95.5),
    span("tool.search", 100, 1600, code=2, message="upstream timeout"),
    span("tool.lookup", 100, 110, **{"http.status_code": "503"}),
    span("unfinished", 5, None),
)


def grade(raw: dict, spans: tuple[Span, ...] | None = SPANS):  # noqa: ANN201
    case = TestCase(id="t", input=[Message(role="user", content="q")], assertions=[])
    inp = GradeInput(case=case, output="a", otel=None if spans is None else OutputTrace(TRACE, spans))
    return grade_output(assertion_from_raw(raw), inp)


def test_span_count_reasons_and_bounds() -> None:
    g = grade({"type": "trace_span_count", "pattern": "retrieve_document_*", "min": 2, "max": 2})
    assert (g.passed, g.score) == (True, 1.0)
    assert g.reason == ('Found 2 spans matching pattern "retrieve_document_*" (expected 2-2). '
                        "Matched spans: retrieve_document_1, retrieve_document_2")
    g = grade({"type": "trace_span_count", "pattern": "tool.*", "max": 1})
    assert (g.passed, g.reason) == (False, 'Found 2 spans matching pattern "tool.*", expected at most 1. '
                                           "Matched spans: tool.search, tool.lookup")
    # case-insensitive whole-name glob; `?` is one character; `.` is literal
    assert grade({"type": "trace_span_count", "pattern": "CHAT *", "min": 1}).passed
    assert grade({"type": "trace_span_count", "pattern": "tool?search", "min": 1}).passed
    assert not grade({"type": "trace_span_count", "pattern": "tool", "min": 1}).passed
    g = grade({"type": "trace_span_count", "pattern": "db.*", "min": 1})
    assert g.reason == 'Found 0 spans matching pattern "db.*", expected at least 1'
    # not- inverts the verdict
    assert not grade({"type": "trace_span_count", "pattern": "chat *", "min": 1, "negate": True}).passed


def test_no_trace_is_an_error_whatever_the_negation() -> None:
    for negate in (False, True):
        g = grade({"type": "trace_span_count", "pattern": "*", "min": 1, "negate": negate}, spans=None)
        assert (g.status, g.passed) == ("error", False)
        assert g.reason == "No trace data available for trace-span-count assertion"
    g = grade({"type": "trace_error_spans"}, spans=None)
    assert g.reason == "No trace data available for trace-error-spans assertion"
    # a trace without spans is data: zero spans
    g = grade({"type": "trace_span_count", "pattern": "*", "max": 0}, spans=())
    assert (g.status, g.passed, g.reason) == ("graded", True, 'Found 0 spans matching pattern "*" (expected at most 0)')


def test_span_duration_all_spans_and_percentiles() -> None:
    g = grade({"type": "trace_span_duration", "pattern": "retrieve_*", "max": 100})
    assert (g.passed, g.reason) == (True, 'All 2 spans matching pattern "retrieve_*" completed within 100ms '
                                          "(max: 55.5ms)")
    g = grade({"type": "trace_span_duration", "max": 100})  # `unfinished` has no end: left out
    assert (g.passed, g.reason) == (False, "2 span(s) exceed duration threshold 100ms. Slowest: "
                                           "tool.search (1500ms), chat gpt-4o-mini (120ms)")
    # durations 120, 30, 55.5, 1500, 10 -> sorted 10, 30, 55.5, 120, 1500; nearest rank p50: ceil(2.5)-1 = 2
    g = grade({"type": "trace_span_duration", "max": 60, "percentile": 50})
    assert (g.passed, g.reason) == (True, "50th percentile duration (55.50ms, method=nearest) is within threshold "
                                          "60ms (warning: small sample N=5; 50th percentile is approximate, "
                                          "prefer max or aggregate across more rows)")
    # linear p90: rank 3.6 -> 120 + (1500 - 120) * 0.6 = 948
    g = grade({"type": "trace_span_duration", "max": 500, "percentile": 90, "method": "linear"})
    assert not g.passed
    assert g.reason.startswith("90th percentile duration (948.00ms, method=linear) exceeds threshold 500ms")
    assert g.reason.endswith("Slowest spans: tool.search (1500ms)")
    g = grade({"type": "trace_span_duration", "pattern": "db.*", "max": 1})
    assert (g.passed, g.reason) == (True, 'No spans found matching pattern "db.*" with complete timing data')
    g = grade({"type": "trace_span_duration", "pattern": "db.*", "max": 1, "require_presence": True})
    assert not g.passed and g.reason.endswith("(requirePresence: true)")


@pytest.mark.parametrize("type_,value", [("trace_span_duration", {"max": 1}), ("trace_error_spans", {})])
def test_not_with_no_matching_span_fails_as_promptfoos(type_: str, value: dict) -> None:
    """promptfoo's not- form fails whenever no span matched: the pass without requirePresence is
    inverted; the failure with it stands (it is not turned into a pass)."""
    plain = grade({"type": type_, "pattern": "db.*", "negate": True, **value})
    assert not plain.passed and plain.reason.startswith("negated: No spans found")
    required = grade({"type": type_, "pattern": "db.*", "require_presence": True, "negate": True, **value})
    assert (required.status, required.passed, required.score) == ("graded", False, 0.0)
    assert required.reason.endswith("(requirePresence: true)") and not required.reason.startswith("negated")
    assert not grade({"type": type_, "pattern": "db.*", "require_presence": True, **value}).passed


def test_error_spans_detection_and_budgets() -> None:
    g = grade({"type": "trace_error_spans"})  # default: no error allowed
    assert (g.passed, g.reason) == (False, "Found 2 error spans, expected at most 0. Errors: "
                                           "tool.search (upstream timeout), tool.lookup (status: 1)")
    g = grade({"type": "trace_error_spans", "max_count": 2})
    assert (g.passed, g.reason) == (True, "Found 2 error(s) in 6 spans (33.3%), within threshold of 2")
    g = grade({"type": "trace_error_spans", "max_percentage": 30})
    assert (g.passed, g.reason) == (False, "Error rate 33.3% exceeds threshold 30% (2 errors out of 6 spans)")
    g = grade({"type": "trace_error_spans", "pattern": "retrieve_*"})
    assert (g.passed, g.reason) == (True, 'No errors found in 2 spans matching pattern "retrieve_*"')
    g = grade({"type": "trace_error_spans", "pattern": "db.*"})
    assert (g.passed, g.reason) == (True, 'No spans found matching pattern "db.*"')
    # not-: passes when the error budget is exceeded
    assert grade({"type": "trace_error_spans", "negate": True}).passed


@pytest.mark.parametrize("attributes,message,code,expected", [
    ({"error": True}, None, 1, True), ({"exception": {"type": "ValueError"}}, None, 1, True),
    ({"failed": "true"}, None, 1, True), ({"failed": "yes"}, None, 1, False),
    ({"http.status_code": 404}, None, 1, True), ({"http.status_code": 399}, None, 1, False),
    ({"otel.status_code": "ERROR"}, None, 1, True), ({}, "request aborted", 1, True),
    ({}, "all good", 1, False), ({}, None, 2, True), ({}, None, 0, False),
])
def test_error_span_rules(attributes: dict, message: str | None, code: int, expected: bool) -> None:
    g = grade({"type": "trace_error_spans"}, spans=(span("s", 0, 1, code=code, message=message, **attributes),))
    assert g.passed is (not expected)


def test_step_count_reads_a_traced_runs_spans_as_promptfoos_trajectory() -> None:
    """trajectoryUtils.ts extractTrajectorySteps: steps in start order, typed from span names/attributes."""
    spans = (
        span("reasoning", 0, 5), span("reasoning_summary", 5, 6),
        span("tool.call", 6, 9, **{"tool.name": "search_orders", "tool.arguments": '{"id": 7}'}),
        span("exec_command", 9, 12, **{"tool.name": "exec_command", "tool.arguments": '{"cmd": "cat notes.md"}'}),
        span("search \"refund policy\"", 12, 13), span("agent response", 13, 14), span("chat gpt-4o-mini", 14, 15),
        span("mcp orders/lookup", 15, 16),
    )

    def count(**value) -> tuple[bool, int]:  # noqa: ANN003
        g = grade({"type": "trajectory_step_count", **value}, spans=spans)
        return g.passed, g.details["count"]

    assert count(step_type="reasoning", min=2, max=2) == (True, 2)
    assert count(step_type="tool", min=2) == (True, 2)  # search_orders and mcp lookup
    assert count(step_type="command", pattern="cat", min=1) == (True, 1)  # the executable is an alias
    assert count(step_type="search", pattern="refund policy", min=1) == (True, 1)
    assert count(step_type="message", max=1) == (True, 1)
    assert count(step_type="span", pattern="chat *", min=1, max=1) == (True, 1)
    assert count(pattern="tool.call", min=1) == (True, 1)  # a step also matches by its span's name

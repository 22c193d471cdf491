"""Deterministic graders beyond the basics: text lists, measurements, fields,
trajectories, regression comparisons, composites and human ratings."""

from __future__ import annotations

import json
from typing import Any

import pytest

from eval_pipelines.grading.base import GradeInput, Measurements
from eval_pipelines.grading.dispatch import grade_output
from eval_pipelines.suite.assertions import parse_assertion
from eval_pipelines.suite.errors import SpecError
from eval_pipelines.suite.models import Assertion, Message, TestCase
from eval_pipelines.suite.source import Document
from pathlib import Path


def case(expected: Any = None) -> TestCase:
    return TestCase(id="t1", input=[Message(content="q")], expected_output=expected)


def grade(type_: str, output: str, *, expected_output: Any = None, trace=None, measurements=None,
          baseline_output=None, ratings=None, **config: Any):
    inp = GradeInput(case=case(expected_output), output=output, trace=trace or [],
                     measurements=measurements or Measurements(), baseline_output=baseline_output,
                     human_ratings=ratings or [])
    return grade_output(Assertion(type=type_, config=config), inp)


def load_errors(raw: dict[str, Any]) -> list[SpecError]:
    errors: list[SpecError] = []
    parse_assertion(raw, Document(Path("s.yaml"), raw), ("assert", 0), errors)
    return errors


# ---- text lists ----------------------------------------------------------

def test_contains_any_and_icontains_and_prefixes() -> None:
    assert grade("contains_any", "Access DENIED", value=["APPROVED", "DENIED"]).passed
    assert not grade("contains_any", "maybe", value=["APPROVED", "DENIED"]).passed
    assert grade("icontains", "Access denied", value="DENIED").passed
    assert not grade("icontains", "Access granted", value="DENIED").passed
    assert grade("starts_with", "  DENIED - listed", value="DENIED").passed
    assert not grade("ends_with", "DENIED - listed", value="DENIED").passed


def test_kebab_case_names_resolve_to_the_same_grader() -> None:
    assert not load_errors({"type": "contains-any", "value": ["a"]})
    assert not load_errors({"type": "starts-with", "value": "a"})


def test_must_include_gives_partial_credit_and_names_problems() -> None:
    g = grade("must_include", "Needs PostgreSQL 14+ and /api/v1/users; legacy mode off",
              must_include=["PostgreSQL 14+", "/api/v1/users", "DATABASE_URL"],
              must_not_include=["deprecated", "legacy"])
    assert g.score == pytest.approx(3 / 5)
    assert g.details["missing"] == ["DATABASE_URL"] and g.details["forbidden_found"] == ["legacy"]
    assert not g.passed


def test_must_include_needs_a_list() -> None:
    assert load_errors({"type": "must_include"})


# ---- measurements ---------------------------------------------------------

def test_latency_cost_tokens_thresholds() -> None:
    m = Measurements(latency_ms=1200, prompt_tokens=100, completion_tokens=50, cost_usd=0.02)
    assert grade("latency", "x", measurements=m, max_ms=2000).passed
    assert not grade("latency", "x", measurements=m, threshold=1000).passed  # AgentV spelling
    assert not grade("cost", "x", measurements=m, max_usd=0.01).passed
    assert grade("cost", "x", measurements=m, budget=0.05).passed
    g = grade("token_usage", "x", measurements=m, max_total=120, max_input=200)
    assert not g.passed and "total 150 > 120" in g.reason


def test_unmeasured_values_are_not_evaluated_not_passed() -> None:
    g = grade("latency", "x", max_ms=10)
    assert g.status == "not_evaluated" and not g.passed


def test_execution_metrics_share_of_limits() -> None:
    m = Measurements(latency_ms=10, llm_calls=3, tool_calls=7)
    g = grade("execution_metrics", "x", measurements=m, max_tool_calls=5, max_llm_calls=4)
    assert g.score == pytest.approx(0.5) and "tool_calls 7 > 5" in g.reason


# ---- field accuracy -------------------------------------------------------

def test_field_accuracy_weighted_mean_with_tolerance_and_case() -> None:
    out = json.dumps({"invoice": {"total": 100.4, "currency": "usd"}, "vendor": "ACME Corp"})
    g = grade("field_accuracy", out, fields=[
        {"path": "invoice.total", "expected": 100, "match": "numeric", "tolerance": 0.5, "weight": 2},
        {"path": "invoice.currency", "expected": "USD", "match": "case_insensitive"},
        {"path": "vendor", "expected": "Acme"},
    ])
    assert g.score == pytest.approx(3 / 4)
    assert g.details["fields"]["vendor"]["score"] == 0.0


def test_field_accuracy_reads_expected_output_and_required_fields() -> None:
    out = json.dumps({"a": 1, "b": 2})
    g = grade("field_accuracy", out, expected_output={"a": 1, "b": 3},
              fields=[{"path": "a"}, {"path": "b", "required": True}])
    assert g.score == 0.0 and g.details["required_failed"] == ["b"]


def test_field_accuracy_invalid_json_fails() -> None:
    assert not grade("field_accuracy", "no json", fields=[{"path": "a", "expected": 1}]).passed


# ---- tool trajectory -------------------------------------------------------

TRACE = [
    {"tool": "search_entity_list", "args": {"query": "Huawei", "list": "BIS"}},
    {"name": "lookup", "arguments": {}},
    {"tool": "check_regulations", "args": {}},
    {"tool": "generate_report", "args": {}},
]


def test_trajectory_in_order_with_argument_subset() -> None:
    expected = [{"tool": "search_entity_list", "args": {"query": "Huawei"}},
                {"tool": "check_regulations"}, {"tool": "generate_report"}]
    assert grade("tool_trajectory", "", trace=TRACE, mode="in_order", expected=expected).score == 1.0
    reordered = [expected[2], expected[0], expected[1]]
    g = grade("tool_trajectory", "", trace=TRACE, mode="in_order", expected=reordered)
    assert g.score == pytest.approx(1 / 3)
    assert grade("tool_trajectory", "", trace=TRACE, mode="any_order", expected=reordered).score == 1.0


def test_trajectory_argument_mismatch_and_exact_mode() -> None:
    g = grade("tool_trajectory", "", trace=TRACE, expected=[{"tool": "search_entity_list", "args": {"query": "ZTE"}}])
    assert g.score == 0.0 and g.details["missing"] == ["search_entity_list"]
    exact = grade("tool_trajectory", "", trace=TRACE[:1], mode="exact",
                  expected=[{"tool": "search_entity_list"}, {"tool": "check_regulations"}])
    assert exact.score == pytest.approx(0.5) and not exact.passed


# ---- regression comparisons ------------------------------------------------

BASELINE = {
    "status": 200,
    "body": {
        "users": [{"id": "{{any_uuid}}", "name": "{{any_string}}", "email": "{{any_email}}",
                   "created_at": "{{any_iso_datetime}}"}],
        "pagination": {"page": 1, "per_page": 20, "total": "{{any_number}}"},
    },
}


def test_structural_match_with_placeholders_and_ignored_fields() -> None:
    current = {"status": 200, "extra": True, "body": {
        "users": [{"id": "not-a-uuid", "name": "Ann", "email": "ann@example.com", "created_at": "x"},
                  {"id": "also-bad", "name": "Bo", "email": "bo@example.com", "created_at": "y"}],
        "pagination": {"page": 1, "per_page": 20, "total": 2}}}
    g = grade("structural", json.dumps(current), baseline=BASELINE,
              ignore_fields=["body.users.*.id", "body.users.*.created_at"])
    assert g.passed, g.details
    strict = grade("structural", json.dumps(current), baseline=BASELINE, allow_additional_fields=False,
                   ignore_fields=["body.users.*.id", "body.users.*.created_at"])
    assert not strict.passed and "extra: not in the baseline" in strict.details["differences"]


def test_structural_reports_missing_required_keys_and_changed_values() -> None:
    g = grade("structural", json.dumps({"data": [], "meta": {"page": 2}}),
              baseline={"data": [], "meta": {"page": 1, "per_page": 20}},
              require_keys=["data", "meta.page", "meta.per_page"], ignore_values=["data.*"])
    assert not g.passed
    assert "meta.per_page: required key missing" in g.details["differences"]
    assert any("meta.page: 2 != baseline 1" in d for d in g.details["differences"])


def test_structural_uses_the_stored_baseline_output_or_is_not_evaluated() -> None:
    g = GradeInput(case=case(), output='{"a": 1}', baseline_output='{"a": 1}')
    assert grade_output(Assertion(type="structural"), g).passed
    # A first version has no baseline yet: not evaluated (neither pass nor fail), not an error.
    for kind in ("structural", "numeric"):
        missing = grade_output(Assertion(type=kind), GradeInput(case=case(), output='{"a": 1}'))
        assert missing.status == "not_evaluated" and "no baseline yet" in missing.reason


def test_numeric_tolerance_per_field() -> None:
    base = {"quality_scores": {"specificity": 4.2, "tone": 4.6}}
    ok = {"quality_scores": {"specificity": 4.0, "tone": 5.0}}
    bad = {"quality_scores": {"specificity": 3.8, "tone": 4.6}}
    tol = {"quality_scores": {"min_delta": -0.3, "max_delta": None}}
    assert grade("numeric", json.dumps(ok), baseline=base, tolerance=tol).passed
    g = grade("numeric", json.dumps(bad), baseline=base, tolerance=tol)
    assert not g.passed and "quality_scores.specificity" in g.details["problems"][0]


# ---- composite -------------------------------------------------------------

def test_composite_weighted_average_by_name() -> None:
    g = grade("composite", "DENIED per EAR", **{
        "assert": [{"name": "a", "type": "contains", "value": "DENIED"},
                   {"name": "b", "type": "contains", "value": "OFAC"}],
        "aggregator": {"type": "weighted_average", "weights": {"a": 0.7, "b": 0.3}}})
    assert g.score == pytest.approx(0.7) and not g.passed
    assert [c["name"] for c in g.details["children"]] == ["a", "b"]


@pytest.mark.parametrize("aggregator, score", [("min", 0.0), ("max", 1.0), ("all", 0.0), ("any", 1.0)])
def test_composite_other_aggregators(aggregator: str, score: float) -> None:
    g = grade("composite", "yes", **{"assert": [{"type": "contains", "value": "yes"},
                                                {"type": "contains", "value": "no"}],
                                     "aggregator": aggregator})
    assert g.score == score


def test_composite_required_child_gates_the_group() -> None:
    g = grade("hybrid", "yes", **{"assert": [{"type": "contains", "value": "yes", "weight": 9},
                                             {"type": "contains", "value": "no", "required": True}]})
    assert g.score == 0.0 and "required nested" in g.reason


def test_composite_children_are_validated_at_load_time() -> None:
    errors = load_errors({"type": "composite", "assert": [{"type": "regex", "value": "("}]})
    assert errors and "invalid regular expression" in errors[0].message
    assert load_errors({"type": "composite", "assert": []})


# ---- human -----------------------------------------------------------------

def test_human_pending_until_enough_agreeing_ratings() -> None:
    config = {"evaluators": {"min_required": 2, "agreement_threshold": 0.8},
              "rating_scale": {"type": "likert", "range": [1, 5]}}
    assert grade("human", "x", **config).status == "pending_human"
    one = grade("human", "x", ratings=[{"rater": "a", "rating": 5}], **config)
    assert one.status == "pending_human"
    two = grade("human", "x", ratings=[{"rater": "a", "rating": 5}, {"rater": "b", "rating": 4}], **config)
    assert two.status == "graded" and two.score == pytest.approx(0.875)
    split = grade("human", "x", ratings=[{"rater": "a", "rating": 5}, {"rater": "b", "rating": 1}], **config)
    assert split.status == "pending_human" and "disagree" in split.reason


# ---- regex safety ------------------------------------------------------------

def test_catastrophic_backtracking_is_bounded() -> None:
    import time

    started = time.perf_counter()
    g = grade("regex", "a" * 60 + "b", value="^(a|aa)+$", timeout_s=0.5)
    elapsed = time.perf_counter() - started
    assert g.status == "error" and "catastrophic backtracking" in g.reason
    assert elapsed < 60  # bounded by the timeout, not by the 2^40 search (hours); generous for a loaded machine


# ---- statuses that must not turn into passes ---------------------------------------

def test_unverifiable_required_gate_makes_the_case_not_evaluated() -> None:
    from eval_pipelines.grading.scoring import score_case

    inp = GradeInput(case=case(), output="DENIED")
    grades = [grade_output(Assertion(type="contains", config={"value": "DENIED"}), inp, 0),
              grade_output(Assertion(type="latency", required=True, config={"max_ms": 10}), inp, 1)]
    result = score_case(grades)
    assert result.status == "not_evaluated" and result.verdict is None
    assert "required gate latency could not be evaluated" in result.reason


def test_failed_required_gate_fails_the_case_beside_an_unmeasured_gate() -> None:
    """Issue 30: a measured gate that failed is a known failure; an unmeasured gate cannot hide it."""
    from eval_pipelines.grading.scoring import score_case

    inp = GradeInput(case=case(), output="DENIED")
    grades = [grade_output(Assertion(type="latency", required=True, config={"max_ms": 10}), inp, 0),
              grade_output(Assertion(type="contains", required=True, config={"value": "APPROVED"}), inp, 1)]
    result = score_case(grades)
    assert (result.status, result.verdict, result.score) == ("graded", "fail", 0.0)
    assert result.reason.startswith("required gate contains scored 0.00 < 0.80")


def test_composite_waits_for_a_pending_human_child() -> None:
    g = grade("composite", "x", **{"assert": [{"type": "contains", "value": "x"},
                                              {"type": "human", "evaluators": {"min_required": 1}}]})
    assert g.status == "pending_human" and not g.passed


def test_equals_without_anything_to_compare_is_an_error() -> None:
    g = grade("equals", "")
    assert g.status == "error" and "nothing to compare with" in g.reason


def test_numeric_on_non_json_output_is_a_failed_grade_not_an_error() -> None:
    g = grade("numeric", "not json", baseline={"score": 1})
    assert g.status == "graded" and not g.passed


def test_word_count_exact_and_range() -> None:
    assert grade("word_count", "one two  three\nfour", value=4).passed
    wrong = grade("word_count", "one two", value=4)
    assert (wrong.passed, wrong.details["words"], wrong.reason) == (False, 2, "2 words, expected exactly 4")
    assert grade("word-count", "a b c", value={"min": 2, "max": 3}).passed
    assert not grade("word-count", "a b c d", value={"max": 3}).passed
    assert [e.message for e in load_errors({"type": "word-count", "value": {"min": 5, "max": 2}})] == [
        "min 5 is above max 2"]
    assert load_errors({"type": "word_count", "value": -1})

"""Deterministic graders through ``grading.grade_output`` (no Dagster, no network)."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from eval_pipelines.grading import registry
from eval_pipelines.grading.base import GradeInput
from eval_pipelines.grading.dispatch import grade_output
from eval_pipelines.suite.models import Assertion, Message, TestCase


def _case(expected: Any = None) -> TestCase:
    return TestCase(id="t1", input=[Message(content="q")], expected_output=expected)


def grade(type_: str, output: str, *, expected: Any = None, negate: bool = False,
          required: bool | float = False, **config: Any):
    assertion = Assertion(type=type_, config=config, negate=negate, required=required)
    return grade_output(assertion, GradeInput(case=_case(expected), output=output))


# ---- equals ---------------------------------------------------------------

def test_equals_uses_value_and_trims_by_default() -> None:
    g = grade("equals", "  4 \n", value="4")
    assert (g.score, g.passed, g.status) == (1.0, True, "graded")
    assert g.details == {"expected": "4", "actual": "4"}


def test_equals_falls_back_to_expected_output_when_no_value() -> None:
    assert grade("equals", "DENIED", expected="DENIED").passed
    g = grade("equals", "APPROVED", expected="DENIED")
    assert (g.score, g.passed) == (0.0, False)
    assert g.details["expected"] == "DENIED"
    # An explicit value wins over expected_output.
    assert grade("equals", "x", expected="DENIED", value="x").passed


def test_equals_reason_shows_both_values_as_promptfoo_does() -> None:
    g = grade("equals", "APPROVED", expected="DENIED")
    assert g.reason == 'Expected output "APPROVED" to equal "DENIED"'
    # Long values are cut in the stored reason (the details keep them whole); newlines stay visible.
    g = grade("equals", "x" * 500, value="a\nb")
    assert g.reason == 'Expected output "' + "x" * 59 + '…" to equal "a\\nb"'
    assert g.details["actual"] == "x" * 500


def test_equals_batch_reason_is_the_per_output_reason() -> None:
    from eval_pipelines.grading.graders.equals import Equals, EqualsParams

    batch = Equals().grade_batch([EqualsParams(value="4")] * 2, ["5", "4"], [_case(), _case()])
    assert list(batch.reasons) == ['Expected output "5" to equal "4"', "output equals the expected value"]


def test_equals_non_string_expected_compared_as_text() -> None:
    assert grade("equals", "27", expected=27).passed


def test_equals_case_sensitivity_option() -> None:
    assert not grade("equals", "Hello", value="hello").passed
    assert grade("equals", "Hello", value="hello", case_sensitive=False).passed


def test_equals_trim_option_off_keeps_whitespace_significant() -> None:
    assert not grade("equals", " 4", value="4", trim_whitespace=False).passed
    assert grade("equals", " 4", value="4", trim_whitespace=True).passed


def test_equals_newline_normalisation_option() -> None:
    assert grade("equals", "a\r\nb", value="a\nb").passed
    assert not grade("equals", "a\r\nb", value="a\nb", normalize_newlines=False).passed
    # Old Mac line endings too.
    assert grade("equals", "a\rb", value="a\nb").passed


def test_equals_alias_exact_match_resolves_to_equals() -> None:
    assert registry.canonical_type("exact_match") == "equals"
    assert registry.canonical_type("EXACT-MATCH") == "equals"
    assert grade("exact_match", "4", value="4").passed


# ---- contains -------------------------------------------------------------

def test_contains_single_string() -> None:
    assert grade("contains", "Result: DENIED.", value="DENIED").passed
    g = grade("contains", "Result: approved", value="DENIED")
    assert not g.passed and g.score == 0.0
    assert g.details["missing"] == ["DENIED"]


def test_contains_list_requires_every_item_and_reports_missing() -> None:
    g = grade("contains", "alpha gamma", value=["alpha", "beta", "gamma", "delta"])
    assert g.score == 0.0
    assert g.details["missing"] == ["beta", "delta"]
    assert g.details["expected"] == ["alpha", "beta", "gamma", "delta"]
    assert grade("contains", "alpha beta", value=["alpha", "beta"]).passed


def test_contains_case_insensitive() -> None:
    assert not grade("contains", "denied", value="DENIED").passed
    assert grade("contains", "denied", value="DENIED", case_sensitive=False).passed
    g = grade("contains", "Alpha", value=["ALPHA", "Beta"], case_sensitive=False)
    assert g.details["missing"] == ["Beta"]


# ---- regex ----------------------------------------------------------------

def test_regex_list_must_all_match_and_details_list_patterns() -> None:
    g = grade("regex", "hello world", value=["^hello", "world$", "xyz"])
    assert not g.passed
    assert g.details["matched_patterns"] == ["^hello", "world$"]
    assert g.details["unmatched_patterns"] == ["xyz"]
    ok = grade("regex", "hello world", value=["^hello", "world$"])
    assert ok.passed and ok.details["matched_patterns"] == ["^hello", "world$"]


def test_regex_pattern_field_alternative_to_value() -> None:
    assert grade("regex", "REVIEW REQUIRED", pattern="REVIEW|ESCALAT").passed


def test_regex_flags() -> None:
    assert not grade("regex", "Hello", value="^hello$").passed
    assert grade("regex", "Hello", value="^hello$", flags=["ignorecase"]).passed
    text = "first\nsecond"
    assert not grade("regex", text, value="^second$").passed
    assert grade("regex", text, value="^second$", flags=["multiline"]).passed
    assert not grade("regex", text, value="first.second").passed
    assert grade("regex", text, value="first.second", flags=["dotall"]).passed


def test_regex_must_match_false_forbids_patterns() -> None:
    ok = grade("regex", "all good", value="ERROR", must_match=False)
    assert ok.passed and ok.score == 1.0
    bad = grade("regex", "an ERROR here", value="ERROR", must_match=False)
    assert not bad.passed and bad.score == 0.0
    assert bad.details["matched_patterns"] == ["ERROR"]


def test_regex_named_capture_groups() -> None:
    g = grade("regex", "def solve(a, b):", value=r"def (?P<function_name>\w+)\((?P<args>[^)]*)\)",
              capture_groups=["function_name", "args"])
    assert g.passed
    assert g.details["captures"] == {"function_name": "solve", "args": "a, b"}


def test_regex_positional_capture_groups() -> None:
    g = grade("regex", "v1.22", value=r"v(\d+)\.(\d+)", capture_groups=["major", "minor"])
    assert g.details["captures"] == {"major": "1", "minor": "22"}


def test_regex_no_captures_key_when_nothing_matched() -> None:
    g = grade("regex", "none", value=r"v(\d+)", capture_groups=["major"])
    assert not g.passed
    assert "captures" not in g.details


# ---- is_json --------------------------------------------------------------

def test_is_json() -> None:
    assert grade("is_json", '{"a": [1, 2]}').passed
    bad = grade("is_json", "{'a': 1}")
    assert not bad.passed and "not valid JSON" in bad.reason
    # Strict by default: a fenced block is not JSON unless allowed.
    fenced = 'Here:\n```json\n{"a": 1}\n```'
    assert not grade("is_json", fenced).passed
    assert grade("is_json", fenced, allow_fence=True).passed


# ---- json_schema ----------------------------------------------------------

PII_SCHEMA = {
    "type": "object",
    "required": ["hasPII", "findings", "riskLevel"],
    "properties": {
        "hasPII": {"type": "boolean"},
        "findings": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["type", "location", "severity"],
                "properties": {
                    "type": {"type": "string"},
                    "location": {"type": "string"},
                    "severity": {"enum": ["low", "medium", "high", "critical"]},
                },
            },
        },
        "riskLevel": {"enum": ["low", "medium", "high", "critical"]},
    },
}


def test_json_schema_valid_document() -> None:
    out = '{"hasPII": true, "findings": [{"type": "ssn", "location": "p1", "severity": "high"}], "riskLevel": "high"}'
    g = grade("json_schema", out, schema=PII_SCHEMA)
    assert g.passed and g.score == 1.0
    assert g.details["schema_errors"] == []


def test_json_schema_errors_listed_with_json_paths() -> None:
    out = ('{"hasPII": "yes", "findings": [{"type": "ssn", "location": "p1", "severity": "extreme"}],'
           ' "riskLevel": "high"}')
    g = grade("json_schema", out, schema=PII_SCHEMA)
    assert not g.passed and g.status == "graded"
    paths = {e["path"] for e in g.details["schema_errors"]}
    assert paths == {"$.hasPII", "$.findings[0].severity"}
    assert "2 schema error(s)" in g.reason


def test_json_schema_missing_required_reported_at_root() -> None:
    g = grade("json_schema", '{"hasPII": false}', schema=PII_SCHEMA)
    assert not g.passed
    messages = [e["message"] for e in g.details["schema_errors"]]
    assert any("'findings' is a required property" in m for m in messages)
    assert all(e["path"] == "$" for e in g.details["schema_errors"])


def test_json_schema_tolerates_fenced_block() -> None:
    out = 'Sure!\n```json\n{"hasPII": false, "findings": [], "riskLevel": "low"}\n```\nDone.'
    assert grade("json_schema", out, schema=PII_SCHEMA).passed


def test_json_schema_non_json_output_fails_with_root_error() -> None:
    g = grade("json_schema", "I cannot do that", schema=PII_SCHEMA)
    assert not g.passed and g.status == "graded"
    assert g.details["schema_errors"][0]["path"] == "$"


def test_json_schema_value_alias_for_schema() -> None:
    assert not grade("json_schema", '"text"', value={"type": "integer"}).passed
    assert grade("json_schema", "3", value={"type": "integer"}).passed


def test_json_schema_draft07_dialect_is_honoured() -> None:
    # Array-form `items` is tuple validation in draft-07, an invalid schema in 2020-12.
    schema = {"$schema": "http://json-schema.org/draft-07/schema#",
              "type": "array", "items": [{"type": "string"}, {"type": "integer"}]}
    g = grade("json_schema", '["a", "b"]', schema=schema)
    assert not g.passed
    assert g.details["schema_errors"] == [{"path": "$[1]", "message": "'b' is not of type 'integer'"}]
    assert grade("json_schema", '["a", 2]', schema=schema).passed
    # The same schema without $schema is checked as 2020-12 and rejected.
    from eval_pipelines.grading.graders.json_schema import JsonSchemaParams
    with pytest.raises(Exception, match="invalid JSON Schema"):
        JsonSchemaParams.model_validate({"schema": {k: v for k, v in schema.items() if k != "$schema"}})


def test_json_schema_remote_ref_is_not_fetched(monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[Any] = []

    def no_network(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args)
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    schema = {"$ref": "https://schemas.example.com/finding.json"}
    g = grade("json_schema", '{"a": 1}', schema=schema)
    assert g.status == "error"
    assert g.score == 0.0 and not g.passed
    # Refused as soon as the schema is read (a suite with it does not load).
    assert "never fetched" in g.reason
    assert attempts == []


# ---- negate, errors -------------------------------------------------------

def test_negate_inverts_score() -> None:
    g = grade("contains", "all fine", value="ERROR", negate=True)
    assert g.score == 1.0 and g.passed and g.reason.startswith("negated:")
    g = grade("contains", "an ERROR", value="ERROR", negate=True)
    assert g.score == 0.0 and not g.passed


def test_negate_does_not_turn_an_error_into_a_pass() -> None:
    g = grade("json_schema", "{}", schema={"$ref": "https://example.invalid/x.json"}, negate=True)
    assert g.status == "error" and g.score == 0.0 and not g.passed


def test_grader_raising_becomes_error_status(monkeypatch: pytest.MonkeyPatch) -> None:
    grader = registry.get_grader("contains")

    def boom(params: Any, inp: Any) -> Any:
        raise RuntimeError("kaboom")

    monkeypatch.setattr(grader, "grade", boom)
    g = grade("contains", "x", value="x")
    assert g.status == "error"
    assert (g.score, g.passed) == (0.0, False)
    assert "RuntimeError: kaboom" in g.reason


def test_invalid_params_at_grade_time_become_error() -> None:
    # Loaders validate params; a hand-built Assertion that skips that must not raise.
    g = grade("regex", "x", value="(unclosed")
    assert g.status == "error" and not g.passed
    unknown = grade_output(Assertion(type="nope"), GradeInput(case=_case(), output="x"))
    assert unknown.status == "error" and "unknown assertion type" in unknown.reason


def test_numeric_required_sets_the_pass_minimum() -> None:
    # `passed` follows the gate's own minimum, not the 0.8 pass threshold.
    missing = grade("contains", "y", value="x", required=0.0)
    assert missing.score == 0.0 and missing.passed and missing.required == 0.0
    assert not grade("contains", "y", value="x").passed
    assert not grade("contains", "y", value="x", required=True).passed

"""Seed 000 ``tests.json``: v1 lists (converted to v2) and v2 ``EvalConfigV2``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from eval_pipelines.grading.base import GradeInput
from eval_pipelines.grading.dispatch import grade_output
from eval_pipelines.suite.errors import SpecError, SpecErrors
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.formats.skill_tests.loader import substitute, v1_to_v2

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "core"


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def load_errors(file: Path) -> list[SpecError]:
    with pytest.raises(SpecErrors) as info:
        load_suite(file)
    return info.value.errors


def v2(*cases: dict[str, Any], profile: str = "deterministic", **extra: Any) -> dict[str, Any]:
    return {"version": "2.0", "profile": profile, "testCases": list(cases), **extra}


# ---- v1 --------------------------------------------------------------------

V1 = [
    {"name": "adds", "input": "2+2", "expectedOutput": "4"},
    {"name": "greets", "description": "d", "input": "say hi", "expectedPatterns": ["^hi", "there$"],
     "timeout": 5000},
    {"name": "both", "input": "x", "expectedOutput": "y", "expectedPatterns": ["y"]},
    {"name": "nothing", "input": "free text"},
]


def test_v1_to_v2_conversion() -> None:
    converted = v1_to_v2(V1)
    assert converted["version"] == "2.0" and converted["profile"] == "deterministic"
    cases = converted["testCases"]
    assert [c["id"] for c in cases] == ["tc-001", "tc-002", "tc-003", "tc-004"]
    assert cases[0] == {"id": "tc-001", "name": "adds", "input": {"prompt": "2+2"},
                        "expected": {"output": "4"}, "evaluation": {"strategy": "exact_match"}}
    assert cases[1]["evaluation"] == {"strategy": "regex_match", "timeout": 5000}
    assert cases[1]["description"] == "d"
    assert cases[2]["evaluation"]["strategy"] == "hybrid"
    assert cases[3]["evaluation"] == {}
    # The dict spelling {"tests": [...]} converts the same way.
    assert v1_to_v2({"tests": V1}) == converted


def test_v1_file_loads_through_v2(tmp_path: Path) -> None:
    f = write_json(tmp_path / "calc" / "tests.json", V1[:3])
    suite, warnings = load_suite(f)
    assert suite.format == "skill-tests-v1" and suite.name == "calc"
    assert len(warnings) == 1 and "v1 tests.json converted to v2" in warnings[0]
    adds, greets, both = suite.tests
    assert [(a.type, a.name, a.config) for a in adds.assertions] == [
        ("equals", "exact_match", {"value": "4"})]
    assert [(a.type, a.config) for a in greets.assertions] == [("regex", {"value": ["^hi", "there$"]})]
    assert greets.timeout_ms == 5000 and greets.user_text == "say hi"
    assert [a.type for a in both.assertions] == ["equals", "regex"]
    assert both.metadata["strategy"] == "hybrid"


def test_v1_without_expectations_is_an_error(tmp_path: Path) -> None:
    # Profile deterministic -> exact_match, which needs an expected output.
    errors = load_errors(write_json(tmp_path / "s" / "tests.json", [V1[3]]))
    assert any(e.path == (0, "expected", "output") and "required for strategy exact_match" in e.message
               for e in errors)


def test_v1_missing_input_and_unknown_field(tmp_path: Path) -> None:
    errors = load_errors(write_json(tmp_path / "s" / "tests.json",
                                    [{"name": "a", "expectedOutputs": "x"}]))
    paths = {e.path: e for e in errors}
    assert paths[(0, "input")].message == "required field is missing"
    assert "did you mean 'expectedOutput'?" in paths[(0, "expectedOutputs")].message
    assert paths[(0, "input")].line == 2


# ---- v2 seed examples --------------------------------------------------------

def test_seed_example_a_calculator(tmp_path: Path) -> None:
    f = tmp_path / "calculator" / "eval" / "tests.json"
    f.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "seed000_example_a_tests.json", f)
    suite, warnings = load_suite(f)
    assert warnings == []
    assert suite.format == "skill-tests-v2" and suite.profile == "deterministic"
    assert suite.name == "calculator"  # eval/ folder -> the skill folder's name
    assert suite.settings.timeout_ms == 5000 and suite.settings.fail_fast is True
    assert [t.id for t in suite.tests] == ["tc-001", "tc-002"]
    first, second = suite.tests
    assert first.name == "Basic addition" and first.user_text == "Calculate 2 + 2"
    assert [(a.type, a.config) for a in first.assertions] == [("equals", {"value": "4"})]
    assert [(a.type, a.config) for a in second.assertions] == [("equals", {"value": "27"})]
    assert first.expected_output == "4"
    assert first.metadata == {"difficulty": "easy", "priority": "critical", "strategy": "exact_match"}
    assert first.source_line is not None and first.source_line > 1
    # The loaded assertion grades like the seed says.
    assert grade_output(first.assertions[0], GradeInput(case=first, output=" 4\n")).passed
    assert not grade_output(second.assertions[0], GradeInput(case=second, output="27.0")).passed


def test_seed_example_c_enterprise_json_schema(tmp_path: Path) -> None:
    f = tmp_path / "compliance" / "eval" / "tests.json"
    f.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "seed000_example_c_tests.json", f)
    suite, _ = load_suite(f)
    assert suite.profile == "enterprise" and suite.settings.timeout_ms == 45000
    (case,) = suite.tests
    assert case.id == "compliance-001"
    assert case.tags == ["compliance", "pii", "security"]
    assert case.user_text.startswith("Analyze this document for PII compliance issues\n\nContext:\n")
    assert "fixtures/sample-contract.pdf" in case.user_text
    (assertion,) = case.assertions
    assert assertion.type == "json_schema"
    assert assertion.config["schema"]["required"] == ["hasPII", "findings", "riskLevel"]
    good = '{"hasPII": true, "findings": [{"type": "email", "location": "p2", "severity": "low"}], "riskLevel": "low"}'
    assert grade_output(assertion, GradeInput(case=case, output=good)).passed
    bad = grade_output(assertion, GradeInput(case=case, output='{"hasPII": true, "findings": [{"type": "email", '
                                                                 '"location": "p2", "severity": "huge"}], '
                                                                 '"riskLevel": "low"}'))
    assert [e["path"] for e in bad.details["schema_errors"]] == ["$.findings[0].severity"]


# ---- profiles, variables, strategies ---------------------------------------

@pytest.mark.parametrize("profile,expected,types", [
    ("deterministic", {"output": "4"}, ["equals"]),
    ("deterministic", {"jsonSchema": {"type": "object"}}, ["json_schema"]),
    ("structured", {"jsonSchema": {"type": "object"}}, ["json_schema"]),
    ("enterprise", {"output": "4", "patterns": ["\\d"], "jsonSchema": {"type": "integer"}},
     ["equals", "regex", "json_schema"]),
])
def test_profile_default_strategy(tmp_path: Path, profile: str, expected: dict[str, Any],
                                  types: list[str]) -> None:
    f = write_json(tmp_path / "s" / "tests.json",
                   v2({"id": "c1", "name": "n", "input": {"prompt": "p"}, "expected": expected}, profile=profile))
    (tmp_path / "s" / "check.py").write_text("print('{\"score\": 1}')\n")  # a missing script is refused
    suite, _ = load_suite(f)
    assert [a.type for a in suite.tests[0].assertions] == types


def test_creative_profile_defaults_to_the_seed_rubric(tmp_path: Path) -> None:
    f = write_json(tmp_path / "s" / "tests.json",
                   v2({"id": "c1", "name": "n", "input": {"prompt": "p"}, "expected": {"output": "x"}},
                      profile="creative"))
    suite, _ = load_suite(f)
    (judge,) = suite.tests[0].assertions
    assert judge.type == "llm_judge"
    rubric = judge.config["rubric"]
    assert [(c["name"], c["weight"]) for c in rubric["criteria"]] == [
        ("completeness", 0.30), ("coherence", 0.25), ("professionalism", 0.25), ("accuracy", 0.20)]
    assert rubric["passingThreshold"] == 0.7


@pytest.mark.parametrize("profile, expected, types", [
    ("flexible", {"output": "a summary", "semanticThreshold": 0.75}, ["semantic_sim"]),
    ("enterprise", {"output": "x", "customScript": "check.py"}, ["equals", "code_judge"]),
])
def test_flexible_and_enterprise_profiles(tmp_path: Path, profile: str, expected: dict, types: list) -> None:
    f = write_json(tmp_path / "s" / "tests.json",
                   v2({"id": "c1", "name": "n", "input": {"prompt": "p"}, "expected": expected}, profile=profile))
    (tmp_path / "s" / "check.py").write_text("print('{\"score\": 1}')\n")  # a missing script is refused
    suite, _ = load_suite(f)
    assert [a.type for a in suite.tests[0].assertions] == types
    if profile == "flexible":
        assert suite.tests[0].assertions[0].config["threshold"] == 0.75


def test_custom_strategy_needs_a_script(tmp_path: Path) -> None:
    errors = load_errors(write_json(tmp_path / "s" / "tests.json", v2(
        {"id": "c1", "name": "n", "input": {"prompt": "p"}, "expected": {}, "evaluation": {"strategy": "custom"}})))
    assert any(e.path == ("testCases", 0, "expected", "customScript") for e in errors)


def test_hybrid_weights_apply_to_assertions(tmp_path: Path) -> None:
    f = write_json(tmp_path / "s" / "tests.json", v2({
        "id": "c1", "name": "n", "input": {"prompt": "p"},
        "expected": {"output": "4", "patterns": ["4"]},
        "evaluation": {"strategy": "hybrid", "weights": {"exact_match": 3, "regex_match": 1}}}))
    suite, _ = load_suite(f)
    assert [(a.type, a.weight) for a in suite.tests[0].assertions] == [("equals", 3.0), ("regex", 1.0)]


def test_variable_substitution(tmp_path: Path) -> None:
    f = write_json(tmp_path / "s" / "tests.json", v2({
        "id": "c1", "name": "n",
        "input": {"prompt": "Hello {{ who }} from {{place}}; keep {{missing}}",
                  "variables": {"who": "Ann", "place": "Oslo"}},
        "expected": {"output": "x"}}))
    suite, _ = load_suite(f)
    assert suite.tests[0].user_text == "Hello Ann from Oslo; keep {{missing}}"


def test_substitute_is_plain_text_replacement() -> None:
    assert substitute("{{a}}{{a}} {{ b.c }}", {"a": "1", "b.c": "{{a}}"}) == "11 {{a}}"
    assert substitute("{{__import__('os')}}", {}) == "{{__import__('os')}}"


def test_unknown_strategy_error(tmp_path: Path) -> None:
    f = write_json(tmp_path / "s" / "tests.json", v2(
        {"id": "ok", "name": "n", "input": {"prompt": "p"}, "expected": {"output": "x"}},
        {"id": "bad", "name": "n2", "input": {"prompt": "p"}, "expected": {"output": "x"},
         "evaluation": {"strategy": "fuzzy"}}))
    errors = load_errors(f)
    assert len(errors) == 1
    err = errors[0]
    assert err.path == ("testCases", 1, "evaluation", "strategy")
    assert err.message == "unknown strategy 'fuzzy'"
    assert err.expected is not None and err.expected.startswith("one of exact_match, regex_match")
    assert err.line is not None
    assert str(err).startswith(f"{f}:{err.line}: testCases[1].evaluation.strategy: unknown strategy 'fuzzy' (expected one of")


def test_v2_structural_errors(tmp_path: Path) -> None:
    f = write_json(tmp_path / "s" / "tests.json", {
        "version": "3.0", "profile": "wild", "testCasez": [],
        "testCases": [{"name": "no id", "input": {"prompt": "p"}, "expected": {"output": "x"}},
                      {"id": "a", "name": "n", "input": {}}]})
    errors = load_errors(f)
    by_path = {e.path: e.message for e in errors}
    assert by_path[("version",)] == "unsupported version '3.0'"
    assert by_path[("profile",)] == "unknown profile 'wild'"
    assert "did you mean 'testCases'?" in by_path[("testCasez",)]
    assert by_path[("testCases", 0, "id")] == "required field is missing"
    assert by_path[("testCases", 1, "input", "prompt")] == "required field is missing"


def test_v2_invalid_regex_pattern_reported_with_line(tmp_path: Path) -> None:
    f = write_json(tmp_path / "s" / "tests.json", v2(
        {"id": "a", "name": "n", "input": {"prompt": "p"}, "expected": {"patterns": ["(bad"]},
         "evaluation": {"strategy": "regex_match"}}))
    errors = load_errors(f)
    err = next(e for e in errors if "invalid regular expression" in e.message)
    assert err.path == ("testCases", 0, "expected", "patterns")
    lines = f.read_text().splitlines()
    assert '"patterns"' in lines[err.line - 1]


def test_v2_duplicate_ids(tmp_path: Path) -> None:
    case = {"id": "same", "name": "n", "input": {"prompt": "p"}, "expected": {"output": "x"}}
    errors = load_errors(write_json(tmp_path / "s" / "tests.json", v2(case, dict(case))))
    assert any(e.message == "duplicate test id 'same'" for e in errors)


def test_invalid_json_reports_line(tmp_path: Path) -> None:
    f = tmp_path / "s" / "tests.json"
    f.parent.mkdir()
    f.write_text('{\n  "version": "2.0",\n  "testCases": [\n    {"id": "a",}\n  ]\n}\n')
    errors = load_errors(f)
    assert errors[0].line == 4 and errors[0].message.startswith("invalid JSON")

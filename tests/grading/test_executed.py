"""Graders that execute code: ``code_judge`` (judge scripts) and ``function_output``.

Judge scripts and model answers live in tests/fixtures/executed/. Everything
goes through ``grade_output`` (the same path the engine uses), so a grader
that raised would show up here as a ``grader failed`` error grade.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from eval_pipelines.grading.graders._typescript import typescript_runner

from eval_pipelines.grading.base import GradeInput
from eval_pipelines.grading.graders.function_output import compare, extract_code
from eval_pipelines.grading.registry import ValidationError, canonical_type, parse_params
from eval_pipelines.grading.dispatch import Grade, grade_output
from eval_pipelines.suite.models import Assertion, Message, TestCase

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "executed"
ANSWERS = FIXTURES / "answers"
FACTORIAL_CASES = [  # seed 003, cap-codegen-001
    {"args": [5], "expected": 120},
    {"args": [0], "expected": 1},
    {"args": [1], "expected": 1},
    {"args": [10], "expected": 3628800},
]


def make_case(**fields: Any) -> TestCase:
    fields.setdefault("input", [Message(content="Say hello to the world")])
    return TestCase(id="t", **fields)


def grade(type_: str, config: dict[str, Any], output: str, *, suite_dir: Path | None = FIXTURES,
          case: TestCase | None = None) -> Grade:
    inp = GradeInput(case=case or make_case(), output=output, suite_dir=suite_dir)
    return grade_output(Assertion(type=type_, config=config), inp)


def judge(script: str, output: str = "Hello world", **config: Any) -> Grade:
    return grade("code_judge", {"script": script, **config}, output)


# ---------------------------------------------------------------- code_judge


def test_names_resolve_to_the_two_graders() -> None:
    for name in ("code_judge", "code-judge", "custom", "script"):
        assert canonical_type(name) == "code_judge"
    for name in ("function_output", "functional", "function"):
        assert canonical_type(name) == "function_output"


def test_python_judge_passes_and_receives_the_case() -> None:
    case = make_case(expected_output="Hello!", criteria="greets", metadata={"lang": "en"})
    result = grade("code_judge", {"script": "judges/keyword_judge.py", "config": {"keyword": "hello"}},
                   "Hello world", case=case)
    assert result.status == "graded", result.reason
    assert result.score == 1.0 and result.passed
    assert result.reason == "keyword 'hello' found"
    seen = result.details["details"]
    assert seen == {"keyword": "hello", "test_id": "t", "expected": "Hello!",
                    "input": "Say hello to the world", "metadata": {"lang": "en"}}
    assert result.details["reasoning"] == "keyword 'hello' found"
    assert result.details["isolation"]
    assert result.details["duration_ms"] > 0


def test_python_judge_fails() -> None:
    result = judge("judges/keyword_judge.py", "Goodbye", config={"keyword": "hello"})
    assert result.status == "graded"
    assert result.score == 0.0 and not result.passed
    assert "missing" in result.reason


def test_logs_before_the_json_line_are_ignored() -> None:
    result = judge("judges/noisy_judge.py")
    assert result.status == "graded", result.reason
    assert result.score == 0.5
    assert result.reason == "half right"


def test_nonzero_exit_is_an_error_with_the_stderr_tail() -> None:
    result = judge("judges/crashing_judge.py")
    assert result.status == "error" and not result.passed
    assert "exited with 3" in result.reason
    assert "JUDGE-CRASH: rubric file is missing" in result.reason
    assert result.details["stderr_tail"].endswith("JUDGE-CRASH: rubric file is missing")


def test_invalid_json_is_an_error() -> None:
    result = judge("judges/invalid_json_judge.py")
    assert result.status == "error"
    assert "not JSON" in result.reason and "score: 1.0" in result.reason


def test_score_out_of_range_is_an_error() -> None:
    result = judge("judges/out_of_range_judge.py")
    assert result.status == "error"
    assert "outside [0, 1]" in result.reason


def test_judge_past_its_timeout_is_an_error() -> None:
    started = time.monotonic()
    result = judge("judges/slow_judge.py", timeout_ms=1000)
    assert time.monotonic() - started < 60  # the slow judge sleeps far longer; generous for a loaded machine
    assert result.status == "error"
    assert "timed out after 1 s" in result.reason


def test_passed_disagreeing_with_score_keeps_the_score() -> None:
    result = judge("judges/disagreeing_judge.py")
    assert result.status == "graded"
    assert result.score == pytest.approx(0.3) and not result.passed
    assert result.details["judge_passed"] is True
    assert result.details["score_passed"] is False


def test_judge_sees_only_its_own_file_and_no_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-LEAK-123")
    result = judge("judges/env_judge.py")
    assert result.status == "graded", result.reason
    seen = result.details["details"]
    assert seen["files"] == ["env_judge.py"]
    assert set(seen["env"]) <= {"PATH", "LANG", "HOME", "TMPDIR", "PWD"}
    assert "sk-test-LEAK-123" not in json.dumps(seen)
    assert not Path(seen["cwd"]).exists()


@pytest.mark.skipif(shutil.which("node") is None,
                    reason="`node` is not on PATH, so JavaScript judges cannot run")
def test_javascript_judge_runs_with_node() -> None:
    result = judge("judges/length_judge.js", "hello world", config={"target": 11})
    assert result.status == "graded", result.reason
    assert result.score == 1.0 and result.passed
    assert result.details["details"] == {"length": 11, "runtime": "node"}
    far = judge("judges/length_judge.js", "hi", config={"target": 11})
    assert far.status == "graded" and far.score == pytest.approx(2 / 11)


def test_script_path_is_relative_to_the_suite_dir(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # not relative to the current directory
    for script in ("judges/keyword_judge.py", "./judges/keyword_judge.py",
                   str(FIXTURES / "judges" / "keyword_judge.py")):
        result = judge(script, config={"keyword": "world"})
        assert result.status == "graded" and result.score == 1.0, (script, result.reason)
    suite = tmp_path / "suite"
    (suite / "checks").mkdir(parents=True)
    shutil.copy(FIXTURES / "judges" / "keyword_judge.py", suite / "checks" / "kw.py")
    result = grade("code_judge", {"script": "checks/kw.py", "config": {"keyword": "world"}},
                   "Hello world", suite_dir=suite)
    assert result.status == "graded" and result.score == 1.0


def test_missing_script_is_an_error_naming_the_path() -> None:
    result = judge("judges/no_such_judge.py")
    assert result.status == "error"
    assert "judge script not found" in result.reason
    assert str(FIXTURES / "judges" / "no_such_judge.py") in result.reason


def test_typescript_script_runs_with_a_runtime_or_names_the_one_needed() -> None:
    """Seed 001 writes `script: ./check.ts`: node 22.6+ strips its types and runs it; on an
    older node the grade says so (and the suite is refused at load: test_seeds.py)."""
    result = judge("judges/verify.ts")
    if typescript_runner(".ts") is None:
        assert result.status == "error"
        assert "no TypeScript runtime to run a .ts judge" in result.reason
    else:
        assert result.status == "graded", result.reason


@pytest.mark.parametrize("command", [
    ["python", "judges/keyword_judge.py"],
    "python judges/keyword_judge.py",
])
def test_command_form_copies_referenced_files(command: Any) -> None:
    result = grade("code_judge", {"command": command, "config": {"keyword": "hello"}}, "Hello world")
    assert result.status == "graded", result.reason
    assert result.score == 1.0


def test_command_with_missing_program_is_an_error() -> None:
    result = grade("code_judge", {"command": ["no-such-runtime-7f3a", "judges/verify.ts"]}, "x")
    assert result.status == "error"
    assert "no-such-runtime-7f3a" in result.reason and "not found" in result.reason


def test_exactly_one_of_script_or_command() -> None:
    with pytest.raises(ValidationError, match="exactly one of `script` or `command`"):
        parse_params("code_judge", {"script": "a.py", "command": ["python", "a.py"]})
    with pytest.raises(ValidationError, match="exactly one of `script` or `command`"):
        parse_params("code_judge", {})
    with pytest.raises(ValidationError):
        parse_params("code_judge", {"script": "a.py", "timeout_ms": 0})


# ------------------------------------------------------------ function_output


def function_output(answer: str, cases: list[dict[str, Any]] = FACTORIAL_CASES, **config: Any) -> Grade:
    config = {"function_name": "factorial", "executor": "python", "test_cases": cases,
              "timeout_per_case": 5, "sandbox": True, **config}
    return grade("function_output", config, answer, suite_dir=None)


def test_seed_factorial_correct_answer_passes_all_cases() -> None:
    result = function_output((ANSWERS / "factorial_correct.md").read_text())
    assert result.status == "graded", result.reason
    assert result.score == 1.0 and result.passed
    assert result.reason == "4/4 test cases passed"
    cases = result.details["cases"]
    assert [c["case"] for c in cases] == [0, 1, 2, 3]
    assert all(c["passed"] and c["error"] is None for c in cases)
    assert [c["output"] for c in cases] == [120, 1, 1, 3628800]
    assert [c["expected"] for c in cases] == [120, 1, 1, 3628800]
    assert result.details["isolation"]


def test_wrong_factorial_scores_partially() -> None:
    result = function_output((ANSWERS / "factorial_wrong.py").read_text())
    assert result.status == "graded"
    assert result.score == 0.5 and not result.passed
    cases = result.details["cases"]
    assert [c["passed"] for c in cases] == [False, True, True, False]
    assert cases[0]["output"] == 24 and cases[0]["expected"] == 120
    assert cases[0]["error"] is None


def test_code_is_taken_from_the_fenced_block() -> None:
    answer = (ANSWERS / "factorial_correct.md").read_text()
    code = extract_code(answer, "factorial")
    assert code.startswith("def factorial(n):") and "Here is" not in code
    assert extract_code("def f():\n    return 1\n", "f") == "def f():\n    return 1\n"
    unlabeled = "Try:\n```\ndef f(x):\n    return x\n```\n"
    assert extract_code(unlabeled, "f") == "def f(x):\n    return x\n"


def test_infinite_loop_is_a_per_case_timeout() -> None:
    started = time.monotonic()
    result = function_output((ANSWERS / "factorial_infinite.md").read_text(),
                             FACTORIAL_CASES[:2], timeout_per_case=1)
    assert time.monotonic() - started < 60  # two 1 s timeouts, not a hang; generous for a loaded machine
    assert result.status == "graded"
    assert result.score == 0.0
    for case in result.details["cases"]:
        assert not case["passed"]
        assert case["error"] == "timed out after 1 s"


@pytest.mark.parametrize("answer, error", [
    ("def fact(n):\n    return 1\n", "the code defines no function 'factorial'"),
    ("def factorial(n):\n    return 1 / 0\n", "raised ZeroDivisionError: division by zero"),
    ("def factorial(n:\n", "code failed to load: SyntaxError"),
    ("import os\ndef factorial(n):\n    print('not json', flush=True)\n    os._exit(0)\n",
     "harness printed no result line; last stdout line: 'not json'"),
    ("import sys\ndef factorial(n):\n    sys.exit(4)\n", "raised SystemExit: 4"),
])
def test_broken_code_fails_cases_with_an_error(answer: str, error: str) -> None:
    result = function_output(answer, FACTORIAL_CASES[:1])
    assert result.status == "graded"
    assert result.score == 0.0
    assert result.details["cases"][0]["error"].startswith(error)
    assert error in result.reason


def test_printing_code_still_returns_its_result() -> None:
    answer = "def factorial(n):\n    print('computing', n)\n    return 120 if n == 5 else 1\n"
    result = function_output(answer, FACTORIAL_CASES[:3])
    assert result.score == 1.0


def test_comparators_end_to_end() -> None:
    answer = "def f(x, scale=1):\n    return {'pi': 3.14159265 * scale, 'items': {3, 1, 2}}\n"
    cases = [
        {"args": [1], "expected": {"pi": 3.1415927, "items": [1, 2, 3]}, "comparator": "approx",
         "tolerance": 1e-6},
        {"args": [1], "kwargs": {"scale": 2}, "expected": {"items": [1, 2, 3]}, "comparator": "contains"},
        {"args": [1], "expected": {"pi": 3.0, "items": [1, 2, 3]}, "comparator": "equals"},
    ]
    result = grade("function_output", {"function_name": "f", "test_cases": cases}, answer)
    assert [c["passed"] for c in result.details["cases"]] == [True, True, False]


def test_compare() -> None:
    assert compare([3, 1, 2], [1, 2, 3], "set_equals")
    assert compare([[1], [2]], [[2], [1]], "set_equals")
    assert not compare([1, 2], [1, 2, 3], "set_equals")
    assert compare("hello world", "world", "contains")
    assert compare([1, 2, 3], 2, "contains")
    assert compare([1, 2, 3], [3, 1], "contains")
    assert compare(0.1 + 0.2, 0.3, "approx")
    assert not compare(0.31, 0.3, "approx", 1e-6)
    assert compare(0.31, 0.3, "approx", 0.05)
    assert compare([1, 2], [1, 2], "equals")
    assert not compare(True, 1, "equals")
    assert not compare(1, True, "equals")


def test_sandbox_false_is_rejected_at_validation() -> None:
    config = {"function_name": "factorial", "test_cases": FACTORIAL_CASES, "sandbox": False}
    with pytest.raises(ValidationError, match="untrusted code never runs in-process"):
        parse_params("function_output", config)
    result = grade("function_output", config, "def factorial(n):\n    return 1\n")
    assert result.status == "error"
    assert "untrusted code never runs in-process" in result.reason


@pytest.mark.skipif(shutil.which("node") is None,
                    reason="`node` is not on PATH, so JavaScript function_output cannot run")
def test_function_output_runs_javascript_with_node() -> None:
    config = {"function_name": "factorial", "executor": "javascript", "test_cases": FACTORIAL_CASES}
    declared = "```javascript\nfunction factorial(n) { return n <= 1 ? 1 : n * factorial(n - 1); }\n```"
    result = grade("function_output", config, declared)
    assert result.status == "graded" and result.score == 1.0, result.reason
    assert result.details["executor"] == "javascript"
    arrow = "```js\nconst factorial = async (n) => (n <= 1 ? 1 : n * (await factorial(n - 1)));\n```"
    assert grade("function_output", config, arrow).score == 1.0
    exported = "module.exports = { factorial: (n) => 1 };"
    partial = grade("function_output", config, exported)
    assert partial.status == "graded" and 0 < partial.score < 1
    # Python code under the JavaScript executor fails to load: it is never run as Python.
    python = grade("function_output", config, "def factorial(n):\n    return 1\n")
    assert python.score == 0 and "SyntaxError" in python.reason


def test_function_output_javascript_without_node_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    config = {"function_name": "factorial", "executor": "javascript", "test_cases": FACTORIAL_CASES}
    result = grade("function_output", config, "function factorial(n) { return 1; }")
    assert result.status == "error" and "needs `node` on PATH" in result.reason


def test_params_validation() -> None:
    with pytest.raises(ValidationError):
        parse_params("function_output", {"function_name": "not a name", "test_cases": FACTORIAL_CASES})
    with pytest.raises(ValidationError):
        parse_params("function_output", {"function_name": "f", "test_cases": []})
    with pytest.raises(ValidationError):  # seed 003 names python and javascript executors only
        parse_params("function_output", {"function_name": "f", "executor": "ruby",
                                         "test_cases": FACTORIAL_CASES})
    assert parse_params("function_output", {"function_name": "f", "executor": "node",
                                            "test_cases": FACTORIAL_CASES}).executor == "javascript"
    with pytest.raises(ValidationError):  # expected is required
        parse_params("function_output", {"function_name": "f", "test_cases": [{"args": [1]}]})
    # 003's spelling inside a `code` grader's config is accepted as is.
    parse_params("function_output", {"method": "function_output", "function_name": "solve",
                                      "test_cases": [{"args": [1, 2], "kwargs": {}, "expected": 3,
                                                      "comparator": "equals"}],
                                      "timeout_per_case": 5, "sandbox": True})

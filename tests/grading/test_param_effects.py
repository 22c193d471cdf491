"""Assertion parameters whose effect no other test showed (tests/formats/field_contract.yaml names
these): each test flips the parameter and shows the grade change, or shows the stored
"accepted, not used" warning for a parameter a grader cannot apply."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest

from eval_pipelines.grading.base import Grade, GradeInput, Measurements
from eval_pipelines.grading.dispatch import agrade_output, grade_output
from eval_pipelines.grading.judge import OpenAIJudge
from eval_pipelines.run.targets.config import OpenAITargetConfig
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.suite.models import Assertion, Message, TestCase
from tests.support.fake_openai import FakeOpenAIServer


def case(**fields: Any) -> TestCase:
    fields.setdefault("input", [Message(content="Screen: Huawei")])
    return TestCase(id="t1", **fields)


def grade(type_: str, output: str, *, measurements: Measurements | None = None,
          trace: list[dict[str, Any]] | None = None, test: TestCase | None = None, **config: Any) -> Grade:
    inp = GradeInput(case=test or case(), output=output, measurements=measurements or Measurements(),
                     trace=trace or [])
    return grade_output(Assertion(type=type_, config=config), inp)


@pytest.mark.parametrize(("type_", "value", "output"), [
    ("contains_any", ["DENIED"], "status: denied"),
    ("starts_with", "DENIED", "denied: on the list"),
    ("ends_with", "DENIED", "the answer is denied"),
    ("icontains", "DENIED", "status: denied"),
])
def test_case_sensitive_decides_the_text_match(type_: str, value: Any, output: str) -> None:
    assert grade(type_, output, value=value, case_sensitive=False).passed
    assert not grade(type_, output, value=value, case_sensitive=True).passed


def test_must_include_case_sensitive() -> None:
    assert grade("must_include", "uses postgresql 14+", must_include=["PostgreSQL"]).passed
    assert not grade("must_include", "uses postgresql 14+", must_include=["PostgreSQL"], case_sensitive=True).passed


def test_execution_metrics_token_cost_and_duration_limits() -> None:
    used = Measurements(latency_ms=1500, prompt_tokens=80, completion_tokens=40, cost_usd=0.02)
    within = grade("execution_metrics", "x", measurements=used, max_tokens=200, max_cost_usd=0.05,
                   max_duration_ms=2000)
    assert within.score == 1.0
    over = grade("execution_metrics", "x", measurements=used, max_tokens=100, max_cost_usd=0.01,
                 max_duration_ms=1000)
    assert over.score == 0.0 and {"tokens 120 > 100", "cost_usd 0.02 > 0.01", "duration_ms 1500 > 1000"} == set(
        over.details["failures"])


def test_token_usage_max_output() -> None:
    used = Measurements(prompt_tokens=500, completion_tokens=60)
    assert grade("token_usage", "x", measurements=used, max_output=100).passed
    failed = grade("token_usage", "x", measurements=used, max_output=50)
    assert not failed.passed and "output 60 > 50" in failed.reason


def test_field_accuracy_aggregation() -> None:
    output = json.dumps({"number": 42, "vendor": "Initech"})
    fields = [{"path": "number", "expected": 42}, {"path": "vendor", "expected": "ACME"}]
    assert grade("field_accuracy", output, fields=fields).score == 0.5
    assert grade("field_accuracy", output, fields=fields, aggregation="all_or_nothing").score == 0.0


def test_tool_trajectory_args_match() -> None:
    trace = [{"tool": "search", "args": {"query": "huawei", "limit": 5}}]
    expected = [{"tool": "search", "args": {"query": "huawei"}}]
    assert grade("tool_trajectory", "x", trace=trace, expected=expected).passed  # subset by default
    assert not grade("tool_trajectory", "x", trace=trace, expected=expected, args_match="exact").passed
    other = [{"tool": "search", "args": {"query": "zte"}}]
    assert not grade("tool_trajectory", "x", trace=trace, expected=other).passed
    assert grade("tool_trajectory", "x", trace=trace, expected=other, args_match="ignore").passed


HOG = "def grab(n):\n    block = bytearray(n * 1024 * 1024)\n    return len(block) // (1024 * 1024)\n"


@pytest.mark.slow  # sandboxed subprocesses
def test_memory_mb_limits_function_output_and_code_judge(tmp_path: Path) -> None:
    cases = [{"args": [300], "expected": 300}]
    roomy = grade("function_output", HOG, function_name="grab", test_cases=cases, memory_mb=1024)
    assert roomy.score == 1.0, roomy.reason
    tight = grade("function_output", HOG, function_name="grab", test_cases=cases, memory_mb=128)
    assert tight.score == 0.0 and "MemoryError" in tight.reason

    judge = tmp_path / "hog_judge.py"
    judge.write_text(dedent("""\
        import json, sys
        json.load(sys.stdin)
        block = bytearray(300 * 1024 * 1024)
        print(json.dumps({"score": 1.0, "reasoning": "allocated"}))
    """))
    inp = GradeInput(case=case(), output="x", suite_dir=tmp_path)
    ok = grade_output(Assertion(type="code_judge", config={"script": "hog_judge.py", "memory_mb": 1024}), inp)
    assert ok.status == "graded" and ok.score == 1.0, ok.reason
    starved = grade_output(Assertion(type="code_judge", config={"script": "hog_judge.py", "memory_mb": 128}), inp)
    assert starved.status == "error"


def judged(server: FakeOpenAIServer, type_: str, output: str, **config: Any) -> Grade:
    async def go() -> Grade:
        judge = OpenAIJudge(OpenAITargetConfig(name="judge", model="judge-model", max_retries=0),
                            api_key="sk-test", base_url=server.base_url)
        try:
            return await agrade_output(Assertion(type=type_, config=config), GradeInput(
                case=case(criteria="names the list"), output=output, judge=judge))
        finally:
            await judge.aclose()

    return asyncio.run(go())


def test_judge_temperature_and_agent_judge_threshold(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.responder = lambda body: json.dumps(
        {"score": 0.7, "passed": True, "reasoning": "ok", "scores": {"listed": 0.7}})
    judged(fake_openai, "llm_judge", "DENIED", temperature=0.4)
    assert fake_openai.requests[-1]["temperature"] == 0.4
    judged(fake_openai, "rubrics", "DENIED", criteria=[{"id": "listed", "outcome": "names the list"}],
           temperature=0.3)
    assert fake_openai.requests[-1]["temperature"] == 0.3
    audit = "Audit the answer to {input}: {criteria}"
    low = judged(fake_openai, "agent_judge", "DENIED", prompt=audit, temperature=0.6, threshold=0.9)
    assert fake_openai.requests[-1]["temperature"] == 0.6
    high = judged(fake_openai, "agent_judge", "DENIED", prompt=audit, threshold=0.5)
    assert not low.passed and high.passed  # the same 0.7 fails a 0.9 threshold, passes a 0.5 one


def test_grader_params_that_cannot_apply_are_stored_warnings(tmp_path: Path) -> None:
    suite = tmp_path / "eval.yaml"
    suite.write_text(dedent("""\
        tests:
          - id: graded-by-model
            input: hi
            assert:
              - {type: model, rubric: polite, model: claude-3-5-sonnet, max_tokens: 500}
          - id: reviewed
            input: hi
            assert:
              - type: composite
                assert: [{type: human, interface: cli, time_limit_minutes: 10, blind_evaluation: true}]
    """))
    _, warnings = load_suite(suite)
    named = sorted(w.split(":")[1].strip() for w in warnings)
    assert named == ["assert human.blind_evaluation", "assert human.interface", "assert human.time_limit_minutes",
                     "assert model.max_tokens", "assert model.model"]
    assert all(w.startswith("accepted, not used: ") and "first 'graded-by-model'" in w
               for w in warnings if "model." in w)


@pytest.mark.skipif(shutil.which("node") is None, reason="`node` is not on PATH")
def test_function_output_executor_spellings() -> None:
    cases = [{"args": [2], "expected": 4}]
    for executor in ("javascript", "js", "node"):
        g = grade("function_output", "const twice = (n) => n * 2;", function_name="twice", executor=executor,
                  test_cases=cases)
        assert g.score == 1.0 and g.details["executor"] == "javascript", g.reason


def test_structural_allow_field_reordering_and_json_schema_allow_fence() -> None:
    base = {"steps": [{"id": 1}, {"id": 2}], "a": 1, "b": 2}
    moved = json.dumps({"b": 2, "a": 1, "steps": [{"id": 1}, {"id": 2}]})
    assert grade("structural", moved, baseline=base).passed
    strict = grade("structural", moved, baseline=base, allow_field_reordering=False)
    assert not strict.passed and "field order changed" in strict.reason
    fenced = '```json\n{"total": 3}\n```'
    schema = {"type": "object", "required": ["total"]}
    assert grade("json_schema", fenced, schema=schema, allow_fence=True).passed
    assert not grade("json_schema", fenced, schema=schema, allow_fence=False).passed


@pytest.mark.slow  # a sandboxed subprocess
def test_code_judge_args_reach_the_script(tmp_path: Path) -> None:
    (tmp_path / "argv_judge.py").write_text(dedent("""\
        import json, sys
        json.load(sys.stdin)
        print(json.dumps({"score": 1.0 if sys.argv[1:] == ["--strict", "7"] else 0.0, "reasoning": str(sys.argv[1:])}))
    """))
    inp = GradeInput(case=case(), output="x", suite_dir=tmp_path)
    with_args = Assertion(type="code_judge", config={"script": "argv_judge.py", "args": ["--strict", "7"]})
    assert grade_output(with_args, inp).score == 1.0
    assert grade_output(Assertion(type="code_judge", config={"script": "argv_judge.py"}), inp).score == 0.0


def test_regression_alpha_and_min_effect_reach_the_policy(tmp_path: Path) -> None:
    from eval_pipelines.analysis.metrics import TrialResult
    from eval_pipelines.analysis.regression import RegressionPolicy, compare

    def results(failing: int) -> list[TrialResult]:
        return [TrialResult(f"t{i:03d}", "m", 0, "graded", "fail" if i < failing else "pass",
                            0.0 if i < failing else 1.0, None, None, None, None) for i in range(400)]

    regressed = {}
    for alpha in (0.05, 0.0001):
        suite = tmp_path / f"eval-{alpha}.yaml"
        suite.write_text(f"regression: {{alpha: {alpha}, min_effect: 0.02}}\ntests:\n  - {{id: a, input: hi}}\n")
        loaded, _ = load_suite(suite)
        policy = RegressionPolicy(alpha=loaded.regression.alpha, min_effect=loaded.regression.min_effect)
        (target,) = compare(results(12), results(0), policy).targets
        regressed[alpha] = target.regressed
    # 12 of 400 cases flip (p = 2^-12 = 0.00024): significant at 0.05, not at 0.0001.
    assert regressed == {0.05: True, 0.0001: False}


def test_regression_effect_rule_case_fdr_and_case_labels_reach_the_policy(tmp_path: Path) -> None:
    """The suite's regression settings, read as the regression stage reads them, change its verdicts."""
    from eval_pipelines.analysis.metrics import TrialResult
    from eval_pipelines.analysis.regression import compare
    from eval_pipelines.pipeline.stages import regression_policy

    def trials(spec: dict[str, tuple[int, int]]) -> list[TrialResult]:
        return [TrialResult(t, "m", k, "graded", "pass" if k < passes else "fail", 1.0 if k < passes else 0.0,
                            None, None, None, None)
                for t, (passes, n) in spec.items() for k in range(n)]

    def policy(settings: str):
        suite = tmp_path / "eval.yaml"
        suite.write_text(f"regression: {{{settings}}}\ntests:\n  - {{id: a, input: hi}}\n")
        loaded, _ = load_suite(suite)
        return regression_policy(loaded.regression)

    # 20 of 200 cases break (5/5 -> 0/5): a 10-point drop whose interval reaches above -8 points.
    base = trials({f"t{i:03d}": (5, 5) for i in range(200)})
    cur = trials({f"t{i:03d}": (0 if i < 20 else 5, 5) for i in range(200)})
    lenient = compare(cur, base, policy("min_effect: 0.08, effect_rule: plausible")).targets[0]
    strict = compare(cur, base, policy("min_effect: 0.08, effect_rule: certain")).targets[0]
    assert lenient.regressed and not strict.regressed

    # The same 20 breaks among cases at 3/5: labelled at case_fdr 0.10 (q = 0.04), not at 0.03.
    base = trials({f"t{i:03d}": (5, 5) if i < 20 else (3, 5) for i in range(200)})
    cur = trials({f"t{i:03d}": (0, 5) if i < 20 else (3, 5) for i in range(200)})
    labelled = {fdr: sum(c.change == "regressed" for c in compare(cur, base, policy(f"case_fdr: {fdr}")).cases)
                for fdr in (0.10, 0.03)}
    assert labelled[0.10] > 0 and labelled[0.03] == 0

    # Nine complete breaks and one complete rise at 10 trials: BH labels them, the mirror cannot.
    before = trials({f"t{i:03d}": (10, 10) if i < 9 else (0, 10) if i == 9 else (5, 10) for i in range(100)})
    after = trials({f"t{i:03d}": (0, 10) if i < 9 else (10, 10) if i == 9 else (5, 10) for i in range(100)})
    by_rule = {rule: sum(c.change == "regressed" for c in compare(after, before, policy(f"case_labels: {rule}")).cases)
               for rule in ("bh", "mirror")}
    assert by_rule["bh"] == 9 and by_rule["mirror"] == 0

    # 10 breaks 5/5 -> 0/5 and 10 breaks 4/5 -> 0/5 among cases steady at 4/5: BH labels the first 10, the
    # discrete BH (only the tests that can reach p = 0.024 count) all 20.
    before = trials({f"t{i:03d}": (5, 5) if i < 10 else (4, 5) for i in range(200)})
    after = trials({f"t{i:03d}": (0, 5) if i < 20 else (4, 5) for i in range(200)})
    by_rule = {rule: sum(c.change == "regressed" for c in compare(after, before, policy(f"case_labels: {rule}")).cases)
               for rule in ("auto", "bh", "dbh")}
    assert by_rule == {"auto": 10, "bh": 10, "dbh": 20}

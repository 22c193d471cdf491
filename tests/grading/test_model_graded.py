"""Model-graded graders against the local OpenAI-compatible server (no client mocking).

Every grade goes through ``agrade_output`` with a real ``OpenAIJudge`` talking
HTTP to ``fake_openai``; replies are scripted with ``responder``/``answers`` and
faults. The judge is created and closed inside one ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from eval_pipelines.grading import registry
from eval_pipelines.grading.graders._judging import NO_JUDGE_REASON, calibrate, render
from eval_pipelines.grading.graders.agent_judge import glob_regex
from eval_pipelines.grading.base import GradeInput
from eval_pipelines.grading.graders.llm_judge import CREATIVE_PROFILE_RUBRIC
from eval_pipelines.grading.dispatch import Grade, agrade_output
from eval_pipelines.grading.judge import OpenAIJudge
from eval_pipelines.suite.models import Assertion, Message, TestCase
from eval_pipelines.run.targets.config import OpenAITargetConfig
from tests.support.fake_openai import FakeOpenAIServer, _embedding, last_user_message

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "model"


# ---- helpers ----------------------------------------------------------------------


def _case(**fields: Any) -> TestCase:
    fields.setdefault("input", [Message(content="Screen: Huawei")])
    return TestCase(id="t1", **fields)


def grade(server: FakeOpenAIServer | None, type_: str, output: str, *, case: TestCase | None = None,
          suite_dir: Path | None = None, workspace: Path | None = None,
          trace: list[dict[str, Any]] | None = None, **config: Any) -> Grade:
    async def go() -> Grade:
        judge = None
        if server is not None:
            judge = OpenAIJudge(OpenAITargetConfig(name="judge", model="judge-model", max_retries=1),
                                api_key="sk-test", base_url=server.base_url)
        try:
            inp = GradeInput(case=case or _case(), output=output, suite_dir=suite_dir, judge=judge,
                             workspace=workspace, trace=trace or [])
            return await agrade_output(Assertion(type=type_, config=config), inp)
        finally:
            if judge is not None:
                await judge.aclose()

    return asyncio.run(go())


def script(server: FakeOpenAIServer, *replies: Any) -> None:
    """Answer chat requests with ``replies`` in order (dicts as JSON); the last one repeats."""
    queue = [r if isinstance(r, str) else json.dumps(r) for r in replies]

    def responder(body: dict[str, Any]) -> str:
        return queue.pop(0) if len(queue) > 1 else queue[0]

    server.responder = responder


def prompt_of(server: FakeOpenAIServer, index: int = -1) -> str:
    body = server.requests[index]
    assert body is not None
    return last_user_message(body)


def cos(a: str, b: str) -> float:
    va, vb = _embedding(a, 8), _embedding(b, 8)
    return sum(x * y for x, y in zip(va, vb))


def pair_with_similarity(base: str, lo: float, hi: float) -> tuple[str, float]:
    """A text whose fake embedding has cosine in (lo, hi) with ``base``'s (deterministic)."""
    for i in range(20_000):
        candidate = f"candidate {i}"
        value = cos(base, candidate)
        if lo < value < hi:
            return candidate, value
    raise AssertionError("no candidate found")


# ---- registry and shared pieces -----------------------------------------------------


@pytest.mark.parametrize("name, canonical", [
    ("llm_judge", "llm_judge"), ("llm-judge", "llm_judge"), ("judge", "llm_judge"),
    ("llm_rubric", "llm_judge"), ("rubrics", "rubrics"), ("model", "model"),
    ("model_graded", "model"), ("semantic_sim", "semantic_sim"), ("semantic", "semantic_sim"),
    ("similar", "semantic_sim"), ("semantic_similarity", "semantic_sim"), ("agent_judge", "agent_judge"),
])
def test_registry_names(name: str, canonical: str) -> None:
    assert registry.canonical_type(name) == canonical


def test_render_replaces_only_known_names_in_one_pass() -> None:
    out = render("{input}|{output}|{other}|{ input }|{{x}}", {"input": "say {output}", "output": "O"})
    assert out == "say {output}|O|{other}|{ input }|{{x}}"


def test_calibrate_maps_threshold_to_outer_pass_mark() -> None:
    assert calibrate(0.37, 0.8) == 0.37  # identity at the default threshold
    assert calibrate(0.7, 0.7) == pytest.approx(0.8)
    assert calibrate(0.85, 0.7) == pytest.approx(0.9)
    assert calibrate(0.35, 0.7) == pytest.approx(0.4)
    assert calibrate(0.82, 0.85) < 0.8 <= calibrate(0.85, 0.85)
    assert (calibrate(0.0, 0.6), calibrate(1.0, 0.6), calibrate(0.0, 0.0), calibrate(0.99, 1.0)) == (0, 1, 0.8, 0.792)


# semantic_sim embeds with the local model when no judge is configured (tests/grading/test_local_embeddings.py).
@pytest.mark.parametrize("type_", ["llm_judge", "rubrics", "model", "agent_judge"])
def test_no_judge_configured_is_an_error(type_: str) -> None:
    config: dict[str, Any] = {
        "rubrics": {"criteria": [{"id": "a", "outcome": "x"}]},
        "model": {"rubric": "r"},
        "agent_judge": {"prompt": "p"},
    }.get(type_, {})
    g = grade(None, type_, "output", **config)
    assert (g.status, g.passed, g.score) == ("error", False, 0.0)
    assert g.reason == NO_JUDGE_REASON


# ---- llm_judge ----------------------------------------------------------------------


def test_llm_judge_criteria_only_case_passes(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, {"score": 0.9, "passed": True, "reasoning": "Denies the transaction."})
    case = _case(criteria="Should deny the transaction", expected_output="DENIED")
    g = grade(fake_openai, "llm-judge", "DENIED: Huawei is listed.", case=case)
    assert (g.status, g.passed, g.score) == ("graded", True, 0.9)
    assert g.details["feedback"] == "Denies the transaction."
    assert g.details["judge_model"] == "judge-model"
    assert g.details["judge_attempts"] == 1
    assert g.details["criteria_source"] == "case"
    assert "Denies the transaction." in g.reason
    body = fake_openai.requests[0]
    assert body["model"] == "judge-model" and body["temperature"] == 0
    assert body["response_format"] == {"type": "json_object"}
    prompt = prompt_of(fake_openai)
    # seed 003's template, with the case's criteria in the rubric slot
    assert "## Evaluation Rubric\nShould deny the transaction" in prompt
    assert "## Input Given to System\nScreen: Huawei" in prompt
    assert "## System Output\nDENIED: Huawei is listed." in prompt
    assert "## Expected Output (Reference)\nDENIED" in prompt
    assert '"score"' in prompt


def test_llm_judge_low_score_fails_and_no_criteria_uses_default(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, {"score": 0.3, "passed": False, "reasoning": "It approves instead."})
    g = grade(fake_openai, "llm_judge", "APPROVED")
    assert (g.status, g.passed, g.score) == ("graded", False, 0.3)
    assert g.details["passed"] is False and g.details["judge_passed"] is False
    assert g.details["criteria_source"] == "default"
    assert "(no reference output given)" in prompt_of(fake_openai)
    assert "0.3 < threshold 0.8" in g.reason


def test_llm_judge_threshold_is_calibrated_onto_the_pass_mark(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, {"score": 0.65, "passed": True, "reasoning": "ok"})
    g = grade(fake_openai, "llm_judge", "x", threshold=0.6)
    # issue 30: the score is the judge's (0.65); the calibrated 0.825 is its own field
    assert g.passed and g.score == pytest.approx(0.65) and g.calibrated_score == pytest.approx(0.825)
    assert g.details["raw_score"] == 0.65 and g.details["threshold"] == 0.6


def test_llm_judge_inline_template_placeholders(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, {"score": 1, "passed": True, "reasoning": "fine"})
    template = ("In: {input}\nOut: {output}\nRef: {expected}\nCrit: {criteria}\n"
                'Keep {other}, { input } and {"a": 1}.')
    case = _case(criteria="deny it", expected_output="DENIED")
    g = grade(fake_openai, "llm_judge", "DENIED {expected}", case=case, prompt=template)
    assert g.passed
    prompt = prompt_of(fake_openai)
    assert prompt.startswith("In: Screen: Huawei\nOut: DENIED {expected}\nRef: DENIED\nCrit: deny it\n"
                             'Keep {other}, { input } and {"a": 1}.')
    assert "## System Output" not in prompt  # the template placed the output itself


def test_llm_judge_prompt_file_relative_to_suite_dir(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, {"score": 0.95, "passed": True, "reasoning": "compliant"})
    case = _case(criteria="Deny and cite the Entity List", expected_output="DENIED")
    g = grade(fake_openai, "llm_judge", "DENIED (Entity List)", case=case, suite_dir=FIXTURES,
              prompt="./judges/compliance.md")
    assert g.passed
    assert g.details["prompt_file"].endswith("compliance.md")
    prompt = prompt_of(fake_openai)
    assert "# Compliance judge" in prompt
    assert "Answer under review: DENIED (Entity List)" in prompt
    assert "What a good answer does: Deny and cite the Entity List" in prompt
    assert 'Literal braces stay as written: {other} and {"example": true}.' in prompt


def test_llm_judge_prompt_file_without_placeholders_gets_the_case(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, {"score": 0.2, "passed": False, "reasoning": "rude"})
    g = grade(fake_openai, "llm_judge", "No.", case=_case(criteria="polite"), suite_dir=FIXTURES,
              prompt="judges/plain.txt")
    assert not g.passed
    prompt = prompt_of(fake_openai)
    assert prompt.startswith("Judge whether the answer is polite")
    assert "## System Output\nNo." in prompt and "## Criteria\npolite" in prompt


def test_llm_judge_missing_prompt_file_is_an_error(fake_openai: FakeOpenAIServer) -> None:
    g = grade(fake_openai, "llm_judge", "x", suite_dir=FIXTURES, prompt="./judges/nope.md")
    assert g.status == "error" and "not found" in g.reason
    assert fake_openai.request_count == 0


def test_llm_judge_eval_rubric_scales_weights_and_passing_threshold(fake_openai: FakeOpenAIServer) -> None:
    rubric = {
        "criteria": [
            {"name": "structure", "description": "Logical flow", "weight": 0.5,
             "scale": {"min": 1, "max": 5, "descriptions": {1: "chaotic", 5: "clear"}}},
            {"name": "data_accuracy", "description": "Numbers right", "weight": 0.5,
             "scale": {"min": 0, "max": 10}},
        ],
        "passingThreshold": 0.7,
        "overallFeedback": True,
    }
    script(fake_openai, {"scores": {"structure": 4, "data_accuracy": 7}, "reasoning": "solid",
                         "feedback": "Add a summary slide."})
    g = grade(fake_openai, "llm_judge", "slides", rubric=rubric)
    # structure (4-1)/4 = 0.75, data_accuracy 0.7 -> 0.725 >= 0.7
    assert g.details["rubric_scores"] == {"structure": 0.75, "data_accuracy": 0.7}
    assert g.details["raw_scores"] == {"structure": 4.0, "data_accuracy": 7.0}
    assert g.details["raw_score"] == pytest.approx(0.725)
    assert g.details["threshold"] == 0.7
    assert g.passed and g.score == pytest.approx(0.725) and g.calibrated_score == pytest.approx(calibrate(0.725, 0.7))
    assert "solid" in g.details["feedback"] and "Add a summary slide." in g.details["feedback"]
    prompt = prompt_of(fake_openai)
    assert "**structure** (weight 0.5, scale 1 to 5; 1: chaotic; 5: clear): Logical flow" in prompt
    assert '"data_accuracy": <number from 0 to 10>' in prompt and '"feedback"' in prompt


def test_llm_judge_creative_profile_rubric_fails_below_threshold(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, {"scores": {"completeness": 3, "coherence": 4, "professionalism": 3,
                                    "accuracy": 2}, "reasoning": "thin"})
    g = grade(fake_openai, "llm_judge", "slides", rubric=CREATIVE_PROFILE_RUBRIC)
    expected = 0.30 * 0.5 + 0.25 * 0.75 + 0.25 * 0.5 + 0.20 * 0.25
    assert g.details["raw_score"] == pytest.approx(expected, abs=1e-4)
    assert not g.passed and g.score < 0.8


def test_llm_judge_rubric_score_out_of_scale_is_re_asked(fake_openai: FakeOpenAIServer) -> None:
    rubric = {"criteria": [{"name": "tone", "scale": {"min": 1, "max": 5}}], "passingThreshold": 0.5}
    script(fake_openai, {"scores": {"tone": 7}}, {"scores": {"tone": 5}, "reasoning": "warm"})
    g = grade(fake_openai, "llm_judge", "hi", rubric=rubric)
    assert g.passed and g.score == 1.0
    assert fake_openai.request_count == 2
    assert "between 1 and 5, got 7" in prompt_of(fake_openai, 1)
    assert g.details["judge_calls"] == 2


def test_llm_judge_malformed_json_then_valid_passes(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, '{"score": 0.9, "passed": tr', {"score": 0.9, "passed": True, "reasoning": "ok"})
    g = grade(fake_openai, "llm_judge", "x")
    assert (g.status, g.passed) == ("graded", True)
    assert fake_openai.request_count == 2
    assert g.details["judge_attempts"] == 2


def test_llm_judge_missing_score_then_valid_passes(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, {"verdict": "good"}, {"score": 2}, {"score": 0.85, "reasoning": "ok"})
    g = grade(fake_openai, "llm_judge", "x")
    assert g.passed and fake_openai.request_count == 3
    assert "must be between 0 and 1, got 2" in prompt_of(fake_openai, 2)


def test_llm_judge_that_never_gives_a_score_is_an_error(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, {"verdict": "good"})
    g = grade(fake_openai, "llm_judge", "x")
    assert g.status == "error" and not g.passed
    assert 'no "score"' in g.reason and "verdict" in g.reason
    assert fake_openai.request_count == 3


def test_llm_judge_that_always_answers_prose_is_an_error(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.plan("prose", "prose", "prose")
    g = grade(fake_openai, "llm_judge", "x")
    assert (g.status, g.passed, g.score) == ("error", False, 0.0)
    assert "last reply" in g.reason and "Overall the answer seems reasonable" in g.reason
    assert fake_openai.request_count == 3


def test_llm_judge_server_500_is_an_error(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.fault_rate, fake_openai.faults = 1.0, ["500"]
    g = grade(fake_openai, "llm_judge", "x")
    assert g.status == "error" and "HTTP 500" in g.reason
    assert fake_openai.request_count == 2  # max_retries=1
    assert g.details["judge_model"] == "judge-model"


@pytest.mark.parametrize("config, message", [
    ({"prompt": "  "}, "must not be empty"),
    ({"threshold": 1.5}, "less than or equal to 1"),
    ({"rubric": {"criteria": []}}, "at least 1"),
    ({"rubric": {"criteria": [{"name": "a"}, {"name": "a"}]}}, "duplicate rubric criterion"),
    ({"rubric": {"criteria": [{"name": "a", "scale": {"min": 5, "max": 1}}]}}, "greater than min"),
    ({"rubric": {"criteria": [{"name": "a"}], "passingThreshold": 2}}, "less than or equal to 1"),
    ({"temprature": 0}, "Extra inputs"),
])
def test_llm_judge_params_validation(config: dict[str, Any], message: str) -> None:
    with pytest.raises(registry.ValidationError, match=message):
        registry.parse_params("llm_judge", config)


# ---- rubrics ---------------------------------------------------------------------------

SCREENING = [
    {"id": "identification", "outcome": "Identifies Huawei as a listed entity", "weight": 5.0,
     "required": True},
    {"id": "legal-basis", "outcome": "Cites the regulatory authority", "weight": 3.0},
    {"id": "action-items", "outcome": "Recommends next steps", "weight": 2.0},
]


def test_rubrics_weighted_mean_passes(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, {"scores": {"identification": 1.0, "legal-basis": 0.8, "action-items": 0.5},
                         "reasoning": "cites EAR"})
    g = grade(fake_openai, "rubrics", "DENIED under EAR", criteria=SCREENING)
    assert g.status == "graded" and g.passed
    assert g.score == pytest.approx((5 * 1.0 + 3 * 0.8 + 2 * 0.5) / 10)
    assert g.details["rubric_scores"] == {"identification": 1.0, "legal-basis": 0.8, "action-items": 0.5}
    assert g.details["failed_required"] == [] and g.details["feedback"] == "cites EAR"
    assert g.details["judge_attempts"] == 1
    assert fake_openai.request_count == 1  # one call for every criterion
    prompt = prompt_of(fake_openai)
    assert "**identification** (weight 5, scale 0 to 1, required): Identifies Huawei" in prompt
    assert '"legal-basis": <number from 0 to 1>' in prompt


def test_rubrics_low_scores_fail(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, {"scores": {"identification": 0.9, "legal-basis": 0.2, "action-items": 0.0}})
    g = grade(fake_openai, "rubrics", "DENIED", criteria=SCREENING)
    assert not g.passed and g.score == pytest.approx((4.5 + 0.6) / 10)


def test_rubrics_required_criterion_failing_zeroes_the_rubric(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, {"scores": {"identification": 0.5, "legal-basis": 1, "action-items": 1}})
    g = grade(fake_openai, "rubrics", "APPROVED", criteria=SCREENING)
    assert (g.score, g.passed, g.status) == (0.0, False, "graded")
    assert g.reason.startswith("required criterion not met: identification (0.50 < 0.8)")
    assert g.details["failed_required"] == ["identification"]
    assert g.details["weighted_mean"] == pytest.approx(0.75)


def test_rubrics_scale_and_numeric_required(fake_openai: FakeOpenAIServer) -> None:
    criteria = [
        {"id": "depth", "outcome": "Explains why", "scale": {"min": 1, "max": 5}, "required": 0.6},
        {"id": "style", "outcome": "Clear", "scale": {"min": 0, "max": 10}},
    ]
    script(fake_openai, {"scores": {"depth": 4, "style": 7}})
    g = grade(fake_openai, "rubrics", "x", criteria=criteria)
    assert g.details["rubric_scores"] == {"depth": 0.75, "style": 0.7}
    assert g.score == pytest.approx(0.725)
    script(fake_openai, {"scores": {"depth": 3, "style": 10}})  # depth 0.5 < 0.6
    g = grade(fake_openai, "rubrics", "x", criteria=criteria)
    assert g.score == 0.0 and g.details["failed_required"] == ["depth"]


def test_rubrics_missing_criterion_score_is_re_asked(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, {"scores": {"identification": 1}},
           {"scores": {"identification": {"score": 1}, "legal-basis": 1, "action-items": 1}})
    g = grade(fake_openai, "rubrics", "x", criteria=SCREENING)
    assert g.passed and g.score == 1.0 and fake_openai.request_count == 2
    assert "no score for criterion 'legal-basis'" in prompt_of(fake_openai, 1)


def test_rubrics_prose_and_500_are_errors(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, "I like it a lot.")
    g = grade(fake_openai, "rubrics", "x", criteria=SCREENING)
    assert g.status == "error" and "I like it a lot." in g.reason
    fake_openai.fault_rate, fake_openai.faults = 1.0, ["500"]
    g = grade(fake_openai, "rubrics", "x", criteria=SCREENING)
    assert g.status == "error" and "HTTP 500" in g.reason


@pytest.mark.parametrize("config, message", [
    ({"criteria": []}, "at least 1"),
    ({}, "Field required"),
    ({"criteria": [{"id": "a", "outcome": "x"}, {"id": "a", "outcome": "y"}]}, "duplicate criterion id"),
    ({"criteria": [{"id": "a", "outcome": "x", "required": 1.5}]}, "within \\[0, 1\\]"),
    ({"criteria": [{"id": "a", "outcome": "x", "weight": -1}]}, "greater than or equal to 0"),
    ({"criteria": [{"id": "a"}]}, "Field required"),
])
def test_rubrics_params_validation(config: dict[str, Any], message: str) -> None:
    with pytest.raises(registry.ValidationError, match=message):
        registry.parse_params("rubrics", config)


# ---- model (seed 003) -------------------------------------------------------------------

EXTRACTION_RUBRIC = ("Score the extraction on these criteria:\n1. Completeness (1-5)\n2. Accuracy (1-5)")


def test_model_grader_numeric_pass(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, {"scores": {"completeness": 5, "accuracy": 4}, "overall_score": 4.6, "passed": True,
                         "justification": "Found everything.", "specific_feedback": ["Mentions PostgreSQL 14+"]})
    case = _case(expected_output="PostgreSQL 14+, /api/v1/users")
    g = grade(fake_openai, "model", "PostgreSQL 14+ and /api/v1/users", case=case,
              model="claude-3-5-sonnet", rubric=EXTRACTION_RUBRIC)
    assert g.passed and g.score == pytest.approx(0.9)
    assert g.details["requested_model"] == "claude-3-5-sonnet"
    assert g.details["judge_model"] == "judge-model"
    assert g.details["overall_score"] == 4.6
    assert g.details["rubric_scores"] == {"completeness": 1.0, "accuracy": 0.75}
    assert g.details["raw_scores"] == {"completeness": 5, "accuracy": 4}
    assert g.details["feedback"] == "Found everything.\n- Mentions PostgreSQL 14+"
    assert fake_openai.requests[0]["model"] == "judge-model"
    prompt = prompt_of(fake_openai)
    assert prompt.startswith("You are an expert evaluator.")
    assert "## Evaluation Rubric\n" + EXTRACTION_RUBRIC in prompt
    assert "## Expected Output (Reference)\nPostgreSQL 14+, /api/v1/users" in prompt
    assert '"overall_score": <number from 1 to 5>' in prompt
    assert "Calibration Examples" not in prompt


def test_model_grader_numeric_fail_and_custom_range(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, {"overall_score": 3, "justification": "misses items"})
    g = grade(fake_openai, "model", "x", rubric="r")
    assert not g.passed and g.score == 0.5 and g.details["passed"] is False
    script(fake_openai, {"overall_score": 8, "justification": "good"})
    g = grade(fake_openai, "model", "x", rubric="r", scoring={"type": "numeric", "range": [0, 10]},
              threshold=0.75)
    assert g.passed and g.details["raw_score"] == 0.8


def test_model_grader_few_shot_examples_reach_the_judge(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, {"overall_score": 5, "justification": "specific"})
    examples = [
        {"input": "Added console.log for debugging", "output": "Remove debug statement before merging",
         "score": 2, "justification": "Too brief, doesn't explain why or provide context"},
        {"input": "Added console.log for debugging", "output": "Consider removing this `console.log`...",
         "score": 5, "justification": "Specific, explains why, provides alternative solution"},
    ]
    g = grade(fake_openai, "model", "Use a logger with levels instead.", rubric="Evaluate code review comment quality",
              examples=examples, temperature=0.2, max_tokens=1000)
    assert g.passed and g.details["examples"] == 2 and g.details["max_tokens"] == 1000
    body = fake_openai.requests[0]
    assert body["temperature"] == 0.2
    prompt = last_user_message(body)
    assert "## Calibration Examples" in prompt
    assert "### Example 1\nInput:\nAdded console.log for debugging\nOutput:\nRemove debug statement" in prompt
    assert "Score: 2\nJustification: Too brief, doesn't explain why or provide context" in prompt
    assert "Score: 5\nJustification: Specific, explains why" in prompt
    assert prompt.index("## Calibration Examples") < prompt.index("## Instructions")


def test_model_grader_boolean(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, {"overall_score": True, "justification": "yes"})
    g = grade(fake_openai, "model_graded", "x", rubric="r", scoring={"type": "boolean"})
    assert g.passed and g.score == 1.0
    script(fake_openai, {"overall_score": "false", "justification": "no"})
    g = grade(fake_openai, "model", "x", rubric="r", scoring={"type": "boolean"})
    assert not g.passed and g.score == 0.0
    assert '"overall_score": <true or false>' in prompt_of(fake_openai)


def test_model_grader_categorical_labels_and_explicit_scores(fake_openai: FakeOpenAIServer) -> None:
    labels = ["poor", "fair", "good", "excellent"]
    script(fake_openai, {"overall_score": "Good", "justification": "decent"})
    g = grade(fake_openai, "model", "x", rubric="r", scoring={"type": "categorical", "categories": labels})
    assert g.score == pytest.approx(2 / 3) and not g.passed
    assert 'exactly one of "poor", "fair", "good", "excellent" (listed from worst to best)' in prompt_of(fake_openai)
    script(fake_openai, {"overall_score": "acceptable"})
    g = grade(fake_openai, "model", "x", rubric="r", scoring={
        "type": "categorical", "categories": [{"label": "reject", "score": 0}, {"label": "acceptable", "score": 0.85}]})
    assert g.passed and g.score == 0.85


def test_model_grader_unknown_category_is_re_asked(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, {"overall_score": "superb"}, {"overall_score": "excellent"})
    g = grade(fake_openai, "model", "x", rubric="r",
              scoring={"type": "categorical", "categories": ["poor", "excellent"]})
    assert g.passed and g.score == 1.0 and fake_openai.request_count == 2
    assert "got 'superb'" in prompt_of(fake_openai, 1)


def test_model_grader_malformed_then_valid_and_errors(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, "```json\n{\"overall_score\": 5,,}\n```", {"overall_score": 5})
    g = grade(fake_openai, "model", "x", rubric="r")
    assert g.passed and fake_openai.request_count == 2
    fake_openai.reset_counts()
    script(fake_openai, "Looks great to me!")
    g = grade(fake_openai, "model", "x", rubric="r", model="gpt-x")
    assert g.status == "error" and "Looks great to me!" in g.reason
    assert g.details["requested_model"] == "gpt-x"
    fake_openai.fault_rate, fake_openai.faults = 1.0, ["500"]
    g = grade(fake_openai, "model", "x", rubric="r")
    assert g.status == "error" and "HTTP 500" in g.reason


@pytest.mark.parametrize("config, message", [
    ({}, "Field required"),
    ({"rubric": "r", "scoring": {"type": "categorical"}}, "at least two `categories`"),
    ({"rubric": "r", "scoring": {"range": [5, 1]}}, "low end first"),
    ({"rubric": "r", "scoring": {"type": "numeric", "range": [1, 5]}, "examples": [{"output": "o", "score": 9}]},
     "examples\\[0\\].score must be between 1 and 5"),
    ({"rubric": "r", "scoring": {"type": "categorical", "categories": ["a", {"label": "b", "score": 1}]}},
     "either all as labels"),
    ({"rubric": "r", "scoring": {"type": "ordinal"}}, "Input should be"),
    ({"rubric": "r", "max_tokens": 0}, "greater than or equal to 1"),
])
def test_model_grader_params_validation(config: dict[str, Any], message: str) -> None:
    with pytest.raises(registry.ValidationError, match=message):
        registry.parse_params("model", config)


# ---- semantic_sim ----------------------------------------------------------------------

BASE = "The cat sat on the mat."


def test_semantic_sim_identical_text_passes(fake_openai: FakeOpenAIServer) -> None:
    g = grade(fake_openai, "semantic_sim", BASE, case=_case(expected_output=BASE))
    assert (g.status, g.passed, g.score) == ("graded", True, 1.0)
    assert g.details["similarity"] == pytest.approx(1.0) and g.details["threshold"] == 0.8
    assert fake_openai.paths == ["/v1/embeddings"]
    body = fake_openai.requests[0]
    assert body["input"] == [BASE, BASE] and body["model"] == "text-embedding-3-small"
    assert g.details["embedding_model"] == "text-embedding-3-small"


def test_semantic_sim_different_text_fails_with_raw_similarity(fake_openai: FakeOpenAIServer) -> None:
    other, similarity = pair_with_similarity(BASE, 0.3, 0.75)
    g = grade(fake_openai, "semantic", BASE, value=other, embedding_model="embed-small")
    assert g.status == "graded" and not g.passed
    assert g.details["similarity"] == pytest.approx(similarity, abs=1e-6)
    assert g.score == pytest.approx(similarity, abs=1e-6)  # identity at the default threshold 0.8
    assert fake_openai.requests[0]["model"] == "embed-small"
    assert fake_openai.requests[0]["input"] == [BASE, other]


def test_semantic_sim_negative_cosine_is_clipped(fake_openai: FakeOpenAIServer) -> None:
    other, similarity = pair_with_similarity(BASE, -1.0, -0.05)
    g = grade(fake_openai, "similar", BASE, value=other)
    assert g.score == 0.0 and g.details["similarity"] == 0.0
    assert g.details["cosine"] == pytest.approx(similarity, abs=1e-6)


def test_semantic_sim_threshold_rule_below_and_above_the_pass_mark(fake_openai: FakeOpenAIServer) -> None:
    mid, s_mid = pair_with_similarity(BASE, 0.3, 0.75)
    # threshold under the similarity: passes although the similarity is under 0.8
    g = grade(fake_openai, "semantic_sim", BASE, value=mid, semanticThreshold=round(s_mid - 0.05, 3))
    assert g.passed and g.details["passed"] and g.calibrated_score >= 0.8 and g.score == pytest.approx(s_mid, abs=1e-3)
    g = grade(fake_openai, "semantic_sim", BASE, value=mid, threshold=round(s_mid + 0.05, 3))
    assert not g.passed and g.calibrated_score < 0.8
    # threshold above the pass mark: 0.80 <= similarity < 0.85 must still fail
    high, s_high = pair_with_similarity(BASE, 0.8, 0.85)
    g = grade(fake_openai, "semantic_sim", BASE, value=high, semanticThreshold=0.85)
    assert s_high >= 0.8 and not g.passed and g.calibrated_score < 0.8
    assert g.score == pytest.approx(s_high, abs=1e-6)
    assert g.calibrated_score == pytest.approx(calibrate(s_high, 0.85), abs=1e-6)


def test_semantic_sim_value_wins_over_expected_and_non_string_expected(fake_openai: FakeOpenAIServer) -> None:
    g = grade(fake_openai, "semantic_sim", BASE, case=_case(expected_output="other"), value=BASE)
    assert g.passed
    g = grade(fake_openai, "semantic_sim", '{"a": 1}', case=_case(expected_output={"a": 1}))
    assert g.passed and fake_openai.requests[-1]["input"] == ['{"a": 1}', '{"a": 1}']


def test_semantic_sim_missing_reference_empty_output_and_500(fake_openai: FakeOpenAIServer) -> None:
    g = grade(fake_openai, "semantic_sim", BASE)
    assert g.status == "error" and "needs a reference" in g.reason
    g = grade(fake_openai, "semantic_sim", "   ", value=BASE)
    assert (g.status, g.score) == ("graded", 0.0) and "empty" in g.reason
    assert fake_openai.request_count == 0
    fake_openai.fault_rate, fake_openai.faults = 1.0, ["500"]
    g = grade(fake_openai, "semantic_sim", BASE, value=BASE)
    assert g.status == "error" and "HTTP 500" in g.reason


@pytest.mark.parametrize("config, message", [
    ({"threshold": 1.2}, "less than or equal to 1"),
    ({"semanticThreshold": -0.1}, "greater than or equal to 0"),
    ({"values": "x"}, "Extra inputs"),
])
def test_semantic_sim_params_validation(config: dict[str, Any], message: str) -> None:
    with pytest.raises(registry.ValidationError, match=message):
        registry.parse_params("semantic_sim", config)


def test_semantic_sim_threshold_aliases() -> None:
    assert registry.parse_params("semantic_sim", {"semanticThreshold": 0.7}).threshold == 0.7
    assert registry.parse_params("semantic_sim", {"threshold": 0.75}).threshold == 0.75


# ---- agent_judge ---------------------------------------------------------------------


def _workspace(root: Path) -> Path:
    (root / "sub").mkdir(parents=True)
    (root / "report.md").write_text("# Screening\nHuawei is on the BIS Entity List: DENIED.\n")
    (root / "sub" / "notes.txt").write_text("checked EAR 744\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00SECRET-BINARY")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root


def test_agent_judge_sees_workspace_files(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    ws = _workspace(tmp_path / "ws")
    script(fake_openai, {"score": 0.9, "passed": True, "reasoning": "report.md names the entity"})
    trace = [{"tool": "write_file", "path": "report.md"}]
    g = grade(fake_openai, "agent_judge", "Done, see report.md", workspace=ws, suite_dir=FIXTURES,
              trace=trace, prompt="judges/agent_audit.md", max_steps=3)
    assert (g.status, g.passed, g.score) == ("graded", True, 0.9)
    d = g.details
    assert d["mode"] == "workspace" and d["steps_used"] == 1 and d["max_steps"] == 3
    assert d["files_included"] == ["report.md", "sub/notes.txt"]
    assert d["files_listed"] == 3  # .git skipped, logo.png listed as binary
    assert d["feedback"] == "report.md names the entity" and d["judge_attempts"] == 1
    prompt = prompt_of(fake_openai)
    assert prompt.startswith("Audit the workspace the agent produced. The task was: Screen: Huawei")
    assert "## System Output\nDone, see report.md" in prompt
    assert "Huawei is on the BIS Entity List: DENIED." in prompt and "checked EAR 744" in prompt
    assert "- logo.png (24 bytes), binary" in prompt
    assert "SECRET-BINARY" not in prompt and "refs/heads" not in prompt
    assert '"tool": "write_file"' in prompt
    assert '"read"' not in prompt  # everything was shown, nothing left to ask for


def test_agent_judge_include_globs_and_failing_verdict(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    ws = _workspace(tmp_path / "ws")
    script(fake_openai, {"score": 0.4, "passed": False, "reasoning": "no recommendation"})
    g = grade(fake_openai, "agent_judge", "done", workspace=ws, prompt="Audit: {criteria}",
              include_globs=["**/*.txt"], case=_case(criteria="recommends next steps"))
    assert not g.passed and g.score == 0.4
    assert g.details["files_included"] == ["sub/notes.txt"] and g.details["files_listed"] == 1
    prompt = prompt_of(fake_openai)
    assert prompt.startswith("Audit: recommends next steps")
    assert "report.md" not in prompt


def test_agent_judge_reads_files_over_the_byte_budget(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("A" * 40)
    (ws / "b.txt").write_text("begin " + "B" * 100 + " THE-END")
    script(fake_openai, {"read": ["./b.txt", "missing.txt"]},
           {"score": 0.85, "passed": True, "reasoning": "b.txt ends correctly"})
    g = grade(fake_openai, "agent_judge", "ok", workspace=ws, prompt="Check the files.", max_bytes=120)
    assert g.passed and fake_openai.request_count == 2
    assert g.details["steps_used"] == 2 and g.details["files_requested"] == ["./b.txt", "missing.txt"]
    first, second = prompt_of(fake_openai, 0), prompt_of(fake_openai, 1)
    assert "### b.txt (first 80 of 114 bytes)" in first and "THE-END" not in first
    assert '{"read": ["<path>", ...]}' in first
    assert "## Files Read at Step 1" in second and "THE-END" in second
    assert "### missing.txt\n(not in the workspace listing)" in second
    assert g.details["judge_calls"] == 2


def test_agent_judge_last_step_must_give_a_verdict(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "big.txt").write_text("x" * 500)
    script(fake_openai, {"read": ["big.txt"]}, {"score": 1, "reasoning": "fine"})
    g = grade(fake_openai, "agent_judge", "ok", workspace=ws, prompt="Check.", max_bytes=10, max_steps=1)
    assert g.passed and fake_openai.request_count == 2
    assert '"read"' not in prompt_of(fake_openai, 0).split("## Response Format")[1]
    assert "no more files can be read" in prompt_of(fake_openai, 1)


def test_agent_judge_without_workspace_judges_output_and_trace(fake_openai: FakeOpenAIServer) -> None:
    script(fake_openai, {"score": 0.8, "passed": True, "reasoning": "trace shows the lookup"})
    g = grade(fake_openai, "agent_judge", "DENIED", prompt="Audit the run.",
              trace=[{"tool": "search_entity_list", "result": "listed"}])
    assert g.passed and g.details["mode"] == "output_only"
    assert "output and the trace only" in g.details["note"]
    prompt = prompt_of(fake_openai)
    assert '"tool": "search_entity_list"' in prompt and "No workspace files are available" in prompt


def test_agent_judge_errors(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    g = grade(fake_openai, "agent_judge", "x", prompt="p", workspace=tmp_path / "absent")
    assert g.status == "error" and "not a directory" in g.reason
    script(fake_openai, "It looks thorough.")
    g = grade(fake_openai, "agent_judge", "x", prompt="p", workspace=tmp_path)
    assert g.status == "error" and "It looks thorough." in g.reason
    fake_openai.fault_rate, fake_openai.faults = 1.0, ["500"]
    g = grade(fake_openai, "agent_judge", "x", prompt="p")
    assert g.status == "error" and "HTTP 500" in g.reason


@pytest.mark.parametrize("config, message", [
    ({"prompt": ""}, "at least 1 character"),
    ({"rubrics": [{"id": "a"}]}, "outcome"),
    ({"prompt": "p", "max_steps": 0}, "greater than or equal to 1"),
    ({"prompt": "p", "include_globs": ["../*"]}, "relative pattern"),
    ({"prompt": "p", "include_globs": []}, "at least 1"),
])
def test_agent_judge_params_validation(config: dict[str, Any], message: str) -> None:
    with pytest.raises(registry.ValidationError, match=message):
        registry.parse_params("agent_judge", config)


@pytest.mark.parametrize("pattern, path, matches", [
    ("**/*", "a.txt", True), ("**/*", "x/y/z.md", True), ("*.md", "x/a.md", False),
    ("**/*.md", "x/a.md", True), ("src/**", "src/a/b.py", True), ("src/*.py", "src/a/b.py", False),
    ("?.txt", "a.txt", True),
])
def test_agent_judge_glob(pattern: str, path: str, matches: bool) -> None:
    assert bool(glob_regex(pattern).match(path)) is matches

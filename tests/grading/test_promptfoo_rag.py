"""promptfoo's RAG assertions (src/assertions/contextRecall.ts, contextRelevance.ts,
contextFaithfulness.ts, contextUtils.ts): the context comes from the `context` variable, the
question from `query`; the score is the judge's share of supported sentences or claims, and the
assertion passes when it reaches `threshold` (0 when omitted)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from eval_pipelines.grading.base import GradeInput
from eval_pipelines.grading.dispatch import agrade_output
from eval_pipelines.grading.judge import OpenAIJudge
from eval_pipelines.run.targets.config import OpenAITargetConfig
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite
from tests.support.fake_openai import FakeOpenAIServer, last_user_message

EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "promptfoo_examples"


VARIABLES = "{query: 'Max spend?', context: 'Spend up to $500. Fred approves.'}"


def _write(folder: Path, asserts: str, variables: str = VARIABLES) -> Path:
    (folder / "promptfooconfig.yaml").write_text(
        f"prompts: ['{{{{ query }}}}']\nproviders: [echo]\ntests:\n  - vars: {variables}\n    assert: {asserts}\n")
    return folder / "promptfooconfig.yaml"


def _grade(case: Any, output: str, score: float) -> tuple[Any, list[str]]:
    asked: list[str] = []

    def responder(body: dict[str, Any]) -> str:
        asked.append(last_user_message(body))
        return json.dumps({"score": score, "reasoning": "judged"})

    async def go():
        with FakeOpenAIServer(latency_s=0.0) as server:
            server.responder = responder
            judge = OpenAIJudge(OpenAITargetConfig(name="judge", model="judge-model", max_retries=0),
                                api_key="sk-test", base_url=server.base_url)
            try:
                return await agrade_output(case.assertions[0], GradeInput(case=case, output=output, judge=judge), 0)
            finally:
                await judge.aclose()
    return asyncio.run(go()), asked


@pytest.mark.parametrize(("kind", "extra", "needles"), [
    ("context-recall", ", value: 'The limit is $500.'", ["REFERENCE ANSWER:\nThe limit is $500.",
                                                          "CONTEXT:\nSpend up to $500. Fred approves."]),
    ("context-relevance", "", ["QUERY:\nMax spend?", "CONTEXT:\nSpend up to $500. Fred approves.",
                               "divided by the number of sentences in the context"]),
    ("context-faithfulness", "", ["QUERY:\nMax spend?", "claims", "CONTEXT:\nSpend up to $500."]),
])
def test_the_judge_is_asked_promptfoos_question_with_the_context(tmp_path: Path, kind: str, extra: str,
                                                                 needles: list[str]) -> None:
    suite, _ = load_suite(_write(tmp_path, f"[{{type: {kind}, threshold: 0.6{extra}}}]"))
    case = suite.tests[0]
    low, asked = _grade(case, "You may spend $500.", 0.5)
    assert not low.passed and low.score < 1
    for needle in needles:
        assert needle in asked[0], (needle, asked[0])
    high, _ = _grade(case, "You may spend $500.", 0.6)
    assert high.passed  # the score reaches the threshold


def test_without_a_threshold_the_score_is_recorded_and_the_assertion_passes(tmp_path: Path) -> None:
    suite, _ = load_suite(_write(tmp_path, "[{type: context-relevance}]"))
    grade, _ = _grade(suite.tests[0], "anything", 0.0)
    assert grade.passed  # promptfoo: `assertion.threshold ?? 0`


@pytest.mark.parametrize(("asserts", "variables", "needle"), [
    ("[{type: context-relevance}]", "{query: q}", "context-relevance needs a `context` variable"),
    ("[{type: context-faithfulness}]", "{context: c}", "context-faithfulness needs a `query` variable"),
    ("[{type: context-recall}]", "{query: q, context: c}", "context-recall needs `value`"),
])
def test_missing_inputs_are_one_line_errors(tmp_path: Path, asserts: str, variables: str, needle: str) -> None:
    with pytest.raises(SpecErrors) as caught:
        load_suite(_write(tmp_path, asserts, variables))
    assert needle in str(caught.value).splitlines()[0]


def test_the_example_grader_output_config_loads(tmp_path: Path) -> None:
    """Its options.provider names a judge script the corpus does not hold (third-party code): refused
    for that file; with a judge script of ours beside a copy, the test's assertion is graded by it."""
    example = EXAMPLES / "eval-context-relevance-grader-output" / "promptfooconfig.yaml"
    with pytest.raises(SpecErrors) as caught:
        load_suite(example)
    assert "tests[0].options.provider.text: file not found: file://./judge-provider.mjs" in str(caught.value)
    (tmp_path / "promptfooconfig.yaml").write_bytes(example.read_bytes())
    (tmp_path / "judge-provider.mjs").write_text(
        "export default class Judge { id() { return 'judge'; } async callApi() { return { output: '{}' }; } }\n")
    suite, _ = load_suite(tmp_path / "promptfooconfig.yaml")
    assertion = suite.tests[0].assertions[0]
    assert assertion.type == "with_provider" and assertion.config["provider"]["script"] == "judge-provider.mjs"
    judged = assertion.config["assert"]
    assert judged["type"] == "llm_judge" and judged["threshold"] == 0.8
    assert "Paris is the capital of France." in judged["rubric"]

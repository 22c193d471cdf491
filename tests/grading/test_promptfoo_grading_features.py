"""promptfoo grading features on real example configs, graded over real HTTP by the fake judge:
g-eval with a list of criteria (src/assertions/geval.ts), select-best and max-score
(src/matchers.ts matchesSelectBest, src/assertions/maxScore.ts), per-assertion `provider`."""

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
from eval_pipelines.spec.loader import load_suite
from tests.support.fake_openai import FakeOpenAIServer, last_user_message

EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "promptfoo_examples"


def _judge(server: FakeOpenAIServer) -> OpenAIJudge:
    return OpenAIJudge(OpenAITargetConfig(name="judge", model="judge-model", max_retries=0),
                       api_key="sk-test", base_url=server.base_url)


def _grade(server: FakeOpenAIServer, case: Any, output: str, index: int = 0):
    async def go():
        judge = _judge(server)
        try:
            return await agrade_output(case.assertions[index], GradeInput(case=case, output=output, judge=judge),
                                       index)
        finally:
            await judge.aclose()
    return asyncio.run(go())


# ---- g-eval with a list of criteria ------------------------------------------------------

GEVAL_NAMES = ("Coherence", "Consistency", "Fluency", "Relevance")


@pytest.mark.parametrize(("scores", "passed"), [
    ((0.9, 0.5, 0.8, 0.6), True),   # mean 0.7: promptfoo passes at mean >= threshold (0.7 by default)
    ((0.9, 0.5, 0.8, 0.5), False),  # mean 0.675
])
def test_g_eval_list_judges_each_criterion_and_compares_the_mean(scores: tuple[float, ...], passed: bool) -> None:
    suite, _ = load_suite(EXAMPLES / "eval-g-eval" / "promptfooconfig.yaml")
    case = suite.tests[4]  # the example's list of four criteria
    by_name = dict(zip(GEVAL_NAMES, scores))

    def responder(body: dict[str, Any]) -> str:
        asked = [n for n in GEVAL_NAMES if f"{n} - " in last_user_message(body)]
        assert len(asked) == 1, "each call judges exactly one criterion"
        return json.dumps({"score": by_name[asked[0]], "reasoning": f"{asked[0]} judged"})

    with FakeOpenAIServer(latency_s=0.0) as server:
        server.responder = responder
        grade = _grade(server, case, "I am fine, thank you!")
        assert server.request_count == 4
    assert grade.passed is passed
    assert grade.details["raw_score"] == pytest.approx(sum(scores) / 4)
    assert [c["score"] for c in grade.details["criteria_scores"]] == list(scores)
    assert grade.details["threshold"] == 0.7
    assert "Coherence judged\n\nConsistency judged" in grade.details["feedback"]


def test_g_eval_single_criterion_is_one_judgment() -> None:
    suite, _ = load_suite(EXAMPLES / "eval-g-eval" / "promptfooconfig.yaml")
    with FakeOpenAIServer(latency_s=0.0) as server:
        server.responder = lambda body: json.dumps({"score": 0.65, "reasoning": "ok"})
        grade = _grade(server, suite.tests[0], "I am fine.")
        assert server.request_count == 1
    assert not grade.passed and grade.details["raw_score"] == pytest.approx(0.65)

"""promptfoo's response-field and metric assertion types (similar:*, finish-reason, gleu, meteor,
tool-call-f1, trajectory:step-count / goal-success): expected values written from promptfoo's
src/assertions/*.ts and site/docs/configuration/expected-outputs, never read off our output.
Embeddings and judges come from the local OpenAI-compatible server over real HTTP."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from eval_pipelines.grading import registry
from eval_pipelines.grading.base import GradeInput
from eval_pipelines.grading.dispatch import Grade, agrade_output
from eval_pipelines.grading.graders._judging import calibrate
from eval_pipelines.grading.graders.semantic_sim import dot_product, euclidean
from eval_pipelines.grading.judge import OpenAIJudge
from eval_pipelines.run.targets.config import OpenAITargetConfig
from eval_pipelines.spec.models import Assertion, Message, TestCase
from tests.grading.test_model_graded import pair_with_similarity
from tests.support.fake_openai import FakeOpenAIServer, _embedding


def grade(server: FakeOpenAIServer | None, type_: str, output: str, *, negate: bool = False,
          trace: list[dict[str, Any]] | None = None, finish_reason: str | None = None, **config: Any) -> Grade:
    async def go() -> Grade:
        judge = None
        if server is not None:
            judge = OpenAIJudge(OpenAITargetConfig(name="judge", model="judge-model", max_retries=1),
                                api_key="sk-test", base_url=server.base_url)
        try:
            inp = GradeInput(case=TestCase(id="t", input=[Message(content="question")]), output=output,
                             judge=judge, trace=trace or [], **_measured(finish_reason))
            return await agrade_output(Assertion(type=type_, negate=negate, config=config), inp)
        finally:
            if judge is not None:
                await judge.aclose()

    return asyncio.run(go())


def _measured(finish_reason: str | None) -> dict[str, Any]:
    if finish_reason is None:
        return {}
    from eval_pipelines.grading.base import Measurements
    return {"measurements": Measurements(finish_reason=finish_reason)}


# ---- similar:cosine / similar:dot / similar:euclidean ---------------------------------------

OUT, REF = "The cat sat on the mat.", "A cat was sitting on a mat."


def test_metric_functions_by_hand() -> None:
    assert dot_product([1, 2, 3], [4, 5, 6]) == 32
    assert euclidean([0, 0], [3, 4]) == 5
    with pytest.raises(ValueError, match="different or zero length"):
        euclidean([1], [1, 2])


def test_similar_dot_is_the_dot_product_of_the_embeddings(fake_openai: FakeOpenAIServer) -> None:
    dot = sum(a * b for a, b in zip(_embedding(OUT, 8), _embedding(REF, 8)))
    g = grade(fake_openai, "semantic_sim", OUT, value=REF, metric="dot", threshold=0.75)
    assert g.details["dot"] == pytest.approx(dot, abs=1e-6)
    assert g.passed is (dot >= 0.75) and fake_openai.paths == ["/v1/embeddings"]
    g = grade(fake_openai, "semantic_sim", OUT, value=OUT, metric="dot", threshold=0.75)
    assert g.passed and g.details["dot"] == pytest.approx(1.0)  # the fake's vectors have norm 1


def test_similar_euclidean_threshold_is_a_maximum_distance(fake_openai: FakeOpenAIServer) -> None:
    # similarity.ts: pass when distance <= threshold; score 1 / (1 + distance)
    distance = math.dist(_embedding(OUT, 8), _embedding(REF, 8))
    above, below = distance + 0.05, distance - 0.05
    g = grade(fake_openai, "semantic_sim", OUT, value=REF, metric="euclidean", threshold=above)
    assert g.passed and g.details["distance"] == pytest.approx(distance, abs=1e-6)
    assert g.details["similarity"] == pytest.approx(1 / (1 + distance), abs=1e-6)
    assert g.score == pytest.approx(calibrate(1 / (1 + distance), 1 / (1 + above)), abs=1e-6)
    g = grade(fake_openai, "semantic_sim", OUT, value=REF, metric="euclidean", threshold=below)
    assert not g.passed and g.score < 0.8
    # not-similar:euclidean passes when the distance is above the threshold (the inverse verdict)
    g = grade(fake_openai, "semantic_sim", OUT, value=REF, metric="euclidean", threshold=below, negate=True)
    assert g.passed and g.reason.startswith("negated:")
    assert not grade(fake_openai, "semantic_sim", OUT, value=REF, metric="euclidean", threshold=above,
                     negate=True).passed
    # a distance threshold may exceed 1 (the distance of unit vectors reaches 2)
    assert grade(fake_openai, "semantic_sim", OUT, value=REF, metric="euclidean", threshold=2).passed


def test_not_similar_passes_below_the_threshold(fake_openai: FakeOpenAIServer) -> None:
    # similarity.ts: inverse passes when similarity <= threshold, scoring 1 - similarity
    mid, cos = pair_with_similarity(OUT, 0.3, 0.7)
    g = grade(fake_openai, "semantic_sim", OUT, value=mid, metric="cosine", threshold=0.75, negate=True)
    assert g.passed and g.score == pytest.approx(1 - calibrate(cos, 0.75), abs=1e-6)
    g = grade(fake_openai, "semantic_sim", OUT, value=mid, metric="dot", threshold=round(cos - 0.05, 3), negate=True)
    assert not g.passed
    assert grade(fake_openai, "semantic_sim", OUT, value=mid, metric="dot", threshold=round(cos - 0.05, 3)).passed


def test_similar_metric_params_are_checked() -> None:
    with pytest.raises(registry.ValidationError, match="less than or equal to 1 for the dot metric"):
        registry.parse_params("semantic_sim", {"metric": "dot", "threshold": 1.5})
    with pytest.raises(registry.ValidationError, match="cosine', 'dot' or 'euclidean'"):
        registry.parse_params("semantic_sim", {"metric": "manhattan"})
    assert registry.parse_params("semantic_sim", {"metric": "euclidean", "threshold": 3}).threshold == 3


# ---- finish-reason ---------------------------------------------------------------------------


@pytest.mark.parametrize("value, got, passed", [
    ("stop", "stop", True),
    ("STOP", "stop", True),  # case-insensitive (finishReason.ts)
    ("length", "stop", False),
    ("stop", "end_turn", True),  # normalised first (src/util/finishReason.ts): Anthropic's end_turn is stop
    ("length", "max_tokens", True),
    ("tool_calls", "function_call", True),
    ("content_filter", " Refusal ", True),
    ("pause_turn", "pause_turn", True),  # unknown reasons pass through, lower-cased
])
def test_finish_reason_compares_the_normalised_reason(value: str, got: str, passed: bool) -> None:
    g = grade(None, "finish_reason", "text", value=value, finish_reason=got)
    assert (g.passed, g.score) == (passed, 1.0 if passed else 0.0)
    if not passed:
        assert g.reason == f"Expected finish reason {value!r} but got {got!r}"


def test_finish_reason_not_form_missing_reason_and_bad_value() -> None:
    assert grade(None, "finish_reason", "x", value="length", finish_reason="stop", negate=True).passed
    assert not grade(None, "finish_reason", "x", value="stop", finish_reason="stop", negate=True).passed
    g = grade(None, "finish_reason", "x", value="stop")
    assert (g.passed, g.score, g.reason) == (False, 0.0, "Provider did not supply stop/finish reason")
    with pytest.raises(registry.ValidationError, match="at least 1 character"):
        registry.parse_params("finish_reason", {"value": ""})

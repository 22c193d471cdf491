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


# ---- gleu and meteor ---------------------------------------------------------------------------

from eval_pipelines.grading.graders.gleu import gleu  # noqa: E402
from eval_pipelines.grading.graders.meteor import meteor  # noqa: E402


def test_gleu_is_the_smaller_of_pooled_ngram_precision_and_recall() -> None:
    # gleu.ts: n = 1..4 pooled. Unigrams match 5 (the x1, cat, sat, on, mat), bigrams 3, trigrams 2,
    # 4-grams 1: 11 matches; 18 n-grams on each side.
    assert gleu("the cat sat on the mat", ["the cat sat on a mat"]) == pytest.approx(11 / 18)
    # lower-cased, trailing periods cut: identical word lists score 1
    assert gleu("Hello World.", ["hello world"]) == 1.0
    # a shorter output: 2 unigram matches (no bigram); 3 output n-grams, 3 + 2 + 1 reference ones
    assert gleu("hello world", ["hello big world"]) == pytest.approx(min(2 / 3, 2 / 6))
    assert gleu("   ", ["hello"]) == 0.0
    assert gleu("hello world", ["goodbye", "hello world"]) == 1.0  # the best reference


def test_gleu_grader_threshold_and_not_form() -> None:
    g = grade(None, "gleu", "the cat sat on the mat", value="the cat sat on a mat")
    assert g.passed and g.details["gleu"] == pytest.approx(11 / 18)  # >= the default 0.5
    assert not grade(None, "gleu", "the cat sat on the mat", value="the cat sat on a mat", threshold=0.7).passed
    # not-gleu passes below the threshold (gleu.ts: score >= threshold !== inverse)
    assert grade(None, "gleu", "the cat sat on the mat", value="the cat sat on a mat", threshold=0.7,
                 negate=True).passed
    assert not grade(None, "gleu", "the cat sat on the mat", value="the cat sat on a mat", negate=True).passed
    with pytest.raises(registry.ValidationError):
        registry.parse_params("gleu", {"value": []})


def test_meteor_exact_stem_and_fragmentation_by_hand() -> None:
    # five exact matches in one chunk: Fmean 1, penalty 0.5 * (1/5)^3
    assert meteor("The weather is beautiful today", ["The weather is beautiful today"]) == pytest.approx(0.996)
    # "the" exact; cats/cat and running/runs by their stems; P 3/4, R 1, 2 chunks of 3 matches
    fmean = (3 / 4) / (0.9 * 3 / 4 + 0.1)
    assert meteor("the cats are running", ["the cat runs"]) == pytest.approx((1 - 0.5 * (2 / 3) ** 3) * fmean)
    # alpha, beta, gamma as given: alpha 0.5 is the harmonic mean, gamma 0 no penalty
    assert meteor("the cats are running", ["the cat runs"], alpha=0.5, beta=3, gamma=0) == pytest.approx(
        2 * (3 / 4) / (3 / 4 + 1))
    assert meteor("nothing shared", ["the cat runs"]) == 0.0
    with pytest.raises(ValueError, match="Invalid inputs"):
        meteor("", ["x"])


def test_meteor_grader_threshold_not_form_and_errors() -> None:
    g = grade(None, "meteor", "the cats are running", value=["a dog", "the cat runs"])
    assert g.passed and g.details["meteor"] == pytest.approx((1 - 0.5 * (2 / 3) ** 3) * (3 / 4) / (0.9 * 3 / 4 + 0.1))
    assert not grade(None, "meteor", "the cats are running", value="the cat runs", threshold=0.9).passed
    assert grade(None, "meteor", "the cats are running", value="the cat runs", threshold=0.9, negate=True).passed
    assert not grade(None, "meteor", "the cats are running", value="the cat runs", negate=True).passed
    assert grade(None, "meteor", "", value="x").status == "error"
    with pytest.raises(registry.ValidationError, match="less than or equal to 1"):
        registry.parse_params("meteor", {"value": "x", "alpha": 2})

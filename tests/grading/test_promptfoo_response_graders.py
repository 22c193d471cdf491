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
from eval_pipelines.suite.models import Assertion, Message, TestCase
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
    assert g.score == pytest.approx(1 / (1 + distance), abs=1e-6)
    assert g.calibrated_score == pytest.approx(calibrate(1 / (1 + distance), 1 / (1 + above)), abs=1e-6)
    g = grade(fake_openai, "semantic_sim", OUT, value=REF, metric="euclidean", threshold=below)
    assert not g.passed and g.calibrated_score < 0.8
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
    assert g.passed and g.score == pytest.approx(1 - cos, abs=1e-6)
    assert g.calibrated_score == pytest.approx(1 - calibrate(cos, 0.75), abs=1e-6)
    g = grade(fake_openai, "semantic_sim", OUT, value=mid, metric="dot", threshold=round(cos - 0.05, 3), negate=True)
    assert not g.passed
    assert grade(fake_openai, "semantic_sim", OUT, value=mid, metric="dot", threshold=round(cos - 0.05, 3)).passed


def test_similar_to_any_of_a_list_of_references(fake_openai: FakeOpenAIServer) -> None:
    # similar.ts: passes when similar to at least one value; not-similar only when similar to none
    mid, cos = pair_with_similarity(OUT, 0.3, 0.7)
    g = grade(fake_openai, "semantic_sim", OUT, value=[mid, OUT], threshold=0.75)
    assert g.passed and g.details["reference_index"] == 1 and g.details["values"][0] == pytest.approx(cos, abs=1e-6)
    assert fake_openai.requests[-1]["input"] == [OUT, mid, OUT]  # one request for all the texts
    assert not grade(fake_openai, "semantic_sim", OUT, value=[mid, OUT], threshold=0.75, negate=True).passed
    assert grade(fake_openai, "semantic_sim", OUT, value=[mid, REF], threshold=0.75, negate=True).passed
    # euclidean: the smallest distance counts
    g = grade(fake_openai, "semantic_sim", OUT, value=[REF, OUT], metric="euclidean", threshold=0.1)
    assert g.passed and g.details["distance"] == pytest.approx(0.0, abs=1e-6) and g.details["reference_index"] == 1


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


# ---- tool-call-f1 --------------------------------------------------------------------------------

import json  # noqa: E402

from eval_pipelines.grading.graders.tool_call_f1 import names_in_text  # noqa: E402

CALLS = [{"tool": "search", "args": {"q": "x"}}, {"tool": "compose_reply", "args": {}}]


def test_tool_call_f1_of_called_against_expected_names() -> None:
    # toolCallF1.ts: called {search, compose_reply}, expected {search, fetch}: P 1/2, R 1/2, F1 1/2
    g = grade(None, "tool_call_f1", "done", value=["search", "fetch"], trace=CALLS)
    assert (g.details["precision"], g.details["recall"], g.details["f1"]) == (0.5, 0.5, 0.5)
    assert not g.passed  # promptfoo's default threshold 1: exactly the expected tools
    assert grade(None, "tool_call_f1", "done", value=["search", "fetch"], threshold=0.5, trace=CALLS).passed
    assert grade(None, "tool_call_f1", "done", value=["compose_reply", "search"], trace=CALLS).passed
    # not-tool-call-f1 passes below the threshold; nothing called: F1 0
    assert grade(None, "tool_call_f1", "done", value=["search", "fetch"], trace=CALLS, negate=True).passed
    g = grade(None, "tool_call_f1", "plain text", value=["search"])
    assert (g.passed, g.details["f1"], g.details["called"]) == (False, 0.0, [])
    with pytest.raises(registry.ValidationError, match="at least one expected tool"):
        registry.parse_params("tool_call_f1", {"value": [" "]})


def test_tool_call_f1_reads_calls_written_in_the_output() -> None:
    openai = {"tool_calls": [{"function": {"name": "get_weather", "arguments": "{}"}}, {"name": "lookup"}]}
    assert names_in_text(json.dumps(openai)) == {"get_weather", "lookup"}
    anthropic = [{"type": "text", "text": "hi"}, {"type": "tool_use", "name": "fetch", "input": {}}]
    assert names_in_text(json.dumps(anthropic)) == {"fetch"}
    assert names_in_text(json.dumps({"functionCall": {"name": "g"}})) == {"g"}
    assert names_in_text(json.dumps({"toolCall": {"functionCalls": [{"name": "a"}, {"name": "b"}]}})) == {"a", "b"}
    assert names_in_text(json.dumps({"type": "function_call", "name": "r"})) == {"r"}
    mixed = 'Calling tools:\n{"type": "tool_use", "name": "search"}\n  [{"function": {"name": "fetch"}}]\ndone'
    assert names_in_text(mixed) == {"search", "fetch"}
    assert names_in_text('see {"type": "tool_use", "name": "inline"} here') == set()  # not a whole-line block
    assert names_in_text('Example:\n```json\n{"type": "tool_use", "name": "fenced"}\n```\n') == set()
    g = grade(None, "tool_call_f1", mixed, value=["search", "fetch"])
    assert g.passed and g.details["f1"] == 1.0


# ---- trajectory:step-count ------------------------------------------------------------------------

STEPS = [{"tool": "search_orders", "args": {"id": 1}}, {"tool": "Search_Orders", "args": {"id": 2}},
         {"tool": "exec_command", "args": {"cmd": ["cat", "task.md"]}}, {"tool": "compose_reply", "args": {}},
         {"tool": "shell", "args": {}}]  # a shell tool without a command is a tool step (trajectoryUtils.ts)


@pytest.mark.parametrize("config, passed, count", [
    ({"step_type": "command", "pattern": "*task.md*", "min": 1}, True, 1),  # openai-agents-advanced's example
    ({"step_type": "command", "pattern": "cat", "min": 1}, True, 1),  # the executable is an alias
    ({"step_type": "command", "pattern": "exec_command", "max": 0}, False, 1),  # so is the tool name
    ({"step_type": "tool", "max": 3}, False, 4),
    ({"step_type": ["tool", "command"], "min": 5, "max": 5}, True, 5),
    ({"pattern": "SEARCH_*", "min": 2, "max": 2}, True, 2),  # a whole-name glob, case-insensitive
    ({"pattern": "search_order?", "min": 3}, False, 2),
    ({"pattern": "reply", "max": 0}, True, 0),
])
def test_step_count_counts_steps_of_a_type_and_pattern(config: dict, passed: bool, count: int) -> None:
    g = grade(None, "trajectory_step_count", "", trace=STEPS, **config)
    assert (g.passed, g.details["count"]) == (passed, count)


def test_step_count_not_form_and_bad_values() -> None:
    assert grade(None, "trajectory_step_count", "", trace=STEPS, step_type="tool", max=3, negate=True).passed
    assert not grade(None, "trajectory_step_count", "", trace=STEPS, step_type="tool", min=1, negate=True).passed
    for config, message in [({"step_type": "tool"}, "give `min`, `max` or both"), ({"min": 3, "max": 1}, "above"),
                            ({"step_type": "thought", "min": 1}, "'reasoning', 'message' or 'span'")]:
        with pytest.raises(registry.ValidationError, match=message):
            registry.parse_params("trajectory_step_count", config)


# ---- trajectory:goal-success ----------------------------------------------------------------------

def _judge_says(server: FakeOpenAIServer, *replies: dict) -> None:
    queue = [json.dumps(r) for r in replies]
    server.responder = lambda body: queue.pop(0) if len(queue) > 1 else queue[0]


def test_goal_success_asks_the_judge_with_goal_trajectory_and_output(fake_openai: FakeOpenAIServer) -> None:
    _judge_says(fake_openai, {"reason": "looked the order up and answered", "pass": True, "score": 0.9})
    g = grade(fake_openai, "trajectory_goal_success", "Your order shipped.", trace=STEPS[:1],
              goal="Tell the user whether the order shipped")
    assert g.passed and g.score == 0.9 and g.details["judge_pass"] is True
    sent = fake_openai.requests[-1]["messages"][-1]["content"]
    assert "<Goal>\nTell the user whether the order shipped\n</Goal>" in sent
    assert '{"stepCount": 1, "steps": [{"index": 1, "type": "tool", "name": "search_orders"}]}' in sent
    assert "<Output>\nYour order shipped.\n</Output>" in sent
    # a threshold above the judge's score fails; negated, the achieved goal fails
    assert not grade(fake_openai, "trajectory_goal_success", "x", goal="g", threshold=0.95).passed
    assert not grade(fake_openai, "trajectory_goal_success", "x", goal="g", negate=True).passed
    _judge_says(fake_openai, {"reason": "no lookup", "pass": False, "score": 0.0})
    g = grade(fake_openai, "trajectory_goal_success", "x", goal="g", negate=True)
    assert g.passed and g.score == 1.0


def test_goal_success_judge_failures_are_errors_even_negated(fake_openai: FakeOpenAIServer) -> None:
    _judge_says(fake_openai, {"reason": "no verdict", "score": 0.5})  # no boolean pass, every time
    g = grade(fake_openai, "trajectory_goal_success", "x", goal="g", negate=True)
    assert g.status == "error" and not g.passed
    assert grade(None, "trajectory_goal_success", "x", goal="g").status == "error"  # no judge configured
    with pytest.raises(registry.ValidationError):
        registry.parse_params("trajectory_goal_success", {"goal": ""})


# ---- a real tool-calling run, graded ---------------------------------------------------------------


def test_tool_loop_run_feeds_f1_step_count_and_finish_reason(fake_openai: FakeOpenAIServer) -> None:
    """The trace and finish reason come from OpenAITarget's tool loop over HTTP, not from a test's dict."""
    from eval_pipelines.grading.base import GradingContext
    from eval_pipelines.grading.dispatch import grade_input, grade_output
    from eval_pipelines.run.targets.base import TargetRequest
    from eval_pipelines.run.targets.openai_compat import OpenAITarget
    from eval_pipelines.suite.models import ToolSpec

    fake_openai.script = [
        {"tool_calls": [{"name": "search_orders", "arguments": {"id": 7}},
                        {"name": "exec_command", "arguments": {"cmd": "cat task.md"}}]},
        {"tool_calls": [{"name": "search_orders", "arguments": {"id": 8}}]},
        "Order 7 shipped.",
    ]
    tools = [ToolSpec(name="search_orders", result={"status": "shipped"}), ToolSpec(name="exec_command", result="ok")]
    case = TestCase(id="t", input=[Message(content="Did order 7 ship?")], tools=tools)

    async def run():  # noqa: ANN202
        target = OpenAITarget(OpenAITargetConfig(name="agent", model="m", max_retries=0),
                              api_key="sk-test", base_url=fake_openai.base_url)
        try:
            return await target.generate(TargetRequest(test_id="t", trial=0, system_prompt=None,
                                                       messages=case.input, timeout_s=10, tools=tools))
        finally:
            await target.aclose()

    output = asyncio.run(run())
    assert output.output == "Order 7 shipped." and output.finish_reason == "stop" and len(output.trace) == 3
    inp = grade_input(output, case, None, None, GradingContext())

    def check(type_: str, **config: Any) -> bool:
        return grade_output(Assertion(type=type_, config=config), inp).passed

    assert check("tool_call_f1", value=["search_orders", "exec_command"])
    assert not check("tool_call_f1", value=["search_orders"])  # F1 2/3: exec_command was not expected
    assert check("trajectory_step_count", step_type="tool", pattern="search_*", min=2, max=2)
    assert check("trajectory_step_count", step_type="command", pattern="*task.md", min=1, max=1)
    assert check("finish_reason", value="stop")


# ---- perplexity and perplexity-score ---------------------------------------------------------------


def _with_logprobs(type_: str, logprobs: tuple[float, ...] | None, negate: bool = False, **config: Any) -> Grade:
    from eval_pipelines.grading.base import Measurements

    inp = GradeInput(case=TestCase(id="t", input=[Message(content="q")]), output="hello there",
                     measurements=Measurements(logprobs=logprobs))
    return asyncio.run(agrade_output(Assertion(type=type_, negate=negate, config=config), inp))


def test_perplexity_is_exp_of_minus_the_mean_logprob() -> None:
    # perplexity.ts: exp(-(−0.1 − 0.5) / 2) = e^0.3 ≈ 1.3499; passes at or below the threshold
    g = _with_logprobs("perplexity", (-0.1, -0.5), threshold=1.5)
    assert g.passed and g.score == 1.0 and g.details["perplexity"] == pytest.approx(math.exp(0.3))
    assert not _with_logprobs("perplexity", (-0.1, -0.5), threshold=1.3).passed
    assert _with_logprobs("perplexity", (-0.1, -0.5), threshold=1.3, negate=True).passed
    assert _with_logprobs("perplexity", (-5.0,)).passed  # no threshold: always passes, value recorded
    g = _with_logprobs("perplexity", None, threshold=2)
    assert g.status == "error" and "does not support providers that do not return logProbs" in g.reason


def test_perplexity_score_is_one_over_one_plus_perplexity() -> None:
    norm = 1 / (1 + math.exp(0.3))  # ≈ 0.4256
    g = _with_logprobs("perplexity_score", (-0.1, -0.5))
    assert g.passed and g.score == pytest.approx(norm)  # no threshold: passes, scores the value
    g = _with_logprobs("perplexity_score", (-0.1, -0.5), threshold=0.4)
    assert g.passed and g.details["perplexity_score"] == pytest.approx(norm)
    assert g.score == pytest.approx(norm) and g.calibrated_score == pytest.approx(calibrate(norm, 0.4))
    assert not _with_logprobs("perplexity_score", (-0.1, -0.5), threshold=0.5).passed
    assert _with_logprobs("perplexity_score", (-0.1, -0.5), threshold=0.5, negate=True).passed
    assert _with_logprobs("perplexity_score", ()).status == "error"
    with pytest.raises(registry.ValidationError):
        registry.parse_params("perplexity_score", {"threshold": 1.5})


# ---- `not-` on thresholded scores: promptfoo inverts the pass (score >= threshold) -------------

@pytest.mark.parametrize(("type_", "config", "detail"), [
    ("rouge_n", {"value": "the cat sat on the mat", "threshold": 0.75}, "rouge"),
    ("bleu", {"value": "the cat sat on the mat today", "threshold": 0.5}, "bleu"),
    ("python", {"value": "0.5", "threshold": 0.7}, "raw"),
])
def test_not_passes_whenever_the_score_is_below_the_threshold(type_: str, config: dict, detail: str) -> None:
    # A score between a quarter of the threshold and the threshold: before, `not-` read the calibrated
    # score (below 0.2 to pass) and failed these; promptfoo's inverse passes them.
    output = "the cat" if type_ != "bleu" else "the cat sat on a rug"
    plain, negated = (grade(None, type_, output, negate=n, **config) for n in (False, True))
    raw = plain.details[detail]
    assert config["threshold"] / 4 < raw < config["threshold"], raw
    assert (plain.passed, negated.passed) == (False, True)
    above = grade(None, type_, output, negate=True, **{**config, "threshold": raw / 2})
    assert not above.passed  # at or over the threshold, `not-` fails

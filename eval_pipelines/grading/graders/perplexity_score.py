"""``perplexity_score`` (promptfoo's ``perplexity-score``, src/assertions/perplexity.ts): the
answer's perplexity normalised to 0..1, higher is better: 1 / (1 + perplexity), perplexity
being exp(−mean token logprob) (see ``perplexity``).

Passes when the normalised score reaches ``threshold``; without a threshold it always passes
(promptfoo's), scoring the normalised value. With a threshold its calibrated score is
``_judging.calibrate(score, threshold)``. An
output without log-probabilities is an ``error`` grade.
"""

from __future__ import annotations

from pydantic import Field

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders._judging import calibrate
from eval_pipelines.grading.graders.perplexity import NO_LOGPROBS, perplexity


class PerplexityScoreParams(Params):
    threshold: float | None = Field(default=None, ge=0, le=1)


class PerplexityScore(Grader[PerplexityScoreParams]):
    type = "perplexity_score"
    group = "measurements"  # section of docs/assertions.md
    Params = PerplexityScoreParams

    def grade(self, params: PerplexityScoreParams, inp: GradeInput) -> Outcome:
        logprobs = inp.measurements.logprobs
        if not logprobs:
            return Outcome(0.0, NO_LOGPROBS.format(kind="perplexity-score"), status="error")
        value = perplexity(logprobs)
        score = 1 / (1 + value)
        passed = params.threshold is None or score >= params.threshold
        reason = (f"perplexity score {score:.4f}" + ("" if params.threshold is None else
                  f" {'>=' if passed else '<'} threshold {params.threshold:g}"))
        return Outcome(score, reason,
                       {"perplexity_score": score, "perplexity": value, "tokens": len(logprobs),
                        "threshold": params.threshold, "passed": passed}, passed=passed,
                       calibrated=None if params.threshold is None else calibrate(score, params.threshold))

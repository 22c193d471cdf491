"""``perplexity`` (promptfoo's ``perplexity``, src/assertions/perplexity.ts): how surprised the
model was by its own answer, from the answer's token log-probabilities.

perplexity = exp(−mean token logprob). Passes when it is at most ``threshold``; without a
threshold it always passes (promptfoo's ``threshold === undefined ? true``), recording the
value. Score 1 or 0. The log-probabilities are asked for (``logprobs: true``) only for cases
with a perplexity assertion, and stored in ``model_outputs.logprobs``; an output without
them (a command target, a server that does not return them) is an ``error`` grade, as
promptfoo throws "does not support providers that do not return logProbs".
"""

from __future__ import annotations

import math

from pydantic import Field

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params

NO_LOGPROBS = "{kind} assertion does not support providers that do not return logProbs"


def perplexity(logprobs: tuple[float, ...]) -> float:
    return math.exp(-sum(logprobs) / len(logprobs))


class PerplexityParams(Params):
    threshold: float | None = Field(default=None, gt=0)


class Perplexity(Grader[PerplexityParams]):
    type = "perplexity"
    group = "measurements"  # section of docs/assertions.md
    score_range = "0 or 1"
    Params = PerplexityParams

    def grade(self, params: PerplexityParams, inp: GradeInput) -> Outcome:
        logprobs = inp.measurements.logprobs
        if not logprobs:
            return Outcome(0.0, NO_LOGPROBS.format(kind="Perplexity"), status="error")
        value = perplexity(logprobs)
        passed = params.threshold is None or value <= params.threshold
        reason = (f"perplexity {value:.4f}" + ("" if params.threshold is None else
                  f" {'<=' if passed else '>'} threshold {params.threshold:g}"))
        return Outcome(1.0 if passed else 0.0, reason,
                       {"perplexity": value, "tokens": len(logprobs), "threshold": params.threshold,
                        "passed": passed}, passed=passed)

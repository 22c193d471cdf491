"""``rouge_n`` (promptfoo's ``rouge-n``): ROUGE-N recall of ``value`` in the output.

Passes when the recall reaches ``threshold`` (default 0.75, promptfoo's); ``n``
defaults to 1. The grade score is the recall, its calibrated score ``_judging.calibrate(recall, threshold)`` (the
threshold lands on the outer pass mark 0.8); ``details.rouge`` is the recall.
"""

from __future__ import annotations

from pydantic import Field

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders._judging import calibrate
from eval_pipelines.grading.graders._text_metrics import rouge_n


class RougeParams(Params):
    value: str
    threshold: float = Field(default=0.75, gt=0, le=1)
    n: int = Field(default=1, ge=1, le=4)


class RougeN(Grader[RougeParams]):
    type = "rouge_n"
    aliases = ("rouge",)
    group = "deterministic text"  # section of docs/assertions.md
    Params = RougeParams

    def grade(self, params: RougeParams, inp: GradeInput) -> Outcome:
        score = rouge_n(inp.output, params.value, params.n)
        passed = score >= params.threshold  # stated, so `not-` inverts it as promptfoo's inverse does
        return Outcome(score, f"ROUGE-{params.n} {score:.3f} (threshold {params.threshold:g})",
                       {"rouge": score, "threshold": params.threshold, "passed": passed}, passed=passed,
                       calibrated=calibrate(score, params.threshold))

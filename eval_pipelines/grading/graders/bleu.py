"""``bleu`` (promptfoo): BLEU-4 of the output against ``value`` (one reference or a list),
computed as promptfoo's ``calculateBleuScore`` does (see ``_text_metrics.bleu``).

Passes when BLEU reaches ``threshold`` (default 0.5, promptfoo's). The grade
score is the BLEU score, its calibrated score ``_judging.calibrate(bleu, threshold)``.
"""

from __future__ import annotations

from pydantic import Field

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders._judging import calibrate
from eval_pipelines.grading.graders._text_metrics import bleu


class BleuParams(Params):
    value: str | list[str]
    threshold: float = Field(default=0.5, gt=0, le=1)


class Bleu(Grader[BleuParams]):
    type = "bleu"
    group = "deterministic text"  # section of docs/assertions.md
    Params = BleuParams

    def grade(self, params: BleuParams, inp: GradeInput) -> Outcome:
        references = [params.value] if isinstance(params.value, str) else params.value
        try:
            score = bleu(inp.output, references)
        except ValueError as exc:
            return Outcome(0.0, str(exc), status="error")
        passed = score >= params.threshold  # stated, so `not-` inverts it as promptfoo's inverse does
        return Outcome(score, f"BLEU {score:.3f} (threshold {params.threshold:g})",
                       {"bleu": score, "threshold": params.threshold, "passed": passed}, passed=passed,
                       calibrated=calibrate(score, params.threshold))

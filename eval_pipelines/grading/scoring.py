"""The scoring model of seed 001: required gates, weighted mean, verdict.

1. Every required gate must reach its minimum (``true`` means the pass
   threshold 0.8, a number is its own minimum); one failed gate makes the test
   score 0 and the verdict fail.
2. Otherwise the score is the weighted mean of the assertions' scores (outer
   weights only; inner weights stay inside composite/rubric graders).
3. Verdict: pass >= 0.8, borderline >= 0.6, fail below.

Statuses stay apart from verdicts: a case whose output is an error, or whose
grader errored, is ``error`` (score 0, verdict fail, never a pass); a case with
nothing to evaluate is ``not_evaluated`` (no score, no verdict, counted in
neither pass nor fail); a case the run never called (failFast, cost limit) is
``not_run``, counted in neither either.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Literal, Sequence

from eval_pipelines.grading.base import Grade, GradingContext, decided_score
from eval_pipelines.grading.dispatch import agrade_outputs
from eval_pipelines.run.targets.base import ModelOutput
from eval_pipelines.suite.models import PASS_THRESHOLD, Suite, gate_minimum

if TYPE_CHECKING:
    from eval_pipelines.grading.judge import Judge

BORDERLINE_THRESHOLD = 0.6

CaseStatus = Literal["graded", "not_evaluated", "error", "pending_human", "not_run"]
# The model phase's error text for a call it never made (failFast stopped the suite,
# trials.cost_limit_usd was reached): such a case did not fail, it was not run.
NOT_RUN_PREFIX = "not run: "


@dataclass(frozen=True)
class CaseScore:
    score: float | None
    verdict: Literal["pass", "borderline", "fail"] | None
    status: CaseStatus
    reason: str


def verdict_for(score: float) -> Literal["pass", "borderline", "fail"]:
    if score >= PASS_THRESHOLD:
        return "pass"
    if score >= BORDERLINE_THRESHOLD:
        return "borderline"
    return "fail"


def output_error(output: ModelOutput) -> str | None:
    """Why an output has nothing to grade (its error, or no text), or None."""
    if output.error is not None:
        return output.error
    return "no output" if output.output is None else None


def score_case(grades: Sequence[Grade], output_error: str | None = None, *,
               rule: Literal["weighted", "all_pass"] = "weighted", threshold: float | None = None) -> CaseScore:
    """The case's score and verdict; ``rule`` is the suite's ``scoring`` (see ``Suite``),
    ``threshold`` the case's own (promptfoo's test ``threshold``, read by ``all_pass``)."""
    if output_error is not None and output_error.startswith(NOT_RUN_PREFIX):
        return CaseScore(None, None, "not_run", output_error)
    if output_error is not None:
        return CaseScore(0.0, "fail", "error", f"no output: {output_error}")
    function = next((g for g in grades if g.assertion_type == "scoring_function"), None)
    if function is not None:  # promptfoo's assertScoringFunction: its {pass, score} are the test's
        rest = [g for g in grades if g is not function]
        base = score_case(rest, rule=rule, threshold=threshold) if rest else None
        if base is not None and base.status in ("error", "pending_human"):
            return base
        # select-best / max-score are applied after the function, as in promptfoo's evaluator
        lost = next((g for g in rest if g.assertion_type in ("select_best", "max_score") and not g.passed), None)
        if lost is not None:
            return CaseScore(0.0, "fail", "graded", f"{lost.assertion_name}: {lost.reason}")
        return CaseScore(function.score, "pass" if function.passed else "fail", "graded",
                         f"scoring function: {function.reason}")
    if not grades:
        return CaseScore(None, None, "not_evaluated", "no assertions or criteria to evaluate")
    errored = [g for g in grades if g.status == "error"]
    if errored:
        return CaseScore(0.0, "fail", "error", f"{errored[0].assertion_name}: {errored[0].reason}")
    if any(g.status == "pending_human" for g in grades):
        return CaseScore(None, None, "pending_human", "waiting for human ratings")
    scored = [g for g in grades if g.status == "graded"]
    # A measured gate that failed fails the case, whatever else was not measured: the
    # failure is known, and no unmeasured gate could turn it into a pass.
    for grade in scored:
        minimum = gate_minimum(grade.required)
        if minimum is not None and decided_score(grade) < minimum:
            shown = f"{grade.score:.2f}" + ("" if grade.calibrated_score is None
                                            else f" (calibrated {grade.calibrated_score:.2f})")
            return CaseScore(
                0.0,
                "fail",
                "graded",
                f"required gate {grade.assertion_name} scored {shown} < {minimum:.2f}",
            )
    unverifiable = [g for g in grades if g.status == "not_evaluated" and gate_minimum(g.required) is not None]
    if unverifiable:
        # A gate that cannot be checked cannot be waved through.
        return CaseScore(None, None, "not_evaluated",
                         f"required gate {unverifiable[0].assertion_name} could not be evaluated: "
                         f"{unverifiable[0].reason}")
    if not scored:
        return CaseScore(None, None, "not_evaluated", "no assertion could be evaluated")
    # The stored score is the weighted mean of the graders' own scores (what mean_score
    # averages); the verdict is decided on their calibrated scores, so a grader's own threshold
    # decides the case as it decides the grade (the two are equal without such graders).
    score = weighted_mean(scored, lambda g: g.score)
    decided = weighted_mean(scored, decided_score)
    failing = [g.assertion_name for g in scored if not g.passed]
    reason = "all assertions passed" if not failing else f"failed: {', '.join(failing)}"
    if rule == "all_pass":
        # promptfoo: every assertion must pass, unless the test sets a threshold on its score.
        if threshold is not None:
            passed = score >= threshold
            reason = f"score {score:.2f} {'>=' if passed else '<'} threshold {threshold:g}; {reason}"
        else:
            passed = not failing
        return CaseScore(score, "pass" if passed else "fail", "graded", reason)
    if abs(decided - score) > 1e-9:
        reason += f"; verdict on the calibrated score {decided:.2f}"
    return CaseScore(score, verdict_for(decided), "graded", reason)


def weighted_mean(grades: Sequence[Grade], value: Callable[[Grade], float]) -> float:
    """Outer weights only; a plain mean when every weight is 0."""
    total_weight = sum(g.weight for g in grades)
    if total_weight == 0:
        return sum(value(g) for g in grades) / len(grades)
    return sum(value(g) * g.weight for g in grades) / total_weight




@dataclass(frozen=True)
class GradedOutput:
    output: ModelOutput
    grades: list[Grade]
    result: CaseScore


def grade_outputs(suite: Suite, outputs: list[ModelOutput], suite_dir: Path | None = None,
                  judge: "Judge | None" = None, context: GradingContext | None = None) -> list[GradedOutput]:
    """Grade and score outputs one by one (scripts and tests; the pipeline grades a
    partition through ``dispatch.grade_frame`` and scores the stored grades)."""
    graded = asyncio.run(agrade_outputs(suite, outputs, suite_dir, judge, context))
    cases = {c.id: c for c in suite.tests}
    return [GradedOutput(o, grades, score_case(grades, output_error(o), rule=suite.scoring,
                                               threshold=cases[o.test_id].threshold))
            for o, grades in graded]

"""``model`` (seed 003 model-based grader; also ``model_graded``).

The prompt is seed 003's ``model_grader_prompt`` (``{input}``, ``{output}``,
``{expected}``, ``{rubric}``), with the ``examples`` as few-shot calibration
between the rubric and the instructions, and a response format that names the
scoring: the judge answers ``{"scores": {...}, "overall_score": ..., "passed",
"justification", "specific_feedback": [...]}`` (``score`` is accepted for
``overall_score``).

Scoring (``scoring.type``)
    ``numeric`` (default, ``range`` [1, 5]): ``(s - lo) / (hi - lo)``; a score
    outside the range is re-asked. ``boolean``: true 1, false 0.
    ``categorical``: ``categories`` as labels, worst first, score
    ``index / (n - 1)``; or as ``{label, score}`` entries with explicit scores in
    [0, 1]. Per-criterion ``scores`` the judge gives are kept raw in
    ``details.raw_scores`` and, where they fit the scoring, normalised in
    ``details.rubric_scores``.

Verdict (issue 30, decided from seed 003): the seed's response format has the judge
state ``passed`` itself, so the judge's ``passed`` is the verdict when it gives one; a
``threshold`` the suite writes is the author's own mark and wins; with neither, the
pass mark is 0.75 of the scale: 4 on seed 003's 1-5 scale ("4: Good", "Mostly
correct, minor issues" in its rubrics and rating scales), the second-best of five
categories. The grade score is the normalised ``overall_score`` the judge gave
(4 of 5 is 0.75); ``calibrated`` is ``_judging.calibrate(normalised, mark)``, held
on the side of the pass mark the judge chose when its ``passed`` decides, so the
case's verdict follows the judge's. ``details.judge_passed`` is the judge's verdict,
``details.decided_by`` says what decided. ``model`` names the model the suite asked for; the judge
is fixed by the suite, so it is only recorded (``details.requested_model``).
``max_tokens`` is recorded too but not applied: the judge interface has no
per-call token limit (the judge target's own ``max_tokens`` applies).
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, model_validator

from eval_pipelines.grading.graders import _judging as J
from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders.text import as_text

MODEL_GRADER_PROMPT = """\
You are an expert evaluator. Your task is to grade the following output according to the rubric provided.

## Input Given to System
{input}

## System Output
{output}

## Expected Output (Reference)
{expected}

## Evaluation Rubric
{rubric}
{examples}
## Instructions
1. Carefully compare the system output against the expected output
2. Apply each criterion from the rubric
3. Provide specific justification for each score
4. Be consistent and objective
"""

# Seed 003 scales are 1-5 with 4 "Good": a normalised 0.75 passes (see the module docstring).
DEFAULT_PASS_MARK = 0.75
TRUE_WORDS = {"true", "yes", "pass", "passed", "1"}
FALSE_WORDS = {"false", "no", "fail", "failed", "0"}


class Category(Params):
    label: str = Field(min_length=1)
    score: float = Field(ge=0, le=1)


class Scoring(Params):
    type: Literal["numeric", "categorical", "boolean"] = "numeric"
    range: tuple[float, float] = (1.0, 5.0)
    categories: list[str | Category] = []

    @model_validator(mode="after")
    def _consistent(self) -> "Scoring":
        lo, hi = self.range
        if not hi > lo:
            raise ValueError(f"range [{lo:g}, {hi:g}] must have its low end first")
        if self.type == "categorical":
            if len(self.categories) < 2:
                raise ValueError("categorical scoring needs at least two `categories`")
            kinds = {isinstance(c, Category) for c in self.categories}
            if len(kinds) > 1:
                raise ValueError("give `categories` either all as labels or all as {label, score}")
            labels = [self.label(c).lower() for c in self.categories]
            if len(set(labels)) != len(labels):
                raise ValueError("category labels must be unique")
        return self

    @staticmethod
    def label(category: str | Category) -> str:
        return category.label if isinstance(category, Category) else category

    def describe(self) -> str:
        if self.type == "numeric":
            lo, hi = self.range
            return f"a number from {lo:g} (worst) to {hi:g} (best)"
        if self.type == "boolean":
            return "true (meets the rubric) or false (does not)"
        labels = ", ".join(f'"{self.label(c)}"' for c in self.categories)
        order = "" if isinstance(self.categories[0], Category) else " (listed from worst to best)"
        return f"exactly one of {labels}{order}"

    def placeholder(self) -> str:
        if self.type == "numeric":
            return f"<number from {self.range[0]:g} to {self.range[1]:g}>"
        if self.type == "boolean":
            return "<true or false>"
        return "<one of " + ", ".join(f'"{self.label(c)}"' for c in self.categories) + ">"

    def normalise(self, value: Any, what: str = "the score") -> float:
        """The score in [0, 1]; raises ``ReplyInvalid`` for a value outside the scoring."""
        if self.type == "numeric":
            lo, hi = self.range
            return (J.in_range(value, lo, hi, what) - lo) / (hi - lo)
        if self.type == "boolean":
            if isinstance(value, bool):
                return 1.0 if value else 0.0
            word = str(value).strip().lower()
            if word in TRUE_WORDS:
                return 1.0
            if word in FALSE_WORDS:
                return 0.0
            raise J.ReplyInvalid(f"{what} must be true or false, got {value!r}")
        word = str(value).strip().lower()
        for index, category in enumerate(self.categories):
            if self.label(category).strip().lower() == word:
                if isinstance(category, Category):
                    return category.score
                return index / (len(self.categories) - 1)
        raise J.ReplyInvalid(f"{what} must be one of "
                             + ", ".join(repr(self.label(c)) for c in self.categories) + f", got {value!r}")


class Example(Params):
    input: Any = None
    output: Any
    score: float | bool | str
    justification: str = ""


class ModelGraderParams(Params):
    model: str | None = None
    rubric: str = Field(min_length=1)
    scoring: Scoring = Field(default_factory=Scoring)
    examples: list[Example] = []
    temperature: float | None = Field(default=0, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1)
    # None: the judge's own `passed` decides, else DEFAULT_PASS_MARK.
    threshold: float | None = Field(default=None, ge=0, le=1)

    @model_validator(mode="after")
    def _examples_fit_scoring(self) -> "ModelGraderParams":
        for i, example in enumerate(self.examples):
            try:
                self.scoring.normalise(example.score, f"examples[{i}].score")
            except J.ReplyInvalid as exc:
                raise ValueError(str(exc)) from None
        return self


def _examples_text(examples: list[Example]) -> str:
    if not examples:
        return ""
    parts = ["", "## Calibration Examples",
             "Graded examples showing how the rubric is applied; score consistently with them."]
    for i, example in enumerate(examples, 1):
        score = (str(example.score).lower() if isinstance(example.score, bool)
                 else f"{example.score:g}" if isinstance(example.score, float) else example.score)
        block = [f"### Example {i}"]
        if example.input is not None:
            block.append(f"Input:\n{as_text(example.input)}")
        block.append(f"Output:\n{as_text(example.output)}")
        block.append(f"Score: {score}")
        if example.justification:
            block.append(f"Justification: {example.justification}")
        parts.append("\n".join(block))
    return "\n\n".join(parts) + "\n"


class ModelGrader(Grader[ModelGraderParams]):
    type = "model"
    group = "model-graded"  # section of docs/assertions.md
    score_range = "0..1"
    needs_judge = True  # graded by the judge model (or its embeddings)
    aliases = ("model_graded",)
    Params = ModelGraderParams
    unused_params = {
        "model": "the suite's judge target grades (suite `judge`, else a target named judge or default); "
                 "the requested model is only recorded in details.requested_model",
        "max_tokens": "the judge call has no per-assertion token limit; the judge target's max_tokens applies",
    }

    async def agrade(self, params: ModelGraderParams, inp: GradeInput) -> Outcome:
        judge = inp.judge
        if judge is None:
            return J.no_judge()
        scoring = params.scoring
        user = J.render(MODEL_GRADER_PROMPT, {
            "input": J.input_text(inp.case),
            "output": J.judged_output(inp),
            "expected": J.expected_text(inp.case) or J.NO_EXPECTED,
            "rubric": params.rubric,
            "examples": _examples_text(params.examples),
        })
        response_format = (
            "Respond in JSON format:\n"
            '{"scores": {"<criterion>": <score>, ...}, '
            f'"overall_score": {scoring.placeholder()}, "passed": <true/false>, '
            '"justification": "<brief explanation>", "specific_feedback": ["<point 1>", "<point 2>"]}\n'
            f'"overall_score" is required and must be {scoring.describe()}.'
        )

        def parse(data: dict[str, Any]) -> tuple[float, Any, dict[str, Any]]:
            value = J.first_key(data, "overall_score", "score")
            if value is None:
                raise J.ReplyInvalid('the reply has no "overall_score"')
            return scoring.normalise(value, '"overall_score"'), value, data

        recorded = {"requested_model": params.model, "scoring": scoring.type,
                    "max_tokens": params.max_tokens}
        try:
            asked = await J.ask(judge, J.SYSTEM_PROMPT, J.with_format(user, response_format), parse,
                                temperature=params.temperature)
        except J.JudgeFailure as exc:
            return J.failure(judge, exc, **recorded)
        normalised, overall, data = asked.value
        details: dict[str, Any] = dict(recorded)
        scores = data.get("scores")
        if isinstance(scores, dict):
            details["raw_scores"] = scores
            fitted: dict[str, float] = {}
            for name, value in scores.items():
                if isinstance(value, dict):
                    value = value.get("score")
                try:
                    fitted[str(name)] = round(scoring.normalise(value), 4)
                except J.ReplyInvalid:
                    continue
            details["rubric_scores"] = fitted
        feedback = J.feedback_of(data)
        mark = DEFAULT_PASS_MARK if params.threshold is None else params.threshold
        judge_passed = J.judge_passed(data)
        by_judge = params.threshold is None and judge_passed is not None
        passed = judge_passed if by_judge else normalised >= mark
        calibrated = J.calibrate(normalised, mark)
        if by_judge:  # on the judge's side of the pass mark, so the case's verdict follows the judge's
            calibrated = max(calibrated, J.OUTER_PASS) if passed else min(calibrated, math.nextafter(J.OUTER_PASS, 0))
        details.update(
            overall_score=overall,
            raw_score=round(normalised, 4),
            threshold=mark,
            passed=passed,
            judge_passed=judge_passed,
            decided_by="judge" if by_judge else "threshold",
            feedback=feedback,
            examples=len(params.examples),
            **J.judge_details(judge, asked),
        )
        if by_judge:
            reason = f"model grade {overall} -> {normalised:.3g}; the judge says {'passed' if passed else 'failed'}"
            reason += f": {J.shorten(feedback, 300)}" if feedback else ""
        else:
            reason = J.verdict_reason(f"model grade {overall} ->", normalised, mark, feedback)
        return Outcome(normalised, reason, details, passed=passed, calibrated=calibrated)

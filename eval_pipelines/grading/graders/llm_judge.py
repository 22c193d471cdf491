"""``llm_judge`` (seeds 000 and 001; also ``llm-judge``, ``judge``, ``llm_rubric``).

The judge model reads the case and the output and answers with a JSON object.

Prompt
    ``prompt`` is a template, inline or in a file (a one-line value ending in
    ``.md``, ``.txt`` or ``.prompt``, relative to the suite's directory; a missing
    file is an ``error`` grade, not an inline prompt). Without ``prompt`` the
    template is seed 003's ``model_grader_prompt`` with ``{criteria}`` in the
    rubric slot. ``{input}``, ``{output}``, ``{expected}`` and ``{criteria}`` are
    replaced as plain text in one pass; any other braces stay as written. A
    template that never mentions ``{output}`` gets the case (input, output,
    expected output and criteria) appended, so the judge always sees what it grades.

What is judged
    ``rubric`` as text, or else the case's ``criteria`` (a test with only
    ``criteria`` gets this judge by default), or else a generic correctness
    criterion; the judge answers ``{"score": 0..1, "passed", "reasoning"}``.
    ``rubric`` as a seed 000 ``EvalRubric`` (criteria with name, description,
    weight, scale; ``passingThreshold``; ``overallFeedback``): the judge scores
    every criterion on its own scale; each is normalised to [0, 1] and the
    weighted mean is the raw score; ``details.rubric_scores`` has the normalised
    scores, ``details.raw_scores`` the judge's.
    ``rubric`` as a list of texts (promptfoo's ``g-eval`` with a list,
    src/assertions/geval.ts): each criterion is judged in its own call and the
    raw score is the plain mean of their scores; ``details.criteria_scores``
    holds each criterion's score and reasoning, in order.

Verdict
    ``passed`` is raw score >= ``threshold`` (default 0.8; for an ``EvalRubric``
    its ``passingThreshold`` unless ``threshold`` is given). The grade score is
    the raw score; its ``calibrated`` score (``grades.calibrated_score``) is
    ``_judging.calibrate(raw, threshold)``, which equals the raw score at the
    default threshold and otherwise maps the threshold onto the outer pass mark
    0.8, so the assertion passes exactly when the raw score reaches the
    threshold. The judge's own ``passed`` is kept as ``details.judge_passed``.

A reply without a valid score is re-asked (up to 3 calls); a judge that never
gives one, or whose server keeps failing, makes an ``error`` grade.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, field_validator, model_validator

from eval_pipelines.grading.graders import _judging as J
from eval_pipelines.grading.graders._prompt_command import PromptCommand, PromptCommandFailed, prompt_from_command
from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params

# Seed 003's model_grader_prompt; {rubric} is {criteria} here, and the response
# format (appended by the grader) asks for a 0..1 score.
DEFAULT_TEMPLATE = """\
You are an expert evaluator. Your task is to grade the following output according to the rubric provided.

## Input Given to System
{input}

## System Output
{output}

## Expected Output (Reference)
{expected}

## Evaluation Rubric
{criteria}

## Instructions
1. Carefully compare the system output against the expected output
2. Apply each criterion from the rubric
3. Provide specific justification for each score
4. Be consistent and objective
"""

SCORE_FORMAT = (
    'Respond with only a JSON object: {"score": <number from 0 to 1>, "passed": <true or false>, '
    '"reasoning": "<brief explanation>"}. "score" is required: 1 means the output fully meets '
    "the criteria, 0 means it does not meet them at all."
)

# Seed 000, creative profile: the default rubric of an llm_judge case.
CREATIVE_PROFILE_RUBRIC: dict[str, Any] = {
    "criteria": [
        {"name": "completeness", "description": "All requested elements present", "weight": 0.30,
         "scale": {"min": 1, "max": 5}},
        {"name": "coherence", "description": "Logical flow and structure", "weight": 0.25,
         "scale": {"min": 1, "max": 5}},
        {"name": "professionalism", "description": "Appropriate style and tone", "weight": 0.25,
         "scale": {"min": 1, "max": 5}},
        {"name": "accuracy", "description": "Factual correctness", "weight": 0.20,
         "scale": {"min": 1, "max": 5}},
    ],
    "passingThreshold": 0.7,
    "overallFeedback": True,
}


class RubricCriterion(Params):
    name: str = Field(min_length=1)
    description: str = ""
    weight: float = Field(default=1.0, ge=0)
    # The seed's examples all score 1..5; that is the default scale.
    scale: J.Scale = Field(default_factory=lambda: J.Scale(min=1, max=5))


class EvalRubric(Params):
    """Seed 000 ``EvalRubric`` (camelCase or snake_case keys)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    criteria: list[RubricCriterion] = Field(min_length=1)
    passing_threshold: float | None = Field(default=None, ge=0, le=1, alias="passingThreshold")
    overall_feedback: bool = Field(default=False, alias="overallFeedback")

    @model_validator(mode="after")
    def _unique_names(self) -> "EvalRubric":
        names = [c.name for c in self.criteria]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"duplicate rubric criterion name(s) {duplicates}")
        return self

    def text(self) -> str:
        lines = []
        for i, c in enumerate(self.criteria, 1):
            lines.append(f"{i}. **{c.name}** (weight {c.weight:g}, {c.scale.describe()})"
                         + (f": {c.description}" if c.description else ""))
        return "\n".join(lines)

    def response_format(self) -> str:
        scores = ", ".join(f'"{c.name}": <number from {c.scale.min:g} to {c.scale.max:g}>'
                           for c in self.criteria)
        feedback = ', "feedback": "<overall feedback on the output>"' if self.overall_feedback else ""
        return (f'Score every criterion on its own scale. Respond with only a JSON object: '
                f'{{"scores": {{{scores}}}, "reasoning": "<brief explanation>"{feedback}}}.')

    def parse(self, data: dict[str, Any]) -> dict[str, float]:
        scores = J.first_key(data, "scores", "criteria")
        if not isinstance(scores, dict):
            raise J.ReplyInvalid('the reply has no "scores" object')
        raw: dict[str, float] = {}
        for c in self.criteria:
            value = scores.get(c.name)
            if isinstance(value, dict):
                value = value.get("score")
            if value is None:
                raise J.ReplyInvalid(f'"scores" has no score for criterion {c.name!r}')
            raw[c.name] = J.in_range(value, c.scale.min, c.scale.max, f"the score of {c.name!r}")
        return raw


class LLMJudgeParams(Params):
    # A template or prompt file, or (AgentV) `{command: [...]}`: a program that prints the prompt.
    prompt: str | PromptCommand | None = None
    rubric: EvalRubric | str | list[str] | None = None
    threshold: float = Field(default=0.8, ge=0, le=1)
    temperature: float | None = Field(default=0, ge=0, le=2)

    @field_validator("prompt", "rubric")
    @classmethod
    def _not_blank(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            raise ValueError("must not be empty")
        if isinstance(value, list) and (not value or not all(v.strip() for v in value)):
            raise ValueError("a list of criteria must hold at least one criterion, none empty")
        return value


class LLMJudge(Grader[LLMJudgeParams]):
    type = "llm_judge"
    group = "model-graded"  # section of docs/assertions.md
    score_range = "0..1"
    needs_judge = True  # graded by the judge model (or its embeddings)
    aliases = ("judge", "llm_rubric")
    Params = LLMJudgeParams

    async def agrade(self, params: LLMJudgeParams, inp: GradeInput) -> Outcome:
        judge = inp.judge
        if judge is None:
            return J.no_judge()
        prompt_file = None
        template = DEFAULT_TEMPLATE
        if isinstance(params.prompt, PromptCommand):
            try:
                template = await prompt_from_command(params.prompt, inp)
            except PromptCommandFailed as exc:
                return Outcome(0.0, str(exc), {"judge_model": J.judge_model(judge)}, status="error")
        elif params.prompt is not None:
            try:
                template, prompt_file = J.resolve_prompt(params.prompt, inp.suite_dir)
            except OSError as exc:
                return Outcome(0.0, str(exc), {"judge_model": J.judge_model(judge)}, status="error")

        rubric = params.rubric if isinstance(params.rubric, EvalRubric) else None
        if rubric is not None:
            criteria, source = rubric.text(), "rubric"
        elif isinstance(params.rubric, list):
            return await self._each_criterion(params, inp, template, prompt_file)
        elif isinstance(params.rubric, str):
            criteria, source = params.rubric, "rubric"
        elif inp.case.criteria:
            criteria, source = inp.case.criteria, "case"
        else:
            criteria, source = J.DEFAULT_CRITERIA, "default"

        user = _user_prompt(template, inp, criteria)

        threshold = params.threshold
        if rubric is not None and rubric.passing_threshold is not None \
                and "threshold" not in params.model_fields_set:
            threshold = rubric.passing_threshold

        details: dict[str, Any] = {"criteria_source": source}
        if prompt_file:
            details["prompt_file"] = prompt_file
        try:
            if rubric is not None:
                asked = await J.ask(judge, J.SYSTEM_PROMPT, J.with_format(user, rubric.response_format()),
                                    lambda d: (rubric.parse(d), d), temperature=params.temperature)
                raw_scores, data = asked.value
                by_name = {c.name: c for c in rubric.criteria}
                normalised = {n: by_name[n].scale.normalise(v) for n, v in raw_scores.items()}
                raw = J.weighted_mean(normalised, {n: c.weight for n, c in by_name.items()})
                details["rubric_scores"] = {n: round(v, 4) for n, v in normalised.items()}
                details["raw_scores"] = raw_scores
            else:
                asked = await J.ask(judge, J.SYSTEM_PROMPT, J.with_format(user, SCORE_FORMAT),
                                    lambda d: (J.score_0_1(d), d), temperature=params.temperature)
                raw, data = asked.value
                scores = data.get("scores")
                if isinstance(scores, dict):  # volunteered per-criterion scores, as given
                    details["raw_scores"] = scores
        except J.JudgeFailure as exc:
            return J.failure(judge, exc, **details)

        feedback = J.feedback_of(data)
        details.update(
            raw_score=round(raw, 4),
            threshold=threshold,
            passed=raw >= threshold,
            judge_passed=J.judge_passed(data),
            feedback=feedback,
            **J.judge_details(judge, asked),
        )
        return Outcome(raw, J.verdict_reason("judge score", raw, threshold, feedback), details,
                       calibrated=J.calibrate(raw, threshold))

    async def _each_criterion(self, params: LLMJudgeParams, inp: GradeInput, template: str,
                              prompt_file: str | None) -> Outcome:
        """promptfoo's g-eval with a list: one judgment per criterion, the mean against the threshold."""
        judge = inp.judge
        assert judge is not None and isinstance(params.rubric, list)
        details: dict[str, Any] = {"criteria_source": "rubric"}
        if prompt_file:
            details["prompt_file"] = prompt_file
        per_criterion: list[dict[str, Any]] = []
        scores: list[float] = []
        attempts = calls = 0
        latency = cost = 0.0
        for criterion in params.rubric:
            user = _user_prompt(template, inp, criterion)
            try:
                asked = await J.ask(judge, J.SYSTEM_PROMPT, J.with_format(user, SCORE_FORMAT),
                                    lambda d: (J.score_0_1(d), d), temperature=params.temperature)
            except J.JudgeFailure as exc:
                return J.failure(judge, exc, criteria_scores=per_criterion, **details)
            score, data = asked.value
            scores.append(score)
            per_criterion.append({"criterion": criterion, "score": round(score, 4),
                                  "reasoning": J.feedback_of(data)})
            attempts, calls = attempts + asked.attempts, calls + asked.calls
            latency, cost = latency + asked.latency_ms, cost + asked.cost_usd
        raw = sum(scores) / len(scores)
        feedback = "\n\n".join(c["reasoning"] for c in per_criterion if c["reasoning"])
        details.update(criteria_scores=per_criterion, raw_score=round(raw, 4), threshold=params.threshold,
                       passed=raw >= params.threshold, feedback=feedback, judge_model=J.judge_model(judge),
                       judge_attempts=attempts, judge_calls=calls, judge_latency_ms=round(latency, 1),
                       judge_cost_usd=cost)
        return Outcome(raw, J.verdict_reason("mean judge score", raw, params.threshold, feedback), details,
                       calibrated=J.calibrate(raw, params.threshold))


def _user_prompt(template: str, inp: GradeInput, criteria: str) -> str:
    user = J.render(template, {
        "input": J.input_text(inp.case),
        "output": J.judged_output(inp),
        "expected": J.expected_text(inp.case) or J.NO_EXPECTED,
        "criteria": criteria,
    })
    if not J.mentions(template, "output"):
        block = J.case_block(inp.case, J.judged_output(inp), None if J.mentions(template, "criteria") else criteria)
        user = f"{user.rstrip()}\n\n{block}"
    return user

"""``rubrics`` (seed 001): structured criteria graded by the judge in one call.

Each criterion has an ``id``, the ``outcome`` the output should achieve, an
inner ``weight`` (default 1.0), an optional ``scale`` (default 0..1) and an
optional ``required``: ``true`` (must reach 0.8 after normalisation) or a
number in [0, 1] (its own minimum). AgentV's spellings are read too: a plain
string is a criterion (ids ``criterion-1``, ...), ``score_ranges`` gives the
scale and what each band means, ``required_min_score`` a minimum on that scale, ``operator``
(``correctness`` or ``contradiction``, AgentV's rubric operators) how the judge reads the outcome:
the criterion is labelled with it and the prompt says what each operator used means (AgentV's
rubric-operators.ts puts the same label and guidance in its rubric prompt). The judge scores every criterion in one
reply ``{"scores": {id: number}, "reasoning": ...}``; each score is normalised
on its scale and the rubric's score is their weighted mean (inner weights, as
seed 001 keeps them apart from the outer assertion weights). A required
criterion under its minimum makes the rubric score 0, like a failed gate in
the outer scoring model. ``details.rubric_scores`` maps id to normalised score.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from eval_pipelines.grading.graders import _judging as J
from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params

GATE_TRUE = 0.8
# What each AgentV rubric operator asks of the judge (the meaning of AgentV's rubric-operators.ts).
OPERATOR_GUIDANCE = {
    "correctness": "correctness: give the top score only when the output affirmatively states or achieves the "
                   "outcome; leaving it out, or saying something contrary to it, does not earn it.",
    "contradiction": "contradiction: give the top score unless the output makes a claim incompatible with the "
                     "outcome; the output need not mention the outcome at all, only a conflicting claim lowers it.",
}


def _agentv_item(raw: Any) -> Any:
    """AgentV's criterion spellings in ours: ``description``/``expected_outcome`` for ``outcome``,
    ``score_ranges`` (``{0: "...", 10: "..."}`` or ``[{score_range: [lo, hi], outcome}]``) for a
    ``scale`` with described bands, ``required_min_score`` (on that scale, else 0..10) for ``required``."""
    if not isinstance(raw, dict):
        return raw
    item = dict(raw)
    for alias in ("description", "expected_outcome"):
        if alias in item and "outcome" not in item:
            item["outcome"] = item.pop(alias)
    ranges = item.pop("score_ranges", None)
    if ranges is not None:
        if isinstance(ranges, dict):
            bounds = [float(k) for k in ranges]
            described = {k: v for k, v in ranges.items()}
        elif isinstance(ranges, list) and all(isinstance(r, dict) and isinstance(r.get("score_range"), list)
                                              for r in ranges):
            bounds = [float(b) for r in ranges for b in r["score_range"]]
            described = {"-".join(str(b) for b in r["score_range"]): r.get("outcome", "") for r in ranges}
        else:
            raise ValueError("score_ranges must map a score to its meaning, or list {score_range, outcome}")
        item["scale"] = {"min": min(bounds), "max": max(bounds), "descriptions": described}
        item.setdefault("outcome", str(item.get("id", "")).replace("_", " ").replace("-", " "))
    if "required_min_score" in item:
        minimum = item.pop("required_min_score")
        scale = item.get("scale") or {"min": 0.0, "max": 10.0}
        low, high = float(scale.get("min", 0.0)), float(scale.get("max", 1.0))
        if isinstance(minimum, bool) or not isinstance(minimum, (int, float)) or not low <= minimum <= high:
            raise ValueError(f"required_min_score must be a number from {low:g} to {high:g}")
        if "scale" not in item:
            item["scale"] = scale
        item["required"] = (float(minimum) - low) / (high - low)
    return item


def plain_string_items(value: Any) -> Any:
    """AgentV: a criterion may be a plain string, the outcome itself (ids criterion-1, ...)."""
    if isinstance(value, list):
        return [{"id": f"criterion-{i + 1}", "outcome": item} if isinstance(item, str) else item
                for i, item in enumerate(value)]
    return value


class RubricItem(Params):
    id: str = Field(min_length=1)
    outcome: str = Field(min_length=1)
    weight: float = Field(default=1.0, ge=0)
    required: bool | float = False
    scale: J.Scale = Field(default_factory=J.Scale)
    operator: Literal["correctness", "contradiction"] | None = None

    @model_validator(mode="before")
    @classmethod
    def _agentv_spellings(cls, raw: Any) -> Any:
        return _agentv_item(raw)

    @field_validator("required")
    @classmethod
    def _required_in_range(cls, value: bool | float) -> bool | float:
        if not isinstance(value, bool) and not 0 <= value <= 1:
            raise ValueError("a numeric `required` must be within [0, 1]")
        return value

    def minimum(self) -> float | None:
        if self.required is True:
            return GATE_TRUE
        if self.required is False:
            return None
        return float(self.required)


class RubricsParams(Params):
    criteria: list[RubricItem] = Field(min_length=1)
    temperature: float | None = Field(default=0, ge=0, le=2)
    # The judge's template (promptfoo's rubricPrompt, AgentV's options.rubric_prompt): ``{criteria}``
    # is the criteria list, ``{input}``, ``{output}``, ``{expected}`` the case; the reply format is
    # appended as always. Without ``{output}`` the case's sections are appended after it.
    prompt: str | None = Field(default=None, min_length=1)

    @field_validator("criteria", mode="before")
    @classmethod
    def _plain_strings(cls, value: Any) -> Any:
        return plain_string_items(value)

    @field_validator("criteria")
    @classmethod
    def _unique_ids(cls, items: list[RubricItem]) -> list[RubricItem]:
        ids = [item.id for item in items]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"duplicate criterion id(s) {duplicates}")
        return items


def _prompt(params: RubricsParams, inp: GradeInput) -> str:
    lines = []
    for item in params.criteria:
        note = f"weight {item.weight:g}, {item.scale.describe()}"
        if item.minimum() is not None:
            note += ", required"
        if item.operator is not None:
            note += f", operator: {item.operator}"
        lines.append(f"- **{item.id}** ({note}): {item.outcome}")
    operators = list(dict.fromkeys(item.operator for item in params.criteria if item.operator is not None))
    guidance = ("## Operators (for the criteria that name one, they replace the rule above)\n" + "\n".join(f"- {OPERATOR_GUIDANCE[o]}" for o in operators) + "\n\n"
                if operators else "")
    scores = ", ".join(f'"{item.id}": <number from {item.scale.min:g} to {item.scale.max:g}>'
                       for item in params.criteria)
    if params.prompt is not None:
        body = J.render(params.prompt, {"input": J.input_text(inp.case), "output": J.judged_output(inp),
                                        "expected": J.expected_text(inp.case) or J.NO_EXPECTED,
                                        "criteria": guidance + "\n".join(lines)})
        if not J.mentions(params.prompt, "output"):
            body = body.rstrip() + "\n\n" + J.case_block(inp.case, J.judged_output(inp), None)
        if not J.mentions(params.prompt, "criteria"):
            body = body.rstrip() + "\n\n" + guidance + "## Rubric Criteria\n" + "\n".join(lines)
        return J.with_format(body, "Respond with only a JSON object: "
                                   f'{{"scores": {{{scores}}}, "reasoning": "<brief explanation per criterion>"}}.')
    body = (
        "Grade the system output below against each rubric criterion independently. "
        "A criterion's top score means the output fully achieves the stated outcome; "
        "its bottom score means it does not achieve it at all.\n\n"
        + guidance + "## Rubric Criteria\n" + "\n".join(lines) + "\n\n"
        + J.case_block(inp.case, J.judged_output(inp), inp.case.criteria, "What the Test Checks (context)")
    )
    return J.with_format(body, "Respond with only a JSON object: "
                               f'{{"scores": {{{scores}}}, "reasoning": "<brief explanation per criterion>"}}.')


def _parse(params: RubricsParams, data: dict[str, Any]) -> dict[str, float]:
    scores = J.first_key(data, "scores", "criteria")
    if not isinstance(scores, dict):
        raise J.ReplyInvalid('the reply has no "scores" object')
    raw: dict[str, float] = {}
    for item in params.criteria:
        value = scores.get(item.id)
        if isinstance(value, dict):
            value = value.get("score")
        if value is None:
            raise J.ReplyInvalid(f'"scores" has no score for criterion {item.id!r}')
        raw[item.id] = J.in_range(value, item.scale.min, item.scale.max, f"the score of {item.id!r}")
    return raw


class Rubrics(Grader[RubricsParams]):
    type = "rubrics"
    group = "model-graded"  # section of docs/assertions.md
    score_range = "0..1"
    needs_judge = True  # graded by the judge model (or its embeddings)
    Params = RubricsParams

    async def agrade(self, params: RubricsParams, inp: GradeInput) -> Outcome:
        judge = inp.judge
        if judge is None:
            return J.no_judge()
        try:
            asked = await J.ask(judge, J.SYSTEM_PROMPT, _prompt(params, inp),
                                lambda d: (_parse(params, d), d), temperature=params.temperature)
        except J.JudgeFailure as exc:
            return J.failure(judge, exc)
        raw_scores, data = asked.value
        items = {item.id: item for item in params.criteria}
        normalised = {i: items[i].scale.normalise(v) for i, v in raw_scores.items()}
        mean = J.weighted_mean(normalised, {i: item.weight for i, item in items.items()})
        minima = {i: item.minimum() for i, item in items.items()}
        failed_ids = [i for i, m in minima.items() if m is not None and normalised[i] < m]
        failed = [f"{i} ({normalised[i]:.2f} < {minima[i]:g})" for i in failed_ids]
        feedback = J.feedback_of(data)
        details: dict[str, Any] = {
            "rubric_scores": {i: round(v, 4) for i, v in normalised.items()},
            "raw_scores": raw_scores,
            "weighted_mean": round(mean, 4),
            "failed_required": failed_ids,
            "feedback": feedback,
            **J.judge_details(judge, asked),
        }
        if failed:
            reason = "required criterion not met: " + ", ".join(failed)
            return Outcome(0.0, reason + (f"; {J.shorten(feedback, 200)}" if feedback else ""), details)
        summary = ", ".join(f"{i} {v:.2f}" for i, v in normalised.items())
        reason = f"rubric score {mean:.3g} ({summary})"
        if feedback:
            reason += f": {J.shorten(feedback, 200)}"
        return Outcome(mean, reason, details)

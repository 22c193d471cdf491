"""``human`` grader (seed 003): people rate the output; the case waits until they have.

Without enough ratings the grade is ``pending_human`` (never a pass or a fail).
Ratings arrive through ``eval-pipelines grades import`` and reach the grader in
``GradeInput.human_ratings``. A case is graded once ``min_required`` raters
agree: agreement is the share of raters whose normalised score is within
``agreement_tolerance`` of the median; below ``agreement_threshold`` the case
stays pending (more raters needed).
"""

from __future__ import annotations

from statistics import median
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params


class Evaluators(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min_required: int = Field(default=1, ge=1)
    max_allowed: int = Field(default=5, ge=1)
    agreement_threshold: float = Field(default=0.0, ge=0, le=1)
    agreement_tolerance: float = Field(default=0.25, ge=0, le=1)


class RatingScale(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["likert", "binary", "ranking"] = "likert"
    range: tuple[float, float] = (1, 5)
    labels: dict[int, str] = {}
    options: list[dict] = []
    criteria: list[str] = []


class HumanParams(Params):
    interface: Literal["web", "cli", "api"] = "web"
    evaluators: Evaluators = Evaluators()
    rating_scale: RatingScale = RatingScale()
    rubric: str | None = None
    time_limit_minutes: float | None = None
    blind_evaluation: bool = True


def normalise_rating(value: float, scale: RatingScale) -> float:
    if scale.type == "binary":
        return 1.0 if value else 0.0
    low, high = scale.range
    return min(1.0, max(0.0, (float(value) - low) / (high - low))) if high > low else 0.0


class Human(Grader[HumanParams]):
    type = "human"
    group = "human"  # section of docs/assertions.md
    score_range = "0..1"
    family = "human"  # graded by people (the review queue)
    aliases = ("human_review",)
    Params = HumanParams
    unused_params = {
        "interface": "reviews always go through `eval-pipelines grades export` / `grades import` (CSV or HTML form)",
        "time_limit_minutes": "no review deadline is enforced; the case stays pending until rated",
        "blind_evaluation": "the review export always shows the skill version and target of each output",
    }

    def grade(self, params: HumanParams, inp: GradeInput) -> Outcome:
        ratings = inp.human_ratings[: params.evaluators.max_allowed]
        scale = params.rating_scale
        details = {"ratings": ratings, "min_required": params.evaluators.min_required,
                   "rubric": params.rubric, "scale": scale.model_dump()}
        if len(ratings) < params.evaluators.min_required:
            return Outcome(0.0, f"waiting for human ratings ({len(ratings)}/{params.evaluators.min_required})",
                           details, status="pending_human")
        scores = [normalise_rating(r["rating"], scale) for r in ratings]
        middle = median(scores)
        agreeing = sum(abs(s - middle) <= params.evaluators.agreement_tolerance for s in scores)
        agreement = agreeing / len(scores)
        details |= {"normalised": scores, "agreement": agreement}
        if agreement < params.evaluators.agreement_threshold:
            return Outcome(0.0, f"raters disagree (agreement {agreement:.2f} < "
                                f"{params.evaluators.agreement_threshold:.2f}); more ratings needed",
                           details, status="pending_human")
        return Outcome(middle, f"median of {len(scores)} human rating(s), agreement {agreement:.2f}", details)

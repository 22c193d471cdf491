"""``levenshtein`` (promptfoo): the output is within ``threshold`` edits (default 5) of ``value``.

Scored 1 or 0, as promptfoo does; ``details.distance`` holds the distance.
"""

from __future__ import annotations

from pydantic import Field

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders._text_metrics import levenshtein


class LevenshteinParams(Params):
    value: str
    threshold: float = Field(default=5, ge=0)


class Levenshtein(Grader[LevenshteinParams]):
    type = "levenshtein"
    aliases = ("edit_distance",)
    group = "deterministic text"  # section of docs/assertions.md
    score_range = "0 or 1"
    Params = LevenshteinParams

    def grade(self, params: LevenshteinParams, inp: GradeInput) -> Outcome:
        distance = levenshtein(inp.output, params.value)
        return Outcome.binary(distance <= params.threshold,
                              f"edit distance {distance} (at most {params.threshold:g})", distance=distance)

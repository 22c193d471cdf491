"""``is_json`` (001): the output parses as JSON."""

from __future__ import annotations

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders.text import parse_json_output


class IsJsonParams(Params):
    # promptfoo's is-json is strict; allow a ```json fence only when asked.
    allow_fence: bool = False


class IsJson(Grader[IsJsonParams]):
    type = "is_json"
    group = "structured"  # section of docs/assertions.md
    score_range = "0 or 1"
    aliases = ("json",)
    Params = IsJsonParams

    def grade(self, params: IsJsonParams, inp: GradeInput) -> Outcome:
        try:
            parse_json_output(inp.output, allow_fence=params.allow_fence)
        except ValueError as exc:
            return Outcome.binary(False, str(exc))
        return Outcome.binary(True, "output is valid JSON")

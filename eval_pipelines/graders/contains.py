"""``contains`` (001): every listed substring must occur in the output."""

from __future__ import annotations

from pydantic import field_validator

from eval_pipelines.graders.base import Grader, GradeInput, Outcome, Params


class ContainsParams(Params):
    value: str | list[str]
    case_sensitive: bool = True

    @field_validator("value")
    @classmethod
    def _not_empty(cls, value: str | list[str]) -> str | list[str]:
        if (isinstance(value, list) and (not value or "" in value)) or value == "":
            raise ValueError("must name at least one non-empty substring")
        return value


class Contains(Grader[ContainsParams]):
    type = "contains"
    aliases = ("contains_all",)
    Params = ContainsParams

    def grade(self, params: ContainsParams, inp: GradeInput) -> Outcome:
        needles = [params.value] if isinstance(params.value, str) else params.value
        haystack = inp.output if params.case_sensitive else inp.output.lower()
        missing = [
            n for n in needles if (n if params.case_sensitive else n.lower()) not in haystack
        ]
        if missing:
            return Outcome.binary(False, f"missing {missing!r}", missing=missing, expected=needles)
        return Outcome.binary(True, f"contains {needles!r}", expected=needles)

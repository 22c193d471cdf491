"""``icontains_any`` (AgentV ``icontains-any``): the output contains at least one value, ignoring case.

Case is folded with ``str.casefold`` on both sides (so ``ß`` matches ``SS``).
The score is 1 when some value occurs, else 0; ``details.found`` lists the
values that occur.
"""

from __future__ import annotations

from pydantic import field_validator

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params


class ICaseValuesParams(Params):
    value: str | list[str]

    @field_validator("value")
    @classmethod
    def _not_empty(cls, value: str | list[str]) -> str | list[str]:
        values = [value] if isinstance(value, str) else value
        if not values or any(v == "" for v in values):
            raise ValueError("must name at least one non-empty string")
        return value

    @property
    def values(self) -> list[str]:
        return [self.value] if isinstance(self.value, str) else list(self.value)


def found_in(params: ICaseValuesParams, output: str) -> tuple[list[str], list[str]]:
    """(values that occur, values that do not), case folded."""
    haystack = output.casefold()
    found = [v for v in params.values if v.casefold() in haystack]
    return found, [v for v in params.values if v not in found]


class IContainsAny(Grader[ICaseValuesParams]):
    type = "icontains_any"
    group = "deterministic text"  # section of docs/assertions.md
    score_range = "0 or 1"
    aliases = ()  # `icontains-any` is the same name: the registry reads - as _
    Params = ICaseValuesParams

    def grade(self, params: ICaseValuesParams, inp: GradeInput) -> Outcome:
        found, _ = found_in(params, inp.output)
        if found:
            return Outcome.binary(True, f"contains {found[0]!r} (ignoring case)", found=found)
        return Outcome.binary(False, f"contains none of {params.values!r} (ignoring case)", expected=params.values)

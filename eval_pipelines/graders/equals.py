"""``equals`` (001), ``exact_match`` (000) and harness ``exact`` (003)."""

from __future__ import annotations

from typing import Any

from eval_pipelines.graders.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.graders.text import as_text, normalise


class EqualsParams(Params):
    # Absent: compare with the test's expected_output.
    value: Any = None
    case_sensitive: bool = True
    trim_whitespace: bool = True
    normalize_newlines: bool = True


class Equals(Grader[EqualsParams]):
    type = "equals"
    aliases = ("exact_match", "exact", "equal")
    Params = EqualsParams

    def grade(self, params: EqualsParams, inp: GradeInput) -> Outcome:
        expected_raw = params.value if params.value is not None else inp.case.expected_output
        if expected_raw is None:
            return Outcome(0.0, "nothing to compare with: give `value` or the test's expected_output",
                           status="error")
        options = params.model_dump(exclude={"value"})
        expected = normalise(as_text(expected_raw), **options)
        actual = normalise(inp.output, **options)
        ok = actual == expected
        reason = "output equals the expected value" if ok else "output differs from the expected value"
        return Outcome.binary(ok, reason, expected=expected, actual=actual)

"""``equals`` (001), ``exact_match`` (000) and harness ``exact`` (003)."""

from __future__ import annotations

from typing import Any, Sequence

from eval_pipelines.grading.base import BatchOutcomes, Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders.text import as_text, json_str, normalise
from eval_pipelines.suite.models import TestCase

_SAME = "output equals the expected value"
_SHOWN = 60  # characters of each value in the reason; the whole values are in the grade's details


def _quoted(text: str) -> str:
    """A value for the one-line reason: JSON-quoted (newlines visible), long values cut with an ellipsis."""
    return json_str(text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…")


def _differs(actual: str, expected: str) -> str:
    """promptfoo's wording (``Expected output "x" to equal "y"``), so a reader sees both values at once."""
    return f"Expected output {_quoted(actual)} to equal {_quoted(expected)}"


class EqualsParams(Params):
    # Absent: compare with the test's expected_output.
    value: Any = None
    case_sensitive: bool = True
    trim_whitespace: bool = True
    normalize_newlines: bool = True


class Equals(Grader[EqualsParams]):
    type = "equals"
    group = "deterministic text"  # section of docs/assertions.md
    score_range = "0 or 1"
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
        return Outcome.binary(ok, _SAME if ok else _differs(actual, expected), expected=expected,
                              actual=actual)

    batchable = True

    def can_batch(self, params: EqualsParams, case: TestCase) -> bool:
        return params.value is not None or case.expected_output is not None

    def grade_batch(self, params: Sequence[EqualsParams], outputs: Sequence[str],
                    cases: Sequence[TestCase]) -> BatchOutcomes:
        # The expected side is the same for every output of an assertion: once each.
        prepared: dict[tuple[int, int], tuple[str, dict[str, bool], str]] = {}
        scores, reasons, details = [], [], []
        for p, output, case in zip(params, outputs, cases):
            key = (id(p), id(case))
            if key not in prepared:
                options = p.model_dump(exclude={"value"})
                expected = normalise(as_text(p.value if p.value is not None else case.expected_output), **options)
                prepared[key] = (expected, options, '{"expected": ' + json_str(expected) + ', "actual": ')
            expected, options, head = prepared[key]
            actual = normalise(output, **options)
            ok = actual == expected
            scores.append(1.0 if ok else 0.0)
            reasons.append(_SAME if ok else _differs(actual, expected))
            details.append(head + json_str(actual) + "}")
        return BatchOutcomes(scores, reasons, details)

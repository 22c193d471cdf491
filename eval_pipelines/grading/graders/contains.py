"""``contains`` (001): every listed substring must occur in the output."""

from __future__ import annotations

from typing import Sequence

from pydantic import field_validator

from eval_pipelines.grading.base import BatchOutcomes, Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders.text import json_str_list
from eval_pipelines.suite.models import TestCase


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
    group = "deterministic text"  # section of docs/assertions.md
    score_range = "0 or 1"
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

    batchable = True

    def grade_batch(self, params: Sequence[ContainsParams], outputs: Sequence[str],
                    cases: Sequence[TestCase]) -> BatchOutcomes:
        prepared: dict[int, tuple[list[str], list[str], str, str]] = {}
        scores, reasons, details = [], [], []
        for p, output in zip(params, outputs):
            if id(p) not in prepared:
                needles = [p.value] if isinstance(p.value, str) else list(p.value)
                folded = needles if p.case_sensitive else [n.lower() for n in needles]
                prepared[id(p)] = (needles, folded, f"contains {needles!r}", json_str_list(needles))
            needles, folded, passed_reason, needles_json = prepared[id(p)]
            haystack = output if p.case_sensitive else output.lower()
            missing = [n for n, f in zip(needles, folded) if f not in haystack]
            if missing:
                scores.append(0.0)
                reasons.append(f"missing {missing!r}")
                details.append('{"missing": ' + json_str_list(missing) + ', "expected": ' + needles_json + "}")
            else:
                scores.append(1.0)
                reasons.append(passed_reason)
                details.append('{"expected": ' + needles_json + "}")
        return BatchOutcomes(scores, reasons, details)

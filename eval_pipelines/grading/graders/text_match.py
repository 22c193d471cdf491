"""Text assertions beyond ``contains``: AgentV's ``contains-any``, ``icontains``,
``starts-with``, ``ends-with``, and the harness lists ``must_include`` /
``must_not_include`` (seed 003, ``expected_output.type: semantic``)."""

from __future__ import annotations

from typing import Sequence

from pydantic import field_validator, model_validator

from eval_pipelines.grading.base import BatchOutcomes, Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders.text import json_str, json_str_list
from eval_pipelines.suite.models import TestCase


def _as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _prepared(params: "_ValueParams", cache: dict) -> tuple[list[str], list[str]]:
    """(values, folded values) of an assertion, computed once per batch."""
    if id(params) not in cache:
        values = _as_list(params.value)
        cache[id(params)] = (values, [params.fold(v) for v in values])
    return cache[id(params)]


class _ValueParams(Params):
    value: str | list[str]
    case_sensitive: bool = True

    @field_validator("value")
    @classmethod
    def _not_empty(cls, value: str | list[str]) -> str | list[str]:
        if (isinstance(value, list) and not value) or value == "" or (
            isinstance(value, list) and any(v == "" for v in value)
        ):
            raise ValueError("must name at least one non-empty string")
        return value

    def fold(self, text: str) -> str:
        return text if self.case_sensitive else text.lower()


class ContainsAny(Grader[_ValueParams]):
    type = "contains_any"
    group = "deterministic text"  # section of docs/assertions.md
    score_range = "0 or 1"
    aliases = ("contains_some",)
    Params = _ValueParams

    def grade(self, params: _ValueParams, inp: GradeInput) -> Outcome:
        needles = _as_list(params.value)
        found = [n for n in needles if params.fold(n) in params.fold(inp.output)]
        if found:
            return Outcome.binary(True, f"contains {found[0]!r}", found=found)
        return Outcome.binary(False, f"contains none of {needles!r}", expected=needles)

    batchable = True

    def grade_batch(self, params: Sequence[_ValueParams], outputs: Sequence[str],
                    cases: Sequence[TestCase]) -> BatchOutcomes:
        cache: dict = {}
        scores, reasons, details = [], [], []
        for p, output in zip(params, outputs):
            needles, folded = _prepared(p, cache)
            haystack = p.fold(output)
            found = [n for n, f in zip(needles, folded) if f in haystack]
            scores.append(1.0 if found else 0.0)
            if found:
                reasons.append(f"contains {found[0]!r}")
                details.append('{"found": ' + json_str_list(found) + "}")
            else:
                reasons.append(f"contains none of {needles!r}")
                details.append('{"expected": ' + json_str_list(needles) + "}")
        return BatchOutcomes(scores, reasons, details)


class _CaseInsensitiveParams(_ValueParams):
    case_sensitive: bool = False


class IContains(Grader[_CaseInsensitiveParams]):
    """promptfoo/AgentV ``icontains``: ``contains`` ignoring case."""

    type = "icontains"
    group = "deterministic text"  # section of docs/assertions.md
    score_range = "0 or 1"
    aliases = ("contains_i",)
    Params = _CaseInsensitiveParams

    def grade(self, params: _CaseInsensitiveParams, inp: GradeInput) -> Outcome:
        missing = [n for n in _as_list(params.value) if params.fold(n) not in params.fold(inp.output)]
        if missing:
            return Outcome.binary(False, f"missing {missing!r} (ignoring case)", missing=missing)
        return Outcome.binary(True, "contains every value (ignoring case)")

    batchable = True

    def grade_batch(self, params: Sequence[_CaseInsensitiveParams], outputs: Sequence[str],
                    cases: Sequence[TestCase]) -> BatchOutcomes:
        cache: dict = {}
        scores, reasons, details = [], [], []
        for p, output in zip(params, outputs):
            needles, folded = _prepared(p, cache)
            haystack = p.fold(output)
            missing = [n for n, f in zip(needles, folded) if f not in haystack]
            scores.append(0.0 if missing else 1.0)
            if missing:
                reasons.append(f"missing {missing!r} (ignoring case)")
                details.append('{"missing": ' + json_str_list(missing) + "}")
            else:
                reasons.append("contains every value (ignoring case)")
                details.append("{}")
        return BatchOutcomes(scores, reasons, details)


class StartsWith(Grader[_ValueParams]):
    type = "starts_with"
    group = "deterministic text"  # section of docs/assertions.md
    score_range = "0 or 1"
    aliases = ("startswith",)
    Params = _ValueParams

    def grade(self, params: _ValueParams, inp: GradeInput) -> Outcome:
        text = params.fold(inp.output.lstrip())
        options = _as_list(params.value)
        ok = any(text.startswith(params.fold(v)) for v in options)
        return Outcome.binary(ok, "starts as expected" if ok else f"does not start with {options!r}",
                              start=inp.output.lstrip()[:80])

    batchable = True

    def grade_batch(self, params: Sequence[_ValueParams], outputs: Sequence[str],
                    cases: Sequence[TestCase]) -> BatchOutcomes:
        cache: dict = {}
        scores, reasons, details = [], [], []
        for p, output in zip(params, outputs):
            options, folded = _prepared(p, cache)
            start = output.lstrip()
            text = p.fold(start)
            ok = any(text.startswith(f) for f in folded)
            scores.append(1.0 if ok else 0.0)
            reasons.append("starts as expected" if ok else f"does not start with {options!r}")
            details.append('{"start": ' + json_str(start[:80]) + "}")
        return BatchOutcomes(scores, reasons, details)


class EndsWith(Grader[_ValueParams]):
    type = "ends_with"
    group = "deterministic text"  # section of docs/assertions.md
    score_range = "0 or 1"
    aliases = ("endswith",)
    Params = _ValueParams

    def grade(self, params: _ValueParams, inp: GradeInput) -> Outcome:
        text = params.fold(inp.output.rstrip())
        options = _as_list(params.value)
        ok = any(text.endswith(params.fold(v)) for v in options)
        return Outcome.binary(ok, "ends as expected" if ok else f"does not end with {options!r}",
                              end=inp.output.rstrip()[-80:])

    batchable = True

    def grade_batch(self, params: Sequence[_ValueParams], outputs: Sequence[str],
                    cases: Sequence[TestCase]) -> BatchOutcomes:
        cache: dict = {}
        scores, reasons, details = [], [], []
        for p, output in zip(params, outputs):
            options, folded = _prepared(p, cache)
            end = output.rstrip()
            text = p.fold(end)
            ok = any(text.endswith(f) for f in folded)
            scores.append(1.0 if ok else 0.0)
            reasons.append("ends as expected" if ok else f"does not end with {options!r}")
            details.append('{"end": ' + json_str(end[-80:]) + "}")
        return BatchOutcomes(scores, reasons, details)


class IncludeExcludeParams(Params):
    must_include: list[str] = []
    must_not_include: list[str] = []
    case_sensitive: bool = False

    @model_validator(mode="after")
    def _something_to_check(self) -> "IncludeExcludeParams":
        if not self.must_include and not self.must_not_include:
            raise ValueError("give at least one of must_include / must_not_include")
        return self


class MustInclude(Grader[IncludeExcludeParams]):
    """Partial credit: the share of listed items the output gets right."""

    type = "must_include"
    group = "deterministic text"  # section of docs/assertions.md
    score_range = "0..1"
    aliases = ("must_not_include", "include_exclude")
    Params = IncludeExcludeParams

    def grade(self, params: IncludeExcludeParams, inp: GradeInput) -> Outcome:
        text = inp.output if params.case_sensitive else inp.output.lower()
        fold = (lambda s: s) if params.case_sensitive else str.lower
        missing = [s for s in params.must_include if fold(s) not in text]
        forbidden = [s for s in params.must_not_include if fold(s) in text]
        total = len(params.must_include) + len(params.must_not_include)
        score = (total - len(missing) - len(forbidden)) / total
        problems = ([f"missing {missing!r}"] if missing else []) + (
            [f"contains forbidden {forbidden!r}"] if forbidden else [])
        reason = "; ".join(problems) or "all required items present, no forbidden items"
        return Outcome(score, reason, {"missing": missing, "forbidden_found": forbidden})

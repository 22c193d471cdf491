"""``field_accuracy`` (seed 001): compare fields of a JSON output with expected values.

Each field scores 0..1 (exact, numeric within a tolerance, case-insensitive or
substring, or ``date``: both sides read as dates in any of ``formats``, AgentV's
tokens ``YYYY``/``MMM``/``MM``/``DD``); the grade is their weighted mean, or all-or-nothing on request.
Expected values come from the field entry, else from ``expected_output`` (a
JSON object or JSON text) at the same path.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from eval_pipelines.grading.graders._paths import get_path, is_missing
from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders.text import parse_json_output

_NO_VALUE = object()


class FieldSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1)
    # Absent (not merely null): read from expected_output at the same path.
    expected: Any = None
    match: Literal["exact", "numeric", "numeric_tolerance", "case_insensitive", "contains", "date"] = "exact"
    # match: date (AgentV): the formats dates may be written in, e.g. DD-MMM-YYYY, YYYY-MM-DD, MM/DD/YYYY.
    formats: list[str] = Field(default_factory=lambda: list(DEFAULT_DATE_FORMATS))

    @field_validator("formats")
    @classmethod
    def _known_tokens(cls, value: list[str]) -> list[str]:
        for fmt in value:
            strptime_format(fmt)
        return value
    tolerance: float = Field(default=0.0, ge=0)
    relative: bool = False
    weight: float = Field(default=1.0, ge=0)
    required: bool = False


class FieldAccuracyParams(Params):
    fields: list[FieldSpec]
    aggregation: Literal["weighted_average", "all_or_nothing"] = "weighted_average"

    @field_validator("fields")
    @classmethod
    def _not_empty(cls, value: list[FieldSpec]) -> list[FieldSpec]:
        if not value:
            raise ValueError("list at least one field")
        return value


DEFAULT_DATE_FORMATS = ("YYYY-MM-DD", "DD-MMM-YYYY", "MM/DD/YYYY", "DD/MM/YYYY", "MMM DD, YYYY")
_DATE_TOKENS = (("YYYY", "%Y"), ("MMMM", "%B"), ("MMM", "%b"), ("YY", "%y"), ("MM", "%m"), ("DD", "%d"),
                ("M", "%m"), ("D", "%d"))


def strptime_format(fmt: str) -> str:
    """AgentV's date format (YYYY, YY, MMMM, MMM, MM, M, DD, D) as a ``strptime`` format."""
    out, i = "", 0
    while i < len(fmt):
        for token, code in _DATE_TOKENS:
            if fmt.startswith(token, i):
                out, i = out + code, i + len(token)
                break
        else:
            if fmt[i].isalpha():
                raise ValueError(f"unknown date token at {fmt[i:]!r} in {fmt!r} (use YYYY, YY, MMM, MM, DD)")
            out, i = out + fmt[i].replace("%", "%%"), i + 1
    return out


def _date(value: Any, formats: list[str]) -> date | None:
    if isinstance(value, (datetime, date)):
        return value if not isinstance(value, datetime) else value.date()
    if not isinstance(value, str):
        return None
    for fmt in formats:
        try:
            return datetime.strptime(value.strip(), strptime_format(fmt)).date()
        except ValueError:
            continue
    return None


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.replace(",", "").strip())
        except ValueError:
            return None
    return None


def _field_score(spec: FieldSpec, actual: Any, expected: Any) -> tuple[float, str]:
    if is_missing(actual):
        return 0.0, "missing from the output"
    if spec.match in ("numeric", "numeric_tolerance"):
        a, e = _number(actual), _number(expected)
        if a is None or e is None:
            return 0.0, f"not numeric ({actual!r} vs {expected!r})"
        allowed = spec.tolerance * abs(e) if spec.relative else spec.tolerance
        ok = abs(a - e) <= allowed
        return (1.0 if ok else 0.0), f"{a:g} vs {e:g} (tolerance {allowed:g})"
    if spec.match == "date":
        a, e = _date(actual, spec.formats), _date(expected, spec.formats)
        if a is None or e is None:
            return 0.0, f"not a date in {spec.formats} ({actual!r} vs {expected!r})"
        return (1.0 if a == e else 0.0), f"{a.isoformat()} vs {e.isoformat()}"
    if spec.match == "case_insensitive":
        ok = str(actual).strip().lower() == str(expected).strip().lower()
        return (1.0 if ok else 0.0), f"{actual!r} vs {expected!r} ignoring case"
    if spec.match == "contains":
        ok = str(expected).lower() in str(actual).lower()
        return (1.0 if ok else 0.0), f"{expected!r} {'in' if ok else 'not in'} {actual!r}"
    ok = actual == expected
    return (1.0 if ok else 0.0), f"{actual!r} vs {expected!r}"


class FieldAccuracy(Grader[FieldAccuracyParams]):
    type = "field_accuracy"
    group = "structured"  # section of docs/assertions.md
    score_range = "0..1"
    Params = FieldAccuracyParams

    def grade(self, params: FieldAccuracyParams, inp: GradeInput) -> Outcome:
        try:
            document = parse_json_output(inp.output, allow_fence=True)
        except ValueError as exc:
            return Outcome.binary(False, str(exc))
        reference = inp.case.expected_output
        if isinstance(reference, str):
            try:
                reference = json.loads(reference)
            except json.JSONDecodeError:
                reference = None
        per_field: dict[str, dict[str, Any]] = {}
        total_weight = weighted = 0.0
        gate_failed = []
        for spec in params.fields:
            expected = spec.expected if "expected" in spec.model_fields_set else (
                get_path(reference, spec.path) if reference is not None else _NO_VALUE)
            if expected is _NO_VALUE or is_missing(expected):
                return Outcome(0.0, f"no expected value for field {spec.path!r} "
                                    "(give `expected` or a JSON expected_output)", status="error")
            score, note = _field_score(spec, get_path(document, spec.path), expected)
            per_field[spec.path] = {"score": score, "match": spec.match, "note": note}
            total_weight += spec.weight
            weighted += score * spec.weight
            if spec.required and score < 1.0:
                gate_failed.append(spec.path)
        mean = weighted / total_weight if total_weight else 0.0
        if params.aggregation == "all_or_nothing":
            mean = 1.0 if all(f["score"] == 1.0 for f in per_field.values()) else 0.0
        if gate_failed:
            mean = 0.0
        wrong = [p for p, f in per_field.items() if f["score"] < 1.0]
        reason = f"{len(per_field) - len(wrong)}/{len(per_field)} fields correct"
        if wrong:
            reason += f"; wrong: {', '.join(wrong)}"
        return Outcome(mean, reason, {"fields": per_field, "required_failed": gate_failed})

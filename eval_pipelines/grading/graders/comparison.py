"""Regression comparisons of seed 003 against a baseline output.

``structural``: the output keeps the baseline's shape. Paths are relative to the
compared value: they match from the root or from any value inside it (seed 003
writes ``users.*.id`` for a baseline whose users sit under ``body``). Keys in
``require_keys`` must exist; fields matching ``ignore_fields`` (``users.*.id``) are skipped
entirely, fields matching ``ignore_values`` only need to exist; other leaves
must be equal, except that ``{{any_string}}``-style placeholders in the
baseline match any value of that kind. ``allow_additional_fields`` and
``allow_field_reordering`` (lists compared as multisets) relax the match;
``strict: true`` turns both off unless they are given.

``numeric``: numeric leaves may move by at most ``min_delta``/``max_delta``
(per field or for all fields).

The baseline is the inline ``baseline`` value, else the stored output of the
same case in the baseline run. Both graders are pass/fail; every difference
is listed in the details.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from pydantic import BaseModel, ConfigDict

from eval_pipelines.grading.graders._paths import get_path, is_missing, join, matches_pattern, split_path
from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders.text import parse_json_output

def _is_email(value: str) -> bool:
    """``[^@\\s]+@[^@\\s]+\\.[^@\\s]+`` in linear time (the regex backtracks
    quadratically on a long ``a@a.a.a...`` value: 33 s for 80 000 characters)."""
    local, at, domain = value.partition("@")
    if not at or not local or "@" in domain or any(ch.isspace() for ch in value):
        return False
    return "." in domain[1:-1]


_PLACEHOLDERS = {
    "any_string": lambda v: isinstance(v, str),
    "any_number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "any_uuid": lambda v: isinstance(v, str) and re.fullmatch(
        r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", v) is not None,
    "any_email": lambda v: isinstance(v, str) and _is_email(v),
    "any_iso_datetime": lambda v: isinstance(v, str) and re.fullmatch(
        r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?", v) is not None,
    "any": lambda v: True,
}
_PLACEHOLDER = re.compile(r"^\{\{\s*(\w+)\s*\}\}$")


class NoBaselineYet(LookupError):
    """The first version of a skill: nothing to compare with, so nothing is judged."""


NO_BASELINE_REASON = "not evaluated (no baseline yet): give `baseline` or run a baseline version first"


def _baseline(params_baseline: Any, inp: GradeInput) -> Any:
    if params_baseline is not None:
        return params_baseline
    if inp.baseline_output is None:
        raise NoBaselineYet(NO_BASELINE_REASON)
    return parse_json_output(inp.baseline_output, allow_fence=True)


def _no_baseline_outcome() -> Outcome:
    # Neither pass nor fail: an `error` would lower the first version's pass rate for
    # something it could not have done.
    return Outcome(0.0, NO_BASELINE_REASON, status="not_evaluated")


class StructuralParams(Params):
    baseline: Any = None
    require_keys: list[str] = []
    ignore_fields: list[str] = []
    ignore_values: list[str] = []
    allow_additional_fields: bool = True
    allow_field_reordering: bool = True
    # Seed 003 `strict: true`: the shape must be the baseline's exactly - no additional
    # fields and the same order - unless an `allow_*` option is given explicitly.
    strict: bool = False

    def allows(self, option: str) -> bool:
        if option in self.model_fields_set or not self.strict:
            return bool(getattr(self, option))
        return False


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


class _Differ:
    def __init__(self, params: StructuralParams) -> None:
        self.p = params
        self.diffs: list[str] = []

    def skip(self, path: str) -> bool:
        return any(matches_relative(path, pat) for pat in self.p.ignore_fields)

    def value_free(self, path: str) -> bool:
        return any(matches_relative(path, pat) for pat in self.p.ignore_values)

    def compare(self, base: Any, actual: Any, path: str) -> None:
        if path and self.skip(path):
            return
        if isinstance(base, str) and (m := _PLACEHOLDER.match(base)) and m.group(1) in _PLACEHOLDERS:
            if not _PLACEHOLDERS[m.group(1)](actual):
                self.diffs.append(f"{path or '$'}: {actual!r} is not {m.group(1)}")
            return
        if path and self.value_free(path):
            return
        if isinstance(base, dict):
            if not isinstance(actual, dict):
                self.diffs.append(f"{path or '$'}: expected an object, got {type(actual).__name__}")
                return
            for key, value in base.items():
                child = join(path, key)
                if key not in actual:
                    if not self.skip(child):
                        self.diffs.append(f"{child}: missing")
                    continue
                self.compare(value, actual[key], child)
            if not self.p.allows("allow_additional_fields"):
                for key in actual.keys() - base.keys():
                    if not self.skip(join(path, key)):
                        self.diffs.append(f"{join(path, key)}: not in the baseline")
            if not self.p.allows("allow_field_reordering") and list(base) != [k for k in actual if k in base]:
                self.diffs.append(f"{path or '$'}: field order changed")
            return
        if isinstance(base, list):
            if not isinstance(actual, list):
                self.diffs.append(f"{path or '$'}: expected a list, got {type(actual).__name__}")
                return
            if self.value_free(join(path, 0)) or self.skip(join(path, 0)):
                return  # `data.*`: the items' values are free, so their number is too
            if len(base) == 1 and len(actual) != 1 and isinstance(base[0], (dict, str)):
                # A one-element baseline list describes every element (seed 003 example).
                for i, item in enumerate(actual):
                    self.compare(base[0], item, join(path, i))
                return
            if self.p.allows("allow_field_reordering") and not any(isinstance(b, (dict, list)) for b in base):
                if Counter(map(_canonical, base)) != Counter(map(_canonical, actual)):
                    self.diffs.append(f"{path or '$'}: items differ (order ignored)")
                return
            if len(base) != len(actual):
                self.diffs.append(f"{path or '$'}: {len(actual)} items, baseline has {len(base)}")
            for i, (b, a) in enumerate(zip(base, actual)):
                self.compare(b, a, join(path, i))
            return
        if base != actual:
            self.diffs.append(f"{path or '$'}: {actual!r} != baseline {base!r}")


def matches_relative(path: str, pattern: str) -> bool:
    """``pattern`` names ``path`` from the root or from any value inside it.

    Seed 003 writes ``ignore_fields``/``ignore_values``/``require_keys`` relative to the
    compared value: ``users.*.id`` for a baseline ``{status, body: {users: [...]}}``
    means ``body.users.*.id``."""
    parts = [str(p) for p in split_path(path)]
    return any(matches_pattern(".".join(parts[start:]), pattern) for start in range(len(parts)))


def has_key_path(value: Any, key_path: str, depth: int = 0) -> bool:
    """``key_path`` resolves from ``value`` or from a mapping nested in it (``require_keys``)."""
    if not is_missing(get_path(value, key_path)):
        return True
    if depth >= 32:
        return False
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return any(isinstance(c, (dict, list)) and has_key_path(c, key_path, depth + 1) for c in children)


class Structural(Grader[StructuralParams]):
    type = "structural"
    group = "regression"  # section of docs/assertions.md
    score_range = "0 or 1"
    aliases = ("structural_match",)
    Params = StructuralParams

    def grade(self, params: StructuralParams, inp: GradeInput) -> Outcome:
        try:
            base = _baseline(params.baseline, inp)
        except NoBaselineYet:
            return _no_baseline_outcome()
        except (LookupError, ValueError) as exc:
            return Outcome(0.0, str(exc), status="error")
        try:
            actual = parse_json_output(inp.output, allow_fence=True)
        except ValueError as exc:
            return Outcome.binary(False, str(exc))
        differ = _Differ(params)
        missing_keys = [k for k in params.require_keys if not has_key_path(actual, k)]
        differ.diffs.extend(f"{k}: required key missing" for k in missing_keys)
        differ.compare(base, actual, "")
        ok = not differ.diffs
        reason = "structure matches the baseline" if ok else f"{len(differ.diffs)} difference(s): {differ.diffs[0]}"
        return Outcome.binary(ok, reason, differences=differ.diffs)


class Tolerance(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min_delta: float | None = None
    max_delta: float | None = None


class NumericParams(Params):
    baseline: Any = None
    # Either one tolerance for every numeric field, or one per field (dot path prefix).
    tolerance: Tolerance | dict[str, Tolerance] = Tolerance()
    fields: list[str] = []


def _numbers(value: Any, path: str = "") -> dict[str, float]:
    if isinstance(value, bool):
        return {}
    if isinstance(value, (int, float)):
        return {path or "$": float(value)}
    out: dict[str, float] = {}
    if isinstance(value, dict):
        for k, v in value.items():
            out.update(_numbers(v, join(path, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.update(_numbers(v, join(path, i)))
    return out


class Numeric(Grader[NumericParams]):
    type = "numeric"
    group = "regression"  # section of docs/assertions.md
    score_range = "0 or 1"
    aliases = ("numeric_comparison",)
    Params = NumericParams

    def _tolerance(self, params: NumericParams, path: str) -> Tolerance:
        if isinstance(params.tolerance, Tolerance):
            return params.tolerance
        best = ""
        for prefix in params.tolerance:
            if matches_pattern(path, prefix) and len(prefix) > len(best):
                best = prefix
        return params.tolerance.get(best, Tolerance()) if best else Tolerance(min_delta=0, max_delta=0)

    def grade(self, params: NumericParams, inp: GradeInput) -> Outcome:
        try:
            base = _baseline(params.baseline, inp)
        except NoBaselineYet:
            return _no_baseline_outcome()
        except (LookupError, ValueError) as exc:
            return Outcome(0.0, str(exc), status="error")
        try:
            actual = parse_json_output(inp.output, allow_fence=True)
        except ValueError as exc:  # the output's fault: a failed grade, as in `structural`
            return Outcome.binary(False, str(exc))
        base_numbers, actual_numbers = _numbers(base), _numbers(actual)
        if params.fields:
            base_numbers = {k: v for k, v in base_numbers.items()
                            if any(matches_pattern(k, f) for f in params.fields)}
        if not base_numbers:
            return Outcome(0.0, "the baseline has no numeric fields to compare", status="error")
        problems, deltas = [], {}
        for path, old in base_numbers.items():
            if path not in actual_numbers:
                problems.append(f"{path}: missing")
                continue
            delta = actual_numbers[path] - old
            deltas[path] = delta
            tol = self._tolerance(params, path)
            if tol.min_delta is not None and delta < tol.min_delta:
                problems.append(f"{path}: {old:g} -> {actual_numbers[path]:g} (delta {delta:+g} < {tol.min_delta:+g})")
            if tol.max_delta is not None and delta > tol.max_delta:
                problems.append(f"{path}: {old:g} -> {actual_numbers[path]:g} (delta {delta:+g} > {tol.max_delta:+g})")
        ok = not problems
        reason = "all numeric fields within tolerance" if ok else f"{len(problems)} out of tolerance: {problems[0]}"
        return Outcome.binary(ok, reason, deltas=deltas, problems=problems)

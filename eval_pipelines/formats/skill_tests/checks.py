"""Seed 000 rules on a whole v2 tests.json that the case loader does not see.

* ``profile`` is required in ``EvalConfigV2`` (``profile: SkillEvalProfile``, not
  optional): a missing one is refused, not silently read as ``deterministic``. The
  v1 format has no profile; its conversion writes ``deterministic``.
* ``EvalRubric.criteria[].weight`` is "0-1, should sum to 1": weights that do not
  are kept (the judge's score is their weighted mean, so they count relative to
  their sum) and a stored warning says so.
"""

from __future__ import annotations

import math
from typing import Any

from eval_pipelines.suite.errors import SpecError, format_path
from eval_pipelines.suite.source import Document


def missing_profile(doc: Document, data: dict[str, Any], profiles: tuple[str, ...] | list[str]) -> SpecError | None:
    if "profile" in data:
        return None
    return SpecError(str(doc.file), ("profile",), "required field is missing (seed 000 EvalConfigV2)",
                     doc.line_of(("profile",)) or 1, "one of " + ", ".join(profiles))


def rubric_weight_warnings(doc: Document, data: dict[str, Any]) -> list[str]:
    """One warning per rubric whose criteria weights do not sum to 1."""
    warnings: list[str] = []
    cases = data.get("testCases")
    for i, case in enumerate(cases if isinstance(cases, list) else []):
        expected = case.get("expected") if isinstance(case, dict) else None
        rubric = expected.get("rubric") if isinstance(expected, dict) else None
        criteria = rubric.get("criteria") if isinstance(rubric, dict) else None
        if not isinstance(criteria, list) or not criteria:
            continue
        weights = [c.get("weight") for c in criteria if isinstance(c, dict)]
        if len(weights) != len(criteria) or not all(
                isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w) for w in weights):
            continue  # a missing or invalid weight is the rubric model's error, reported with its line
        total = float(sum(weights))
        if math.isclose(total, 1.0, abs_tol=1e-6):
            continue
        path = ("testCases", i, "expected", "rubric", "criteria")
        line = doc.line_of(path)
        where = str(doc.file) + (f":{line}" if line else "")
        warnings.append(f"{where}: {format_path(path)}: weights sum to {total:g}, not 1 (seed 000: they should "
                        "sum to 1); they are used relative to their sum")
    return warnings

"""Grade the cheap deterministic assertions column-at-a-time.

Grading one output at a time costs a few microseconds of Python per grade
(a ``GradeInput``, parameter validation, an ``Outcome``, a ``Grade``, a dict
row, a ``json.dumps``), which caps a million stored outputs at well under
200,000 assertions a second. Graders that only look at the output text
(``equals``, ``contains``, ...) set ``batchable`` and grade whole columns:
parameters are validated once per assertion, the output rows are joined to
the assertions in pandas, and each grader fills score/reason/details lists in
one tight loop. Negation and the pass threshold (``Assertion.pass_minimum``) are applied
here as in ``grading._grade_from``; every other assertion goes through the per-output path.
The two paths give identical rows (tests/test_batch_grading.py).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from eval_pipelines.graders.registry import get_grader
from eval_pipelines.spec.models import Suite

GRADE_COLUMNS = ["test_id", "target", "trial", "assertion_index", "assertion_type", "assertion_name",
                 "weight", "required", "score", "passed", "status", "reason", "details"]


def batch_plan(suite: Suite) -> pd.DataFrame:
    """One row per (case, assertion) that can be graded in batch, with the
    validated parameters and the case as Python objects."""
    rows: list[dict[str, Any]] = []
    for case in suite.tests:
        for index, assertion in enumerate(case.assertions):
            grader = get_grader(assertion.type)
            if grader is None or not grader.batchable:
                continue
            try:
                params = grader.Params.model_validate(assertion.config)
            except ValueError:
                continue  # the per-output path records the error grade
            if not grader.can_batch(params, case):
                continue
            rows.append({
                "test_id": case.id, "assertion_index": index, "grader": grader.type,
                "params": params, "case": case, "assertion_type": assertion.type,
                "assertion_name": assertion.label, "weight": float(assertion.weight),
                "required": json.dumps(assertion.required), "negate": assertion.negate,
                "minimum": assertion.pass_minimum(),
            })
    return pd.DataFrame(rows, columns=["test_id", "assertion_index", "grader", "params", "case",
                                       "assertion_type", "assertion_name", "weight", "required",
                                       "negate", "minimum"])


def batch_grade(plan: pd.DataFrame, outputs: pd.DataFrame) -> pd.DataFrame:
    """Grades (``GRADE_COLUMNS``) of every planned assertion for every output
    that has text; outputs with an error get no grades, as in the per-output path."""
    if plan.empty or outputs.empty:
        return pd.DataFrame(columns=GRADE_COLUMNS)
    usable = outputs.loc[outputs["error"].isna() & outputs["output"].notna(), ["test_id", "target", "trial", "output"]]
    joined = usable.merge(plan, on="test_id", how="inner", sort=False)
    if joined.empty:
        return pd.DataFrame(columns=GRADE_COLUMNS)
    parts = []
    for grader_type, group in joined.groupby("grader", sort=False):
        grader = get_grader(grader_type)
        assert grader is not None
        result = grader.grade_batch(group["params"].tolist(), group["output"].tolist(), group["case"].tolist())
        scores = np.clip(np.asarray(result.scores, dtype=float), 0.0, 1.0)
        reasons = pd.Series(result.reasons, index=group.index, dtype=object)
        negate = group["negate"].to_numpy(dtype=bool)
        if negate.any():
            scores = np.where(negate, 1.0 - scores, scores)
            reasons = reasons.where(~negate, "negated: " + reasons)
        parts.append(pd.DataFrame({
            "test_id": group["test_id"], "target": group["target"], "trial": group["trial"],
            "assertion_index": group["assertion_index"], "assertion_type": group["assertion_type"],
            "assertion_name": group["assertion_name"], "weight": group["weight"],
            "required": group["required"], "score": scores,
            "passed": scores >= group["minimum"].to_numpy(dtype=float),
            "status": "graded", "reason": reasons,
            "details": pd.Series(result.details, index=group.index, dtype=object),
        }))
    return pd.concat(parts, ignore_index=True)[GRADE_COLUMNS]

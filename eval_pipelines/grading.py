"""Grade one output against one assertion: dispatch, negation, and error capture.

A grader that raises never takes the run down: the exception becomes an
``error`` grade with its message, and the case is reported as an error.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from eval_pipelines.graders.base import GradeInput, GradeStatus, Outcome
from eval_pipelines.graders.registry import get_grader
from eval_pipelines.spec.models import Assertion


@dataclass(frozen=True)
class Grade:
    assertion_index: int
    assertion_type: str
    assertion_name: str
    score: float
    passed: bool
    status: GradeStatus
    reason: str
    weight: float
    required: bool | float
    details: dict[str, Any] = field(default_factory=dict)


async def agrade_output(assertion: Assertion, inp: GradeInput, index: int = 0) -> Grade:
    grader = get_grader(assertion.type)
    try:
        if grader is None:  # the loader rejects unknown types; keep runs safe anyway
            raise KeyError(f"unknown assertion type {assertion.type!r}")
        params = grader.Params.model_validate(assertion.config)
        outcome = await grader.agrade(params, inp)
    except Exception as exc:  # noqa: BLE001 - any grader failure is recorded, not raised
        outcome = Outcome(0.0, f"grader failed: {type(exc).__name__}: {exc}", status="error")
    return _grade_from(assertion, outcome, index)


def grade_output(assertion: Assertion, inp: GradeInput, index: int = 0) -> Grade:
    """Synchronous wrapper for callers outside an event loop (tests, scripts)."""
    return asyncio.run(agrade_output(assertion, inp, index))


def _grade_from(assertion: Assertion, outcome: Outcome, index: int) -> Grade:
    score = min(1.0, max(0.0, float(outcome.score)))
    reason = outcome.reason
    if assertion.negate and outcome.status == "graded":
        score = 1.0 - score
        reason = f"negated: {reason}"
    passed = outcome.status == "graded" and score >= assertion.pass_minimum()
    return Grade(
        assertion_index=index,
        assertion_type=assertion.type,
        assertion_name=assertion.label,
        score=score,
        passed=passed,
        status=outcome.status,
        reason=reason,
        weight=assertion.weight,
        required=assertion.required,
        details=outcome.details,
    )

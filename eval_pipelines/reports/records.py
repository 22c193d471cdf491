"""The typed records a report is made of: a run, its cases and their grades, the
baseline's view of a case, points of the pass-rate history, and ``ReportData``
holding them all.

They carry no loading code (``reports/data.py`` fills them from DuckDB), so the
renderers and the loaders can both import them without importing each other.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable

from eval_pipelines.grading.registry import get_grader

UNCATEGORISED = "uncategorised"
COUNTED = ("graded", "error")  # statuses that count in pass rates (seed 002)


class ReportError(ValueError):
    """An expected problem (unknown skill, version or date): one line for the user."""


def grader_family(assertion_type: str) -> str:
    """code, model or human: the grader's own metadata (``Grader.family``), not a list kept here."""
    grader = get_grader(assertion_type)
    return grader.grader_family() if grader is not None else "code"


@dataclass(frozen=True)
class Grade:
    index: int
    type: str
    name: str
    family: str  # code | model | human
    weight: float
    required: Any
    score: float
    passed: bool
    status: str
    reason: str
    details: dict[str, Any]

    @property
    def failing(self) -> bool:
        return not self.passed and self.status in COUNTED


@dataclass(frozen=True)
class BaselineCase:
    version: str
    eval_date: str
    output: str | None
    error: str | None
    verdict: str | None
    status: str
    score: float | None
    reason: str

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"


@dataclass
class CaseResult:
    test_id: str
    name: str | None
    category: str
    target: str
    trial: int
    input: str
    expected: Any
    criteria: str | None
    output: str | None
    error: str | None
    verdict: str | None
    status: str
    score: float | None
    reason: str
    latency_ms: float | None = None
    cost_usd: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached: bool = False
    grades: list[Grade] = field(default_factory=list)
    baseline: BaselineCase | None = None
    change: str | None = None  # now_failing | now_passing | changed | same | new (comparisons only)
    flaky: bool = False

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    @property
    def counted(self) -> bool:
        """Counts in pass rates: graded or error (not-evaluated and pending are left out)."""
        return self.status in COUNTED

    @property
    def failed(self) -> bool:
        return self.counted and not self.passed

    @property
    def outcome(self) -> str:
        """One word for filters: pass, borderline, fail, error, not_evaluated, pending_human."""
        if self.status in ("error", "not_evaluated", "pending_human"):
            return self.status
        return self.verdict or self.status

    @property
    def failing_grades(self) -> list[Grade]:
        return [g for g in self.grades if g.failing]

    @property
    def failed_expectations(self) -> list[dict[str, Any]]:
        """The unmet expectations of its ``expectations`` grades (evals.json): {text, evidence}."""
        return [{"text": str(item.get("text")), "evidence": str(item.get("evidence") or "")}
                for g in self.failing_grades if g.type == "expectations"
                for item in g.details.get("expectations") or [] if isinstance(item, dict) and not item.get("passed")]


@dataclass(frozen=True)
class RunInfo:
    skill: str
    version: str
    skill_version: str
    eval_date: str
    suite: str
    suite_format: str | None
    run_id: str | None
    run_ids: list[str]
    timestamp: datetime | None
    duration_seconds: float | None
    duration_basis: str
    environment: dict[str, Any]
    thresholds: dict[str, float]
    trials: int | None
    n_tests: int | None
    reporting: dict[str, Any] | None = None
    # The suite's load warnings (suites.warnings), e.g. "accepted, not used: FIELD: reason".
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class HistoryPoint:
    version: str
    eval_date: str
    pass_rate: float | None
    mean_score: float | None
    passed: int
    counted: int
    is_current: bool = False
    is_baseline: bool = False


@dataclass
class ReportData:
    run: RunInfo
    cases: list[CaseResult]
    metrics: dict[str, dict[str, float]]  # target ('*' = all) -> metric -> value
    baseline: RunInfo | None = None
    baseline_metrics: dict[str, float] = field(default_factory=dict)  # target '*'
    version_history: list[HistoryPoint] = field(default_factory=list)  # one point per version
    date_history: list[HistoryPoint] = field(default_factory=list)  # the version, per eval date
    removed: list[str] = field(default_factory=list)  # baseline case ids this run no longer has
    # The pipeline's statistical verdicts against this baseline (regressions table, level 'target'):
    # [{target, pass_rate_delta, ci_low, ci_high, p_value, adjusted_p, change}]
    significance: list[dict[str, Any]] = field(default_factory=list)
    # The trigger evaluation per target (reports/triggers.py; empty without trigger rows).
    triggers: list[Any] = field(default_factory=list)
    blind: list[Any] = field(default_factory=list)  # the blind comparison per baseline (reports/blind.py)
    # Runs in several configurations (with_skill, without_skill): each one's metrics over all targets,
    # and the skill's uplift per target (the skill_uplift view). Empty for a single-configuration run.
    configurations: dict[str, dict[str, float]] = field(default_factory=dict)
    uplift: list[dict[str, Any]] = field(default_factory=list)

    @property
    def overall(self) -> dict[str, float]:
        return self.metrics.get("*", {})

    @property
    def compared(self) -> bool:
        return self.baseline is not None

    def changed(self, *kinds: str) -> list[CaseResult]:
        return [c for c in self.cases if c.change in kinds]

    def label_shape(self) -> tuple[bool, bool]:
        """(several targets?, several trials?): whether case labels name them.

        Computed once per report: asked for every case, recomputing it made
        rendering quadratic (123 s of a 10,000-case run, docs/benchmarks.md)."""
        key = (id(self.cases), len(self.cases))
        if getattr(self, "_label_shape_key", None) != key:
            self._label_shape = (len({c.target for c in self.cases}) > 1, len({c.trial for c in self.cases}) > 1)
            self._label_shape_key = key
        return self._label_shape


def once_per_report(compute: Callable[[ReportData], Any]) -> Callable[[ReportData], Any]:
    """``compute(data)`` computed once per report (per list of cases) and shared by the renderers
    that ask for it; the result is read-only."""
    name = compute.__qualname__

    def cached(data: ReportData) -> Any:
        key = (id(data.cases), len(data.cases))
        found = data.__dict__.setdefault("_computed", {}).get(name)
        if found is None or found[0] != key:
            found = data._computed[name] = (key, compute(data))
        return found[1]

    return functools.wraps(compute)(cached)

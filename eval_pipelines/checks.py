"""Checks run after a stage, the same in the CLI and in Dagster (as asset checks).

A check reads what its stage stored and says pass or fail with the numbers in
its description; a ``blocking`` check that fails stops the stages after it
(seed 003 blocking gates).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from eval_pipelines.analysis.gates import failed_thresholds, metric_for_threshold
from eval_pipelines.stages import Markdown, StageContext
from eval_pipelines.store import tables


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    description: str
    metadata: dict[str, Any] = field(default_factory=dict)
    # Nothing to check (no thresholds declared, no baseline yet): neither a pass
    # nor a failure. Dagster shows the check as skipped, the CLI says "skipped".
    skipped: bool = False


@dataclass(frozen=True)
class Check:
    name: str
    stage: str  # the stage (asset) it checks
    description: str
    evaluate: Callable[[StageContext], CheckResult]
    blocking: bool = False


def _thresholds_table(thresholds: dict[str, float], overall: dict[str, float], misses: set[str]) -> str:
    table = ["| threshold | metric | value | minimum | status |", "|---|---|---|---|---|"]
    for name, minimum in sorted(thresholds.items()):
        metric = metric_for_threshold(name)
        value = overall.get(metric)
        shown = "missing" if value is None else f"{value:.3f}"
        table.append(f"| {name} | {metric} | {shown} | {minimum:.3f} | {'FAIL' if name in misses else 'PASS'} |")
    return "\n".join(table)


def _misses_text(misses: list[tuple[str, float | None, float]]) -> str:
    return "; ".join(f"{n} = {'missing' if v is None else f'{v:.3f}'} < {m:.3f}" for n, v, m in misses)


def thresholds_met(ctx: StageContext) -> CheckResult:
    thresholds = ctx.suite().suite.thresholds
    overall = tables.decode_metrics(ctx.rows("metrics"))
    if not thresholds:
        return CheckResult(True, "skipped: no thresholds declared", {"thresholds": "none declared"}, skipped=True)
    misses = failed_thresholds(thresholds, overall)
    return CheckResult(
        passed=not misses,
        description=_misses_text(misses) if misses else "all thresholds met",
        metadata={"thresholds": Markdown(_thresholds_table(thresholds, overall, {n for n, _, _ in misses}))},
    )


def outputs_complete(ctx: StageContext) -> CheckResult:
    suite = ctx.suite().suite
    rows = ctx.rows("model_outputs")
    expected = {(c.id, t, k) for c in suite.tests for t in suite.targets_for(c)
                for k in range(suite.execution.trials.count)}
    found = {(r["test_id"], r["target"], int(r["trial"])) for r in rows.to_dict("records")}
    missing = sorted(expected - found)
    passed = not missing and len(rows) == len(expected)
    return CheckResult(
        passed=passed,
        description=(f"{len(rows)} rows for {len(expected)} case x target x trial" if passed
                     else f"{len(missing)} of {len(expected)} outputs missing, {len(rows)} rows"),
        metadata={"expected_rows": len(expected), "rows": len(rows),
                  "errors": int(rows["error"].notna().sum()) if len(rows) else 0,
                  "missing": [list(m) for m in missing[:50]]},
    )


def blocking_gates(ctx: StageContext) -> CheckResult:
    suite = ctx.suite().suite
    if not suite.blocking:
        # Passed, not skipped: "no blocking gate was missed" holds for a suite with none, and a
        # check skipped in a failed run would show as failed in the UI's summary of the check.
        return CheckResult(True, "not blocking: a missed threshold does not stop the run", {"blocking": False})
    misses = failed_thresholds(suite.thresholds, tables.decode_metrics(ctx.rows("metrics")))
    return CheckResult(not misses, _misses_text(misses) or "all thresholds met", {"blocking": True})


def no_regression(ctx: StageContext) -> CheckResult:
    rows = ctx.rows("regressions")
    targets = rows[rows["level"] == "target"] if not rows.empty else rows
    if targets.empty:
        return CheckResult(True, "skipped: no baseline to compare with yet", skipped=True)
    details = []
    for r in targets.to_dict("records"):
        detail = json.loads(r["detail"])
        details.append({
            "comparison": r["comparison"], "baseline": f"{r['baseline_skill_version']} ({r['baseline_eval_date']})",
            "target": r["target"], "estimate": round(r["pass_rate_delta"], 4),
            "interval": [round(r["ci_low"], 4), round(r["ci_high"], 4)], "p_value": r["p_value"],
            "adjusted_p": r["adjusted_p"], "verdict": r["change"], "cases": detail["drivers"],
        })
    worst = min(details, key=lambda d: d["estimate"])
    return CheckResult(
        passed=not (targets["change"] == "regressed").any(),
        description=(f"{worst['comparison']} {worst['target']}: pass rate {worst['estimate']:+.1%} "
                     f"[{worst['interval'][0]:+.1%}, {worst['interval'][1]:+.1%}], p={worst['adjusted_p']:.3g}; "
                     f"cases: {', '.join(worst['cases'][:10]) or 'none'}"),
        metadata={"comparisons": details, "estimate": worst["estimate"], "p_value": float(worst["adjusted_p"])},
    )


CHECKS: tuple[Check, ...] = (
    Check("every_case_has_an_output", "model_outputs",
          "Cases in = rows out: one output or error row per case x target x trial.", outputs_complete),
    Check("suite_thresholds_met", "metrics",
          "Every threshold the suite declares (pass rate, pass@k, pass^k) is met. Skipped when the suite "
          "declares none.", thresholds_met),
    Check("blocking_gates", "metrics",
          "For suites marked `blocking: true`: a missed threshold fails the run and stops the regression "
          "report. Passes for suites that are not blocking.", blocking_gates, blocking=True),
    Check("no_significant_regression", "regression_report",
          "No significant drop against the previous version or the previous night: fails when the drop is "
          "significant (Holm-adjusted) and at least the minimum effect, and names the cases that drove it. "
          "Skipped while there is no baseline.", no_regression),
)


def checks_for(stage: str) -> list[Check]:
    return [c for c in CHECKS if c.stage == stage]

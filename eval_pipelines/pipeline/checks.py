"""Checks run after a stage, the same in the CLI and in Dagster (as asset checks).

A check reads what its stage stored and says pass or fail with the numbers in
its description; a ``blocking`` check that fails stops the stages after it
(seed 003 blocking gates).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from eval_pipelines.analysis.gates import failed_thresholds, metric_for_threshold, missing_reason
from eval_pipelines.pipeline.catalog import CHECK_SPECS, CheckSpec
from eval_pipelines.pipeline.stages import Markdown, StageContext
from eval_pipelines.store import tables
from eval_pipelines.store.configurations import column


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
    """A check's facts (``catalog.CheckSpec``: name, stage, blocking) and the function that evaluates it."""

    spec: CheckSpec
    evaluate: Callable[[StageContext], CheckResult]

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def stage(self) -> str:  # the stage (asset) it checks
        return self.spec.stage

    @property
    def blocking(self) -> bool:
        return self.spec.blocking


def _thresholds_table(thresholds: dict[str, float], overall: dict[str, float], misses: set[str]) -> str:
    table = ["| threshold | metric | value | minimum | status |", "|---|---|---|---|---|"]
    for name, minimum in sorted(thresholds.items()):
        metric = metric_for_threshold(name)
        value = overall.get(metric)
        shown = missing_reason(name, overall) if value is None else f"{value:.3f}"
        table.append(f"| {name} | {metric} | {shown} | {minimum:.3f} | {'FAIL' if name in misses else 'PASS'} |")
    return "\n".join(table)


def _misses_text(misses: list[tuple[str, float | None, float]], overall: dict[str, float]) -> str:
    return "; ".join(f"{n} {missing_reason(n, overall)}" if v is None else f"{n} = {v:.3f} < {m:.3f}"
                     for n, v, m in misses)


def thresholds_met(ctx: StageContext) -> CheckResult:
    thresholds = ctx.suite().suite.thresholds
    overall = tables.decode_metrics(ctx.rows("metrics"))
    if not thresholds:
        return CheckResult(True, "skipped: no thresholds declared", {"thresholds": "none declared"}, skipped=True)
    misses = failed_thresholds(thresholds, overall)
    return CheckResult(
        passed=not misses,
        description=_misses_text(misses, overall) if misses else "all thresholds met",
        metadata={"thresholds": Markdown(_thresholds_table(thresholds, overall, {n for n, _, _ in misses}))},
    )


def outputs_complete(ctx: StageContext) -> CheckResult:
    suite = ctx.suite().suite
    rows = ctx.rows("model_outputs")
    configurations = suite.execution.configurations
    expected = {(c.id, t, k, g) for c in suite.tests for t in suite.targets_for(c)
                for k in range(suite.trials_for(c)) for g in configurations}
    stored = column(rows) if len(rows) else []
    # Column by column: a row dict per output (every column, the texts and traces too) cost ~1.4 KB
    # each for a moment, 136 MB at 100,000 outputs.
    found = {(test_id, target, int(trial), g) for test_id, target, trial, g in
             zip(rows["test_id"], rows["target"], rows["trial"], stored)} if len(rows) else set()
    missing = sorted(expected - found)
    passed = not missing and len(rows) == len(expected)
    each = " x configuration" if len(configurations) > 1 else ""
    return CheckResult(
        passed=passed,
        description=(f"{len(rows)} rows for {len(expected)} case x target x trial{each}" if passed
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
    overall = tables.decode_metrics(ctx.rows("metrics"))
    misses = failed_thresholds(suite.thresholds, overall)
    return CheckResult(not misses, _misses_text(misses, overall) or "all thresholds met", {"blocking": True})


def _levels(ctx: StageContext, level: str):  # noqa: ANN202 - a pandas frame
    rows = ctx.rows("regressions")
    return rows[rows["level"] == level] if not rows.empty else rows


def _case_q_values(ctx: StageContext) -> dict[tuple[str, str, str], float]:
    """(comparison, target, test_id) -> q-value of the cases labelled regressed."""
    cases = _levels(ctx, "case")
    if cases.empty:
        return {}
    cases = cases[cases["change"] == "regressed"]
    return {(r["comparison"], r["target"], r["test_id"]): r["q_value"] for r in cases.to_dict("records")}


def _named(cases: list[str], q_values: dict[str, float]) -> str:
    return ", ".join(f"{c} (q={q_values[c]:.2g})" if c in q_values else c for c in cases[:10]) or "none"


def no_regression(ctx: StageContext) -> CheckResult:
    targets = _levels(ctx, "target")
    if targets.empty:
        return CheckResult(True, "skipped: no baseline to compare with yet", skipped=True)
    q_values = _case_q_values(ctx)
    details = []
    for r in targets.to_dict("records"):
        detail = json.loads(r["detail"])
        labelled = {t: q for (c, g, t), q in q_values.items() if c == r["comparison"] and g == r["target"]}
        details.append({
            "comparison": r["comparison"], "baseline": f"{r['baseline_skill_version']} ({r['baseline_eval_date']})",
            "target": r["target"], "estimate": round(r["pass_rate_delta"], 4),
            "interval": [round(r["ci_low"], 4), round(r["ci_high"], 4)], "p_value": r["p_value"],
            "adjusted_p": r["adjusted_p"], "significant": bool(r["significant"]),
            "large_enough": bool(r["large_enough"]), "verdict": r["change"], "wording": r["verdict"],
            "margin": detail.get("min_effect"), "effect_rule": detail.get("effect_rule"),
            "cases": detail["drivers"], "labelled": labelled,
        })
    regressed = [d for d in details if d["verdict"] == "regressed"]
    worst = min(regressed or details, key=lambda d: d["estimate"])
    return CheckResult(
        passed=not regressed,
        description=_regression_text(worst),
        metadata={"comparisons": details, "estimate": worst["estimate"], "p_value": float(worst["adjusted_p"]),
                  "significant": worst["significant"], "large_enough": worst["large_enough"]},
    )


def _regression_text(worst: dict) -> str:
    """The verdict, the cases labelled regressed (the number the reports' "Labelled regressed" tile
    counts) and, apart, the other cases that fell: a drop spread over many cases can be significant
    for the target while no single case is labelled."""
    labelled = worst["labelled"]
    fell = [c for c in worst["cases"] if c not in labelled]
    text = (f"{worst['comparison']} {worst['target']}: {worst['wording']}; "
            f"labelled regressed: {_named(sorted(labelled, key=labelled.get), labelled)}")
    return text + (f"; fell, not labelled on their own: {_named(fell, {})}" if fell else "")


def no_hidden_breakage(ctx: StageContext) -> CheckResult:
    rows = _levels(ctx, "breakage")
    if rows.empty:
        return CheckResult(True, "skipped: no baseline to compare with yet", skipped=True)
    q_values = _case_q_values(ctx)
    details = []
    for r in rows.to_dict("records"):
        detail = json.loads(r["detail"])
        labelled = {t: q for (c, g, t), q in q_values.items() if c == r["comparison"] and g == r["target"]}
        details.append({
            "comparison": r["comparison"], "baseline": f"{r['baseline_skill_version']} ({r['baseline_eval_date']})",
            "target": r["target"], "significant_drops": detail["significant_drops"],
            "significant_rises": detail["significant_rises"], "p_value": r["p_value"],
            "adjusted_p": r["adjusted_p"], "broken": r["change"] == "broken", "wording": r["verdict"],
            "labelled": labelled, "dropped": detail["dropped"],
        })
    broken = [d for d in details if d["broken"]]
    worst = min(broken or details, key=lambda d: d["adjusted_p"])
    return CheckResult(
        passed=not broken,
        description=(f"{worst['comparison']} {worst['target']}: {worst['wording']}; labelled regressed"
                     f": {_named(sorted(worst['labelled'], key=worst['labelled'].get), worst['labelled'])}"),
        metadata={"comparisons": details, "p_value": float(worst["adjusted_p"]),
                  "significant_drops": int(worst["significant_drops"]),
                  "significant_rises": int(worst["significant_rises"])},
    )


def skill_triggers(ctx: StageContext) -> CheckResult:
    """Trigger precision, recall and accuracy against the package's minimums (pipeline/triggers.py)."""
    from eval_pipelines.pipeline.triggers import check_numbers, package_settings

    passed, text, meta = check_numbers(ctx.rows("trigger_results"), package_settings(ctx.suite().package_root))
    return CheckResult(passed is not False, text, meta, skipped=passed is None)


def skill_helps(ctx: StageContext) -> CheckResult:
    """The skill's uplift over all targets: fails when the skill hurts significantly (``hurts``)."""
    rows = ctx.rows("uplifts")
    overall = rows[rows["target"] == "*"] if len(rows) else rows
    if overall.empty:
        return CheckResult(True, "skipped: no run without the skill to compare with (configurations: "
                                 "with_skill,without_skill)", skipped=True)
    r = overall.iloc[0]
    per_target = [{"target": t["target"], "verdict": t["verdict"], "delta": round(float(t["delta"]), 4)}
                  for t in rows.to_dict("records")]
    return CheckResult(
        passed=r["verdict"] != "hurts",
        description=f"{r['verdict']}: {r['wording']}",
        metadata={"verdict": str(r["verdict"]), "delta": float(r["delta"]), "ci_low": float(r["ci_low"]),
                  "ci_high": float(r["ci_high"]), "p_rise": float(r["p_rise"]), "p_drop": float(r["p_drop"]),
                  "with_skill": float(r["with_skill"]), "without_skill": float(r["without_skill"]),
                  "cases_compared": int(r["cases_compared"]), "significant": bool(r["significant"]),
                  "large_enough": bool(r["large_enough"]), "targets": per_target},
    )


# The facts are in catalog.py (the Dagster definitions read them without importing this module).
CHECKS: tuple[Check, ...] = tuple(
    Check(spec, globals()[spec.function]) for spec in CHECK_SPECS)


def checks_for(stage: str) -> list[Check]:
    return [c for c in CHECKS if c.stage == stage]

"""Asset checks: the suite's own gates, and that no case went missing."""


import json
import warnings

import dagster as dg

from eval_pipelines.defs.assets import _stored, metrics, model_outputs, regression_report
from eval_pipelines.defs.partitions import eval_partitions, partition_of
from eval_pipelines.defs.resources import EvalStore
from eval_pipelines.gates import failed_thresholds, metric_for_threshold
from eval_pipelines.store.duckdb_store import read_partition

# Partitioned asset checks are a Dagster preview feature; the checks must see
# their partition, so we use it and keep the warning out of every run's log.
warnings.filterwarnings("ignore", category=dg.PreviewWarning, message=".*partitions_def on an AssetCheckSpec.*")

@dg.asset_check(asset=metrics, partitions_def=eval_partitions, pool="duckdb",
                description="Every threshold the suite declares (pass rate, pass@k, pass^k) is met.")
def suite_thresholds_met(context: dg.AssetCheckExecutionContext, store: EvalStore) -> dg.AssetCheckResult:
    partition = partition_of(context)
    with store.connect() as con:
        stored = _stored(store, partition, con)
        rows = read_partition(con, "metrics", partition)
    overall = {r["metric"]: r["value"] for r in rows.to_dict("records") if r["target"] == "*"}
    if not stored.suite.thresholds:
        return dg.AssetCheckResult(passed=True, metadata={"thresholds": "none declared"})
    misses = {name for name, _, _ in failed_thresholds(stored.suite.thresholds, overall)}
    table = ["| threshold | metric | value | minimum | status |", "|---|---|---|---|---|"]
    for name, minimum in sorted(stored.suite.thresholds.items()):
        metric = metric_for_threshold(name)
        value = overall.get(metric)
        shown = "missing" if value is None else f"{value:.3f}"
        table.append(f"| {name} | {metric} | {shown} | {minimum:.3f} | {'FAIL' if name in misses else 'PASS'} |")
    failures = sorted(misses)
    return dg.AssetCheckResult(
        passed=not failures,
        severity=dg.AssetCheckSeverity.ERROR,
        description="failed: " + ", ".join(failures) if failures else "all thresholds met",
        metadata={"thresholds": dg.MetadataValue.md("\n".join(table))},
    )


@dg.asset_check(asset=model_outputs, partitions_def=eval_partitions, pool="duckdb",
                description="Cases in = rows out: one output or error row per case x target x trial.")
def every_case_has_an_output(context: dg.AssetCheckExecutionContext, store: EvalStore) -> dg.AssetCheckResult:
    partition = partition_of(context)
    with store.connect() as con:
        stored = _stored(store, partition, con)
        rows = read_partition(con, "model_outputs", partition)
    suite = stored.suite
    expected = {(c.id, t, k) for c in suite.tests for t in suite.targets_for(c)
                for k in range(suite.execution.trials.count)}
    found = {(r["test_id"], r["target"], int(r["trial"])) for r in rows.to_dict("records")}
    missing = sorted(expected - found)
    return dg.AssetCheckResult(
        passed=not missing and len(rows) == len(expected),
        metadata={"expected_rows": len(expected), "rows": len(rows),
                  "errors": int(rows["error"].notna().sum()) if len(rows) else 0,
                  "missing": dg.MetadataValue.json([list(m) for m in missing[:50]])},
    )


@dg.asset_check(asset=metrics, partitions_def=eval_partitions, pool="duckdb", blocking=True,
                description="For suites marked `blocking: true`: a missed threshold fails the run and "
                            "stops the regression report (seed 003 blocking gates).")
def blocking_gates(context: dg.AssetCheckExecutionContext, store: EvalStore) -> dg.AssetCheckResult:
    partition = partition_of(context)
    stored = _stored(store, partition)
    if not stored.suite.blocking:
        return dg.AssetCheckResult(passed=True, metadata={"blocking": False})
    with store.connect() as con:
        rows = read_partition(con, "metrics", partition)
    overall = {r["metric"]: r["value"] for r in rows.to_dict("records") if r["target"] == "*"}
    misses = failed_thresholds(stored.suite.thresholds, overall)
    return dg.AssetCheckResult(
        passed=not misses, severity=dg.AssetCheckSeverity.ERROR,
        description="; ".join(f"{n} {'missing' if v is None else f'{v:.3f}'} < {m:.3f}" for n, v, m in misses)
        or "all thresholds met",
        metadata={"blocking": True},
    )


@dg.asset_check(asset=regression_report, partitions_def=eval_partitions, pool="duckdb",
                description="No significant drop against the previous version or the previous night: "
                            "fails when the drop is significant (Holm-adjusted) and at least the minimum "
                            "effect, and names the cases that drove it.")
def no_significant_regression(context: dg.AssetCheckExecutionContext, store: EvalStore) -> dg.AssetCheckResult:
    partition = partition_of(context)
    with store.connect() as con:
        rows = read_partition(con, "regressions", partition)
    targets = rows[rows["level"] == "target"] if not rows.empty else rows
    if targets.empty:
        return dg.AssetCheckResult(passed=True, description="no baseline to compare with yet")
    regressed = targets[targets["change"] == "regressed"]
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
    return dg.AssetCheckResult(
        passed=regressed.empty,
        severity=dg.AssetCheckSeverity.ERROR,
        description=(f"{worst['comparison']} {worst['target']}: pass rate {worst['estimate']:+.1%} "
                     f"[{worst['interval'][0]:+.1%}, {worst['interval'][1]:+.1%}], p={worst['adjusted_p']:.3g}; "
                     f"cases: {', '.join(worst['cases'][:10]) or 'none'}"),
        metadata={"comparisons": dg.MetadataValue.json(details),
                  "estimate": worst["estimate"], "p_value": float(worst["adjusted_p"])},
    )


CHECKS = [suite_thresholds_met, every_case_has_an_output, blocking_gates, no_significant_regression]

"""Asset checks: the suite's own gates, and that no case went missing."""


import warnings

import dagster as dg

from eval_pipelines.defs.assets import _stored, metrics, model_outputs
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
    stored = _stored(store, partition)
    with store.connect() as con:
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
    stored = _stored(store, partition)
    suite = stored.suite
    expected = {(c.id, t, k) for c in suite.tests for t in suite.targets_for(c)
                for k in range(suite.execution.trials.count)}
    with store.connect() as con:
        rows = read_partition(con, "model_outputs", partition)
    found = {(r["test_id"], r["target"], int(r["trial"])) for r in rows.to_dict("records")}
    missing = sorted(expected - found)
    return dg.AssetCheckResult(
        passed=not missing and len(rows) == len(expected),
        metadata={"expected_rows": len(expected), "rows": len(rows),
                  "errors": int(rows["error"].notna().sum()) if len(rows) else 0,
                  "missing": dg.MetadataValue.json([list(m) for m in missing[:50]])},
    )


CHECKS = [suite_thresholds_met, every_case_has_an_output]

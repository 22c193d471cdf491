"""One asset per pipeline stage, each a partition of a DuckDB table.

    eval_suite -> test_cases -> model_outputs -> grades -> test_results -> metrics

Assets write their own rows (delete-then-insert in one transaction) instead of
going through an IO manager: the DuckDB IO manager fails on a multi-partition
with a dynamic dimension (dagster#32631) and is not atomic. Downstream assets
read their upstream's rows back from DuckDB, so each stage re-runs on its own.
"""


from dataclasses import replace
from pathlib import Path
from typing import Callable, TypeVar

import dagster as dg
import duckdb
import pandas as pd

from eval_pipelines import pipeline
from eval_pipelines.baselines import grading_context
from eval_pipelines.defs.partitions import eval_partitions, partition_of
from eval_pipelines.defs.resources import EvalProject, EvalStore, ModelAccess
from eval_pipelines.spec.errors import SpecErrors
from eval_pipelines.store.duckdb_store import Partition, read_partition, replace_partition
from eval_pipelines.targets.config import OpenAITargetConfig

GROUP = "evaluation"
T = TypeVar("T")


def _readable(action: Callable[[], T]) -> T:
    """Turn spec problems into a Dagster failure whose message is the problem list."""
    try:
        return action()
    except SpecErrors as exc:
        raise dg.Failure(
            description=f"Invalid skill package or suite:\n{exc}",
            metadata={"problems": dg.MetadataValue.md("\n".join(f"- `{e}`" for e in exc.errors))},
            allow_retries=False,
        ) from None
    except pipeline.MissingUpstream as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None


def _write(store: EvalStore, table: str, partition: Partition, rows: pd.DataFrame) -> dict[str, dg.MetadataValue]:
    with store.connect() as con:
        written = replace_partition(con, table, partition, rows)
        columns = con.execute(f"DESCRIBE {table}").fetchall()
    schema = dg.TableSchema(columns=[dg.TableColumn(name, kind) for name, kind, *_ in columns])
    return {
        "dagster/row_count": dg.MetadataValue.int(written),
        "dagster/column_schema": schema,
        "table": dg.MetadataValue.text(table),
        "partition": dg.MetadataValue.text(f"{partition.eval_date} / {partition.skill_version}"),
    }


def _stored(store: EvalStore, partition: Partition, con: duckdb.DuckDBPyConnection | None = None
            ) -> pipeline.StoredSuite:
    """The partition's suite; pass an open connection to read it with the step's other inputs
    (each DuckDB open costs some 25 ms)."""
    if con is None:
        with store.connect() as own:
            suites = read_partition(own, "suites", partition)
    else:
        suites = read_partition(con, "suites", partition)
    return _readable(lambda: pipeline.stored_suite(suites))


class ModelCallConfig(dg.Config):
    """Run-time switches for the model phase (set in the launchpad or run config)."""

    use_cache: bool = True  # False: call every target again (a fresh sample)
    concurrency: int | None = None  # override every target's concurrency


_COMMON = dict(partitions_def=eval_partitions, group_name=GROUP, owners=["team:evals"])


@dg.asset(**_COMMON, pool="duckdb", kinds={"python", "duckdb"},
          description="The skill version's eval suite, parsed from any supported format and validated.")
def eval_suite(context: dg.AssetExecutionContext, project: EvalProject, store: EvalStore) -> dg.MaterializeResult:
    partition = partition_of(context)
    loaded = _readable(lambda: pipeline.load_partition_skill(project.paths(store.db_path), partition))
    for warning in loaded.warnings:
        context.log.warning(warning)
    meta = _write(store, "suites", partition, pipeline.suite_rows(loaded, partition, context.run.run_id))
    meta |= {
        "suite": dg.MetadataValue.text(loaded.suite.name),
        "format": dg.MetadataValue.text(loaded.suite.format),
        "tests": dg.MetadataValue.int(len(loaded.suite.tests)),
        "targets": dg.MetadataValue.text(", ".join(loaded.suite.execution.targets)),
        "source": dg.MetadataValue.path(str(loaded.package.source)),
    }
    return dg.MaterializeResult(metadata=meta)


@dg.asset(**_COMMON, deps=[eval_suite], pool="duckdb", kinds={"duckdb"},
          description="External dataset files (JSONL/CSV/YAML) the suite read, with content hashes.")
def eval_datasets(context: dg.AssetExecutionContext, store: EvalStore) -> dg.MaterializeResult:
    partition = partition_of(context)
    stored = _stored(store, partition)
    rows = pipeline.dataset_rows(stored.suite, partition, context.run.run_id)
    meta = _write(store, "datasets", partition, rows)
    if not rows.empty:
        meta["files"] = dg.MetadataValue.md("\n".join(
            f"- `{Path(r['path']).name}`: {r['test_cases']} cases, sha256 {r['sha256'][:12]}"
            for r in rows.to_dict("records")))
    return dg.MaterializeResult(metadata=meta)


@dg.asset(**_COMMON, deps=[eval_suite, eval_datasets], pool="duckdb", kinds={"duckdb"},
          description="Every test case of the suite (inline and external dataset rows), one row each.")
def test_cases(context: dg.AssetExecutionContext, store: EvalStore) -> dg.MaterializeResult:
    partition = partition_of(context)
    stored = _stored(store, partition)
    rows = pipeline.test_case_rows(stored.suite, partition, context.run.run_id)
    return dg.MaterializeResult(metadata=_write(store, "test_cases", partition, rows))


@dg.asset(**_COMMON, deps=[test_cases], kinds={"openai", "duckdb"},
          description="One output (or error row) per case x target x trial, from the suite's targets.")
def model_outputs(context: dg.AssetExecutionContext, config: ModelCallConfig, project: EvalProject,
                  store: EvalStore, models: ModelAccess) -> dg.MaterializeResult:
    partition = partition_of(context)
    stored = _stored(store, partition)
    env_names = sorted({n for t in stored.targets.values() if isinstance(t, OpenAITargetConfig)
                        for n in (t.api_key_env, t.base_url_env)})
    # The model phase holds no DuckDB connection (the cache writes in short
    # batches that never wait on the lock): other runs can write meanwhile.
    outputs = pipeline.collect_model_outputs(
        stored, models.environment(env_names), config.concurrency, db_path=store.db_path,
        use_cache=config.use_cache,
        workspace=pipeline.workspace_dir(project.paths(store.db_path), partition))
    rows = pipeline.model_output_rows(stored.suite, outputs, partition, context.run.run_id)
    errors = sum(o.error is not None for o in outputs)
    if errors:
        context.log.warning(f"{errors} of {len(outputs)} model calls ended as error rows")
    meta = _write(store, "model_outputs", partition, rows)
    meta["errors"] = dg.MetadataValue.int(errors)
    meta["cached"] = dg.MetadataValue.int(sum(o.cached for o in outputs))
    return dg.MaterializeResult(metadata=meta)


@dg.asset(**_COMMON, deps=[model_outputs], kinds={"python", "duckdb"},
          description="One grade per output x assertion, with score, status and readable details.")
def grades(context: dg.AssetExecutionContext, project: EvalProject, store: EvalStore,
           models: ModelAccess) -> dg.MaterializeResult:
    partition = partition_of(context)
    with store.connect() as con:
        stored = _stored(store, partition, con)
        outputs = read_partition(con, "model_outputs", partition)
        baseline, grading = grading_context(con, partition, stored.suite.baseline)
    workspace = pipeline.workspace_dir(project.paths(store.db_path), partition)
    if workspace.is_dir():
        grading = replace(grading, workspace=workspace)
    if baseline:
        context.log.info(f"regression comparisons use the outputs of {baseline}")
    # Judge calls and sandboxed scripts run with no DuckDB connection open.
    env = models.environment(pipeline.judge_env_names(stored))
    rows = pipeline.grade_rows(stored, outputs, partition, context.run.run_id, env, grading)
    return dg.MaterializeResult(metadata=_write(store, "grades", partition, rows))


@dg.asset(**_COMMON, deps=[grades], pool="duckdb", kinds={"duckdb"},
          description="Per output: gated weighted score, verdict (pass/borderline/fail) and status.")
def test_results(context: dg.AssetExecutionContext, store: EvalStore) -> dg.MaterializeResult:
    partition = partition_of(context)
    with store.connect() as con:
        stored = _stored(store, partition, con)
        grade_frame = read_partition(con, "grades", partition)
        outputs = pipeline.outputs_from_rows(read_partition(con, "model_outputs", partition))
    rows = pipeline.test_result_rows(stored.suite, outputs, grade_frame,
                                     partition, context.run.run_id)
    meta = _write(store, "test_results", partition, rows)
    if not rows.empty:
        meta["verdicts"] = dg.MetadataValue.json(
            rows["verdict"].fillna(rows["status"]).value_counts().to_dict())
    return dg.MaterializeResult(metadata=meta)


@dg.asset(**_COMMON, deps=[test_results], pool="duckdb", kinds={"duckdb"},
          description="Suite metrics per target (pass rate, mean score, pass@k, pass^k, latency, cost) "
                      "and per-case metrics over trials (table case_metrics).")
def metrics(context: dg.AssetExecutionContext, store: EvalStore) -> dg.MaterializeResult:
    partition = partition_of(context)
    with store.connect() as con:
        stored = _stored(store, partition, con)
        results = read_partition(con, "test_results", partition)
        outputs = pipeline.outputs_from_rows(read_partition(con, "model_outputs", partition))
    rows, per_case = pipeline.metric_tables(stored.suite, results, outputs, partition, context.run.run_id)
    meta = _write(store, "metrics", partition, rows)
    meta["case_metric_rows"] = dg.MetadataValue.int(len(per_case))
    _write(store, "case_metrics", partition, per_case)
    overall = {r["metric"]: r["value"] for r in rows.to_dict("records") if r["target"] == "*"}
    meta["summary"] = dg.MetadataValue.md(summary_markdown(overall, results))
    # Numeric metadata: Dagster plots these across partitions (versions and nights).
    for name in ("pass_rate", "mean_score", "pass_at_1", "case_pass_rate", "cost_usd", "latency_p50_ms",
                 "latency_p95_ms", "errors"):
        if name in overall:
            meta[name] = dg.MetadataValue.float(float(overall[name]))
    return dg.MaterializeResult(metadata=meta)


def summary_markdown(overall: dict[str, float], results: pd.DataFrame) -> str:
    """The metrics table plus the failing cases, as shown in the asset's UI page."""
    keys = ["pass_rate", "mean_score", "case_pass_rate", "cost_usd", "latency_p50_ms", "latency_p95_ms"]
    keys += sorted(k for k in overall if k.startswith(("pass_at_", "pass_hat_")))
    keys += ["trials", "passed", "borderline", "failed", "errors", "not_evaluated", "pending_human"]
    lines = ["| metric | value |", "|---|---|"]
    lines += [f"| {k} | {overall[k]:.4g} |" for k in keys if k in overall]
    failing = results[(results["verdict"] != "pass") & results["status"].isin(["graded", "error"])] \
        if not results.empty else results
    if len(failing):
        lines += ["", f"**Failures ({len(failing)})**", ""]
        lines += [f"- `{r['test_id']}` [{r['target']}] {r['status']}: {r['reason']}"
                  for r in failing.head(20).to_dict("records")]
    return "\n".join(lines)


@dg.asset(**_COMMON, deps=[metrics], pool="duckdb", kinds={"duckdb"},
          description="Per-case flips and metric changes against the previous version and the previous "
                      "night, with p-values and intervals (table regressions).")
def regression_report(context: dg.AssetExecutionContext, store: EvalStore) -> dg.MaterializeResult:
    partition = partition_of(context)
    with store.connect() as con:
        stored = _stored(store, partition, con)
        current = read_partition(con, "test_results", partition)
        baselines = [(b, read_partition(con, "test_results", b.partition))
                     for b in pipeline.find_baselines(con, partition, stored.suite.baseline)]
    rows, summary = pipeline.regression_rows(stored.suite, current, baselines, partition, context.run.run_id)
    meta = _write(store, "regressions", partition, rows)
    meta["comparisons"] = dg.MetadataValue.md(regression_markdown(summary) or "no baseline yet")
    meta["regressed"] = dg.MetadataValue.bool(any(v["regressed"] for v in summary.values()))
    return dg.MaterializeResult(metadata=meta)


def regression_markdown(summary: dict) -> str:
    lines = []
    for comparison, info in summary.items():
        lines += [f"### {comparison.replace('_', ' ')}: against {info['baseline']}", "",
                  "| target | cases | pass rate before | after | change | 95% interval | p (Holm) | verdict |",
                  "|---|---|---|---|---|---|---|---|"]
        for t in info["targets"]:
            lines.append(
                f"| {t['target']} | {t['cases_compared']} | {t['baseline_pass_rate']:.1%} | "
                f"{t['current_pass_rate']:.1%} | {t['pass_rate_delta']:+.1%} | "
                f"[{t['ci_low']:+.1%}, {t['ci_high']:+.1%}] | {t['adjusted_p']:.3g} | "
                f"{'REGRESSED' if t['regressed'] else 'ok'} |")
        for change, cases in info["flips"].items():
            if cases:
                lines.append(f"- {change}: {', '.join(cases[:20])}" + (" ..." if len(cases) > 20 else ""))
        lines.append("")
    return "\n".join(lines)


@dg.asset(**_COMMON, deps=[regression_report], pool="duckdb", kinds={"json", "markdown", "html"},
          description="The run's reports (JSON eval_report, Markdown phase report, self-contained HTML), "
                      "compared with the baseline version; files under reports/<date>/.")
def eval_report(context: dg.AssetExecutionContext, project: EvalProject, store: EvalStore) -> dg.MaterializeResult:
    from eval_pipelines.reports.cli_report import report_metadata

    partition = partition_of(context)
    out_dir = Path(project.root).resolve() / "reports" / partition.eval_date
    return dg.MaterializeResult(metadata=report_metadata(store.db_path, partition.skill_version,
                                                         partition.eval_date, out_dir))


ASSETS = [eval_suite, eval_datasets, test_cases, model_outputs, grades, test_results, metrics, regression_report,
          eval_report]

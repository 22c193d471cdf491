"""The pipeline's stages as Dagster assets, its checks as asset checks.

One asset per entry of ``stages.STAGES`` (each a partition of its DuckDB
table), one asset check per entry of ``checks.CHECKS``. They are computed by a
single step, a ``multi_asset`` with ``can_subset=True``: lineage, per-asset
metadata, the partition grid and re-running one asset stay as they were with
one step per asset, while a run pays Dagster's per-step bookkeeping once
instead of thirteen times. A re-run of one asset reads its inputs back from
DuckDB; a run of several hands them over in memory.

Assets write their own rows (delete-then-insert in one transaction) instead of
going through an IO manager: the DuckDB IO manager fails on a multi-partition
with a dynamic dimension (dagster#32631) and is not atomic.
"""

import warnings
from functools import lru_cache
from pathlib import Path
from typing import Iterator

from typing import TYPE_CHECKING

import dagster as dg

from eval_pipelines.defs.metadata import as_metadata, code_reference, table_metadata, table_name
from eval_pipelines.defs.partitions import eval_partitions, partition_of
from eval_pipelines.defs.resources import EvalProject, EvalStore, ModelAccess
from eval_pipelines.defs.trends import TrendRows, trend_point_of, trend_rows
from eval_pipelines.pipeline.catalog import CHECK_SPECS, STAGE_MODULE, STAGE_SPECS

if TYPE_CHECKING:
    from eval_pipelines.pipeline.checks import CheckResult

GROUP = "evaluation"
STEP = "evaluate_partition"

# Partitioned asset checks are a Dagster preview feature; the checks must see
# their partition, so we use it and keep the warning out of every run's log.
warnings.filterwarnings("ignore", category=dg.PreviewWarning, message=".*partitions_def on an AssetCheckSpec.*")
# Code references (each asset's page links to its stage's source) are a beta feature.
warnings.filterwarnings("ignore", category=dg.BetaWarning,
                        message=".*(with_source_code_references|LocalFileCodeReference|CodeReferencesMetadataValue).*")

ASSET_SPECS = [
    dg.AssetSpec(stage.name, deps=[previous.name] if previous else [], description=stage.description,
                 group_name=GROUP, kinds=set(stage.kinds), owners=["team:evals"],
                 metadata={"tables": ", ".join(stage.tables) or "files",
                           "dagster/code_references": dg.CodeReferencesMetadataValue(
                               code_references=[code_reference(STAGE_MODULE, stage.function)]),
                           **({"dagster/table_name": table_name(stage.tables[0])} if stage.tables else {})})
    for previous, stage in zip((None, *STAGE_SPECS[:-1]), STAGE_SPECS)
]
CHECK_SPECS = [
    dg.AssetCheckSpec(check.name, asset=check.stage, description=check.description, blocking=check.blocking,
                      partitions_def=eval_partitions)
    for check in CHECK_SPECS
]


# What the step yields: its assets' materialisations (or observations, see below), check
# results, and each skill's trend point (defs/trends.py).
StepEvent = dg.MaterializeResult | dg.AssetCheckResult | dg.AssetObservation | dg.AssetMaterialization


class ModelCallConfig(dg.Config):
    """Run-time switches for the model phase (set in the launchpad or run config)."""

    use_cache: bool = True  # False: call every target again (a fresh sample)
    concurrency: int | None = None  # override every target's concurrency
    compare_blind: str | None = None  # a baseline version: the blind comparison (pipeline/blind.py)


@lru_cache(maxsize=None)
def _store_columns(db_path: str) -> dict[str, tuple[tuple[str, str], ...]]:
    """Every table's (column, type), read once per process in one query: a connection per
    table (each open ~25 ms, with the schema check) cost a few hundred ms per run."""
    from eval_pipelines.store.connection import connect

    columns: dict[str, list[tuple[str, str]]] = {}
    with connect(db_path) as con:
        for table, name, kind in con.execute(
                "SELECT table_name, column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = 'main' ORDER BY table_name, ordinal_position").fetchall():
            columns.setdefault(table, []).append((name, kind))
    return {table: tuple(found) for table, found in columns.items()}


def _columns(db_path: str, table: str) -> tuple[tuple[str, str], ...]:
    return _store_columns(db_path).get(table, ())


@dg.multi_asset(name=STEP, specs=ASSET_SPECS, check_specs=CHECK_SPECS, can_subset=True,
                partitions_def=eval_partitions)
def evaluate_partition(context: dg.AssetExecutionContext, config: ModelCallConfig, project: EvalProject,
                       store: EvalStore, models: ModelAccess) -> Iterator[StepEvent]:
    """Run the selected stages of ``stages.STAGES`` in order, each followed by its checks."""
    # The evaluation core is imported here, when a run computes, not when the code location loads.
    from eval_pipelines.pipeline.collector import collection_paused

    with collection_paused():
        from eval_pipelines.pipeline.checks import checks_for
        from eval_pipelines.pipeline.stages import MissingUpstream, RunOptions, StageContext, run_stages
        from eval_pipelines.suite.errors import SpecErrors

    partition = partition_of(context)
    ctx = StageContext(
        partition=partition, run_id=context.run.run_id, paths=project.paths(store.db_path),
        report_root=Path(project.root).resolve() / "reports", env=models.environment,
        options=RunOptions(use_cache=config.use_cache, concurrency=config.concurrency,
                           compare_blind=config.compare_blind), log=context.log)
    selected = {key.to_user_string() for key in context.selected_asset_keys}
    selected_checks = {key.name for key in context.selected_asset_check_keys}
    failed_checks: list[str] = []
    failures: list[str] = []
    skipped: list[tuple[str, str, CheckResult]] = []
    trend: TrendRows | None = None  # the skill's trend point, but for the verdict known at the end
    try:
        for stage, result in run_stages(ctx, selected):
            if stage.name == "metrics":  # read through the run's connection, open since the stage wrote
                trend = trend_rows(ctx.connection(), partition)
            meta = as_metadata(result.metadata)
            for table, rows in result.rows.items():
                if table == stage.tables[0]:
                    meta |= table_metadata(list(_columns(store.db_path, table)), table, rows)
            meta["partition"] = dg.MetadataValue.text(f"{partition.eval_date} / {partition.skill_version}")
            outcomes = []
            for check in checks_for(stage.name):
                if check.name not in selected_checks:
                    continue
                outcome = check.evaluate(ctx)
                if outcome.skipped:
                    # Not yielded: Dagster then shows the check as skipped (grey), not passed (green).
                    skipped.append((stage.name, check.name, outcome))
                    continue
                outcomes.append((check, outcome))
            failed_here = [f"{check.name}: {outcome.description}" for check, outcome in outcomes if not outcome.passed]
            if failed_here:
                # Its rows are stored, but the asset is not reported materialised: in the run that
                # fails below, Dagster then shows this partition of this asset as failed (red) in
                # the partition grid and the "Failed" filter, while the other assets stay green.
                # The metadata goes on an observation so the numbers are still on the asset's page.
                meta["evaluation"] = dg.MetadataValue.text("failed: " + "; ".join(failed_here))
                yield dg.AssetObservation(asset_key=stage.name, partition=str(context.partition_key), metadata=meta)
            else:
                yield dg.MaterializeResult(asset_key=stage.name, metadata=meta)
            stop = False
            for check, outcome in outcomes:
                # The run's event log shows a check's metadata but not its description: the
                # result line goes first in the metadata so the numbers are visible there too.
                yield dg.AssetCheckResult(asset_key=stage.name, check_name=check.name, passed=outcome.passed,
                                          severity=dg.AssetCheckSeverity.ERROR, description=outcome.description,
                                          metadata=as_metadata({"result": outcome.description, **outcome.metadata}))
                if not outcome.passed:
                    failed_checks.append(check.name)
                    failures.append(f"{check.name}: {outcome.description}")
                    stop = stop or check.blocking
            if stop:  # a blocking check failed: the stages after it do not run, the run fails
                break
    except SpecErrors as exc:
        raise dg.Failure(
            description=f"{ctx.current_stage}: invalid skill package or suite:\n{exc}",
            metadata={"stage": ctx.current_stage,
                      "problems": dg.MetadataValue.md("\n".join(f"- `{e}`" for e in exc.errors))},
            allow_retries=False,
        ) from None
    except MissingUpstream as exc:
        raise dg.Failure(description=f"{ctx.current_stage}: {exc}", metadata={"stage": ctx.current_stage},
                         allow_retries=False) from None
    if skipped:  # one log line, not one per check: each is a write to the run's event log
        context.log.info("checks with nothing to check: " + "; ".join(
            f"{name} {outcome.description}" for _, name, outcome in skipped))
    verdict = _tag_verdict(context, failed_checks, [name for _, name, _ in skipped])
    if trend is not None:
        point = trend_point_of(trend, partition, verdict or _verdict(failed_checks))
        if point is not None:  # skill_trends/<skill>: this evaluation as a data point of the skill's history
            yield point
    if failures:
        # In a failed run Dagster shows a check it never received as "execution failed";
        # these had nothing to check, so they say so, as warnings (yellow), not errors.
        for asset, name, outcome in skipped:
            yield dg.AssetCheckResult(asset_key=asset, check_name=name, passed=False,
                                      severity=dg.AssetCheckSeverity.WARN, description=outcome.description,
                                      metadata=as_metadata({"result": outcome.description, **outcome.metadata,
                                                            "skipped": True}))
        # The stages that ran stored their rows; the evaluation itself failed a check.
        # The run fails so the Runs list shows it red, as CI shows a failing test suite red.
        raise dg.Failure(description="evaluation failed: " + "; ".join(failures),
                         metadata={"verdict": _verdict(failed_checks), "failed_checks": ", ".join(failed_checks)},
                         allow_retries=False)


def _verdict(failed_checks: list[str], skipped_checks: list[str] = ()) -> str:
    """gate_failed, regressed, broken_cases (only the hidden-breakage check failed), no_thresholds (nothing failed, but no threshold was declared
    either: a 0% pass rate is not a pass), or passed."""
    regression_checks = {"no_significant_regression", "no_hidden_breakage"}
    if failed_checks and not set(failed_checks) - regression_checks:
        return "regressed" if "no_significant_regression" in failed_checks else "broken_cases"
    if failed_checks:
        return "gate_failed"
    return "no_thresholds" if "suite_thresholds_met" in skipped_checks else "passed"


def _tag_verdict(context: dg.AssetExecutionContext, failed_checks: list[str], skipped_checks: list[str]) -> str | None:
    """``eval/verdict`` on the run, so the Runs list can be filtered by the evaluation's outcome."""
    if not context.selected_asset_check_keys:
        return None
    verdict = _verdict(failed_checks, skipped_checks)
    context.instance.add_run_tags(context.run.run_id, {"eval/verdict": verdict,
                                                       "eval/failed_checks": ",".join(failed_checks) or "none"})
    return verdict


ASSETS = [evaluate_partition]

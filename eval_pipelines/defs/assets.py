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
from typing import Iterator

import dagster as dg

from eval_pipelines.defs.metadata import code_reference, table_name
from eval_pipelines.defs.partition_run import (PartitionOutcome, StepEvent, evaluate_one, skipped_as_warnings,
                                               verdict_of)
from eval_pipelines.defs.partitions import eval_partitions
from eval_pipelines.defs.range_run import evaluate_range
from eval_pipelines.defs.resources import EvalProject, EvalStore, ModelAccess, ModelCallConfig
from eval_pipelines.pipeline.catalog import CHECK_SPECS, STAGE_MODULE, STAGE_SPECS

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


@dg.multi_asset(name=STEP, specs=ASSET_SPECS, check_specs=CHECK_SPECS, can_subset=True,
                partitions_def=eval_partitions)
def evaluate_partition(context: dg.AssetExecutionContext, config: ModelCallConfig, project: EvalProject,
                       store: EvalStore, models: ModelAccess) -> Iterator[StepEvent]:
    """Run the selected stages of ``stages.STAGES`` in order, each followed by its checks: for the
    run's partition, or for each skill version of a run over several (``defs/range_run.py``)."""
    if not context.has_partition_key:
        evaluate_range(context, config, project, store, models)
        return
    outcome = yield from evaluate_one(context, str(context.partition_key), config, project, store, models)
    if outcome.skipped:  # one log line, not one per check: each is a write to the run's event log
        context.log.info("checks with nothing to check: " + "; ".join(
            f"{name} {result.description}" for _, name, result in outcome.skipped))
    _tag_verdict(context, outcome)
    if outcome.failures:
        yield from skipped_as_warnings(outcome)
        # The stages that ran stored their rows; the evaluation itself failed a check.
        # The run fails so the Runs list shows it red, as CI shows a failing test suite red.
        raise dg.Failure(description="evaluation failed: " + "; ".join(outcome.failures),
                         metadata={"verdict": verdict_of(outcome.failed_checks),
                                   "failed_checks": ", ".join(outcome.failed_checks)},
                         allow_retries=False)


def _tag_verdict(context: dg.AssetExecutionContext, outcome: PartitionOutcome) -> None:
    """``eval/verdict`` on the run, so the Runs list can be filtered by the evaluation's outcome."""
    if outcome.verdict is None:
        return
    context.instance.add_run_tags(context.run.run_id, {"eval/verdict": outcome.verdict,
                                                       "eval/failed_checks": ",".join(outcome.failed_checks) or "none"})


ASSETS = [evaluate_partition]

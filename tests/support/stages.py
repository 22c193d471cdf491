"""Run the pipeline's stages on a suite built in a test, against a scratch DuckDB file."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from eval_pipelines.pipeline.project import ProjectPaths
from eval_pipelines.run.cache import ResponseCache
from eval_pipelines.run.engine import run_model_phase
from eval_pipelines.run.targets.base import ModelOutput
from eval_pipelines.pipeline.stages import RunOptions, StageContext, run_stages
from eval_pipelines.store.partition import Partition
from eval_pipelines.store.tables import StoredSuite

PARTITION = Partition("2026-11-22", "demo@1.0.0")


def model_outputs(stored: StoredSuite, db: Path | None = None, *, use_cache: bool = True,
                  concurrency: int | None = None, workspace: Path | None = None) -> list[ModelOutput]:
    """The model phase alone (what the ``model_outputs`` stage calls), cached in ``db`` when given."""
    cache = ResponseCache(str(db)) if db is not None and use_cache else None
    return asyncio.run(run_model_phase(stored.suite, stored.targets, stored.package_root, os.environ,
                                       concurrency=concurrency, cache=cache, workspace_dir=workspace))


def run_suite(stored: StoredSuite, tmp_path: Path, stages: set[str], partition: Partition = PARTITION,
              **options: object) -> StageContext:
    """Run ``stages`` (names from ``stages.STAGE_NAMES``) for ``stored``; returns the context,
    whose ``memo`` holds each table's rows as written."""
    paths = ProjectPaths.from_root(tmp_path, str(tmp_path / "stages.duckdb"))
    ctx = StageContext(partition=partition, run_id="test", paths=paths, report_root=tmp_path / "reports",
                       env=lambda names: {n: os.environ.get(n) for n in names},
                       options=RunOptions(**options))  # type: ignore[arg-type]
    ctx.memo["suite"] = stored
    for _ in run_stages(ctx, stages):
        pass
    return ctx

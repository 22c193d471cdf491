"""The Dagster code location: ``dagster dev -w workspace.yaml`` loads ``defs``."""

from __future__ import annotations

import os
from pathlib import Path

from eval_pipelines.pipeline.collector import collection_paused

# Importing Dagster ran two full garbage collections, ~0.3 s of a 1.0 s import, in every
# process that loads the code location (each run's worker too): pipeline/collector.py.
with collection_paused():
    import dagster as dg

    from eval_pipelines.defs.assets import ASSETS
    from eval_pipelines.defs.jobs import evaluate_skill_version
    from eval_pipelines.defs.resources import EvalProject, EvalStore, ModelAccess, default_root
    from eval_pipelines.defs.schedules import nightly_regression
    from eval_pipelines.defs.sensors import new_skill_versions
    from eval_pipelines.defs.trends import trend_specs


def default_db_path(root: str) -> str:
    return os.environ.get("EVAL_PIPELINES_DB", str(Path(root).resolve() / ".data" / "eval_pipelines.duckdb"))


def build_definitions(root: str | None = None, db_path: str | None = None) -> dg.Definitions:
    root = root or default_root()
    project = EvalProject(root=root, skills_dir=os.environ.get("EVAL_PIPELINES_SKILLS_DIR"))
    db_path = db_path or default_db_path(root)
    return dg.Definitions(
        # Code references: each asset's page links to the file and line that computes it.
        # (link_code_references_to_git is not used: the project names no public git remote.)
        assets=[*dg.with_source_code_references(ASSETS), *trend_specs(project.paths(db_path))],
        jobs=[evaluate_skill_version],
        sensors=[new_skill_versions],
        schedules=[nightly_regression],
        # Steps of one partition form a chain, so separate step processes buy no
        # parallelism and cost a Python start and imports each (about 2 s on 2
        # cores): ad-hoc materializations run in the run's own process, like the
        # job. Partitions still run in parallel as separate runs.
        executor=dg.in_process_executor,
        resources={
            "project": project,
            "store": EvalStore(db_path=db_path),
            "models": ModelAccess(),
        },
    )


defs = build_definitions()

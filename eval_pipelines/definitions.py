"""The Dagster code location: ``dagster dev -w workspace.yaml`` loads ``defs``."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from eval_pipelines.defs.assets import ASSETS
from eval_pipelines.defs.checks import CHECKS
from eval_pipelines.defs.jobs import evaluate_skill_version
from eval_pipelines.defs.resources import EvalProject, EvalStore, ModelAccess, default_root
from eval_pipelines.defs.schedules import nightly_regression
from eval_pipelines.defs.sensors import new_skill_versions


def default_db_path(root: str) -> str:
    return os.environ.get("EVAL_PIPELINES_DB", str(Path(root).resolve() / ".data" / "eval_pipelines.duckdb"))


def build_definitions(root: str | None = None, db_path: str | None = None) -> dg.Definitions:
    root = root or default_root()
    return dg.Definitions(
        assets=ASSETS,
        asset_checks=CHECKS,
        jobs=[evaluate_skill_version],
        sensors=[new_skill_versions],
        schedules=[nightly_regression],
        resources={
            "project": EvalProject(root=root, skills_dir=os.environ.get("EVAL_PIPELINES_SKILLS_DIR")),
            "store": EvalStore(db_path=db_path or default_db_path(root)),
            "models": ModelAccess(),
        },
    )


defs = build_definitions()

"""Resources: where the project lives, the DuckDB store, and model credentials."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Mapping

import dagster as dg

from eval_pipelines.pipeline.project import ProjectPaths

if TYPE_CHECKING:
    import duckdb


def default_root() -> str:
    return os.environ.get("EVAL_PIPELINES_HOME", os.getcwd())


class EvalProject(dg.ConfigurableResource):
    """The project folder: ``skills/``, ``datasets/``, ``targets.yaml`` and ``.data/``."""

    root: str = "."
    skills_dir: str | None = None
    datasets_dir: str | None = None

    def paths(self, db_path: str) -> ProjectPaths:
        root = Path(self.root).resolve()
        paths = ProjectPaths.from_root(root, db_path)
        if self.skills_dir:
            paths = ProjectPaths(Path(self.skills_dir).resolve(), paths.datasets_dir, db_path,
                                 paths.work_dir, paths.targets_file)
        if self.datasets_dir:
            paths = ProjectPaths(paths.skills_dir, Path(self.datasets_dir).resolve(), db_path,
                                 paths.work_dir, paths.targets_file)
        return paths


class EvalStore(dg.ConfigurableResource):
    """The results database: a DuckDB file path (or a MotherDuck ``md:`` URL)."""

    db_path: str

    @contextmanager
    def connect(self, read_only: bool = False) -> Iterator["duckdb.DuckDBPyConnection"]:
        from eval_pipelines.store.connection import connect  # duckdb and pandas: when a run reads

        with connect(self.db_path, read_only=read_only) as con:
            yield con


class ModelAccess(dg.ConfigurableResource):
    """Model credentials, read from the environment through Dagster's ``EnvVar``.

    Targets name the variables they need (``api_key_env``, ``base_url_env``);
    only those are read, at run time, and they never leave this mapping.
    """

    def environment(self, names: list[str]) -> Mapping[str, str | None]:
        return {name: dg.EnvVar(name).get_value() for name in names}


class ModelCallConfig(dg.Config):
    """Run-time switches for the model phase (set in the launchpad or run config)."""

    use_cache: bool = True  # False: call every target again (a fresh sample)
    concurrency: int | None = None  # override every target's concurrency
    compare_blind: str | None = None  # a baseline version: the blind comparison (pipeline/blind.py)

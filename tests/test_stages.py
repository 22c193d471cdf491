"""The stage list: a run hands typed values from stage to stage in memory; a stage run
alone reads them back from DuckDB. Both paths must store the same rows."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pandas as pd

from eval_pipelines.pipeline.checks import CHECKS
from eval_pipelines.pipeline.project import ProjectPaths
from eval_pipelines.pipeline.stages import STAGE_NAMES, StageContext, run_stages
from eval_pipelines.store.connection import connect, read_partition
from eval_pipelines.store.partition import Partition

PROJECT = Path(__file__).resolve().parents[1]
KEY = "tiny-model-replay@0.1.0"
VOLATILE = ["run_id", "loaded_at", "created_at"]


def project(tmp_path: Path) -> ProjectPaths:
    shutil.copytree(PROJECT / "skills" / "tiny-model-replay", tmp_path / "skills" / "tiny-model-replay")
    shutil.copytree(PROJECT / "datasets", tmp_path / "datasets")
    return ProjectPaths.from_root(tmp_path, str(tmp_path / "results.duckdb"))


def context(paths: ProjectPaths, day: str, run_id: str) -> StageContext:
    return StageContext(partition=Partition(day, KEY), run_id=run_id, paths=paths,
                        report_root=paths.skills_dir.parent / "reports",
                        env=lambda names: {n: os.environ.get(n) for n in names})


def stored(paths: ProjectPaths, day: str, table: str) -> pd.DataFrame:
    with connect(paths.db_path) as con:
        frame = read_partition(con, table, Partition(day, KEY))
    keys = [c for c in ("test_id", "target", "trial", "assertion_index", "metric", "level", "comparison")
            if c in frame.columns]
    frame = frame.drop(columns=[c for c in VOLATILE + ["eval_date"] if c in frame.columns])
    return frame.sort_values(keys, ignore_index=True) if keys else frame


def test_stages_hand_over_in_memory_or_through_duckdb_with_the_same_rows(tmp_path: Path) -> None:
    paths = project(tmp_path)
    ran = [stage.name for stage, _ in run_stages(context(paths, "2026-11-01", "together"))]
    assert ran == list(STAGE_NAMES)
    for name in STAGE_NAMES:  # the same partition on another day, one fresh context per stage
        assert [s.name for s, _ in run_stages(context(paths, "2026-11-02", f"alone-{name}"), {name})] == [name]
    for table in ("suites", "datasets", "test_cases", "model_outputs", "grades", "test_results", "metrics",
                  "case_metrics"):
        together, alone = stored(paths, "2026-11-01", table), stored(paths, "2026-11-02", table)
        if table == "suites":
            together, alone = together.drop(columns=["spec"]), alone.drop(columns=["spec"])
        pd.testing.assert_frame_equal(together, alone, check_dtype=False, obj=table)
    # The second day found the first as its previous night.
    assert set(stored(paths, "2026-11-02", "regressions")["comparison"]) == {"previous_night"}
    assert (tmp_path / "reports" / "2026-11-02" / "tiny-model-replay-0.1.0.html").is_file()


def test_every_check_follows_a_stage_of_the_list() -> None:
    assert {c.stage for c in CHECKS} <= set(STAGE_NAMES)
    assert [c.name for c in CHECKS if c.blocking] == ["blocking_gates"]

"""The one job every trigger launches: evaluate one skill version on one date."""

from __future__ import annotations

import dagster as dg

from eval_pipelines.defs.assets import GROUP

# In-process: a run's six steps share one process (about 3 s instead of 9 s of
# per-step start-up, design notes) and run one after another, so a run never
# collides with itself on the DuckDB file.
evaluate_skill_version = dg.define_asset_job(
    name="evaluate_skill_version",
    selection=dg.AssetSelection.groups(GROUP),
    executor_def=dg.in_process_executor,
    description="Load, run, grade and score one skill version for one evaluation date.",
)

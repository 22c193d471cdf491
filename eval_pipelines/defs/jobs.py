"""The one job every trigger launches: evaluate one skill version on one date."""

from __future__ import annotations

import dagster as dg

from eval_pipelines.defs.assets import GROUP

# In-process: the run's one step (every stage, see defs/assets.py) runs in the
# run's own process, with no second Python start and imports (design notes:
# about 3 s instead of 9 s for a small job).
evaluate_skill_version = dg.define_asset_job(
    name="evaluate_skill_version",
    selection=dg.AssetSelection.groups(GROUP),
    executor_def=dg.in_process_executor,
    description="Every stage of stages.STAGES for one skill version on one evaluation date: load, run, grade, "
                "score, aggregate, compare with the baselines and write the reports.",
)

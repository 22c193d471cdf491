"""Issue 32 through the Dagster job: an Agent Skills package runs with_skill and without_skill,
the skill's uplift lands in DuckDB (skill_uplift) and the skill_helps asset check carries its
numbers; a skill that hurts fails the check (and the run). Offline stand-ins (scripted agent and
judge, tests/support/uplift_skill.py), 6 cases x 1 run per partition."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from eval_pipelines.definitions import build_definitions
from eval_pipelines.defs.partitions import skill_versions
from tests.support.field_projects import sql
from tests.support.uplift_skill import make_uplift_skill

pytestmark = pytest.mark.slow
DAY = "2026-11-25"
QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


def test_skill_helps_check_in_the_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
        monkeypatch.delenv(name, raising=False)
    make_uplift_skill(tmp_path / "skills" / "uplift-demo" / "1.0.0", cases=6, trials=1)
    make_uplift_skill(tmp_path / "skills" / "uplift-demo" / "2.0.0", cases=6, trials=1, hurts=True,
                      version="2.0.0")
    db = tmp_path / "results.duckdb"
    job = build_definitions(str(tmp_path), str(db)).resolve_job_def("evaluate_skill_version")
    evaluations = {}
    with dg.instance_for_test() as instance:
        for version in ("1.0.0", "2.0.0"):
            key = f"uplift-demo@{version}"
            instance.add_dynamic_partitions(skill_versions.name, [key])
            result = job.execute_in_process(partition_key=dg.MultiPartitionKey({"date": DAY, "skill_version": key}),
                                            instance=instance, raise_on_error=False, run_config=QUIET)
            found = [e for e in result.get_asset_check_evaluations() if e.check_name == "skill_helps"]
            assert found, [e.step_failure_data.error.message[:600] for e in result.get_step_failure_events()]
            (evaluation,) = found
            evaluations[version] = (result.success, evaluation)

    helped_ok, helped = evaluations["1.0.0"]
    assert helped_ok and helped.passed
    meta = {k: v.value for k, v in helped.metadata.items()}
    assert meta["verdict"] == "helps" and meta["delta"] == pytest.approx(0.6)
    assert 0 < meta["ci_low"] <= meta["ci_high"] and meta["p_rise"] < 0.025 and meta["cases_compared"] == 6
    assert (meta["with_skill"], meta["without_skill"]) == (pytest.approx(0.8), pytest.approx(0.2))

    hurt_ok, hurt = evaluations["2.0.0"]
    assert not hurt_ok and not hurt.passed  # the skill hurts significantly: the check and the run fail
    assert hurt.metadata["verdict"].value == "hurts" and hurt.metadata["delta"].value == pytest.approx(-0.6)

    assert sql(db, "SELECT version, verdict, round(delta, 2) FROM skill_uplift WHERE target = '*' ORDER BY 1") == [
        ("1.0.0", "helps", 0.6), ("2.0.0", "hurts", -0.6)]

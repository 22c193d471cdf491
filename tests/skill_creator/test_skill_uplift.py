"""Issue 32's first "done when": a planted uplift (with the skill 80% of expectations met, without
it 20%, 20 cases × 3 runs) is stored as "helps" with an interval excluding 0, read back from DuckDB
through the skill_uplift view; the rows carry their configuration; the run summary per
configuration is in the metrics. One run (module fixture) shared by the assertions."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

pytestmark = pytest.mark.slow  # 120 agent runs (20 cases x 3 runs x 2 configurations) by the stand-ins

from eval_pipelines.cli import main
from tests.support.uplift_skill import CASES, TRIALS, make_uplift_skill


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("uplift")
    package = make_uplift_skill(root / "uplift-demo")
    db = root / "results.duckdb"
    main(["--root", str(root), "run", str(package), "--db", str(db), "--no-progress", "-q", "--format", "none"])
    return db


def _sql(db: Path, query: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def test_the_planted_uplift_is_stored_as_helps(db: Path) -> None:
    rows = _sql(db, "SELECT target, cases_compared, with_skill, without_skill, delta, ci_low, ci_high, p_rise, "
                    "p_value, verdict FROM skill_uplift ORDER BY target")
    assert [r[0] for r in rows] == ["*", "default"]
    _, cases, with_skill, without_skill, delta, low, high, p_rise, p_value, verdict = rows[0]
    assert cases == CASES and verdict == "helps"
    assert (with_skill, without_skill) == (pytest.approx(0.8), pytest.approx(0.2))
    assert delta == pytest.approx(0.6) and 0 < low <= delta <= high
    assert p_rise < 0.025 and p_value == p_rise


def test_every_row_carries_its_configuration(db: Path) -> None:
    for table in ("model_outputs", "test_results", "latest_results"):
        counts = dict(_sql(db, f"SELECT configuration, count(*) FROM {table} GROUP BY 1"))
        assert counts == {"with_skill": CASES * TRIALS, "without_skill": CASES * TRIALS}, table
    # expectations x cases x trials x configurations
    met = dict(_sql(db, "SELECT configuration, avg(passed::INT) FROM expectation_results GROUP BY 1"))
    assert met == {"with_skill": pytest.approx(0.8), "without_skill": pytest.approx(0.2)}
    assert _sql(db, "SELECT count(*) FROM expectation_results")[0][0] == 5 * CASES * TRIALS * 2
    # The baseline ran with nothing installed: the agent's read of SKILL.md failed.
    (listed,) = _sql(db, "SELECT count(*) FROM model_outputs WHERE configuration = 'without_skill' "
                         "AND transcript::VARCHAR LIKE '%Always mention MARK_B%'")[0]
    assert listed == 0


def test_run_summary_per_configuration(db: Path) -> None:
    values = {(c, m): v for c, m, v in _sql(
        db, "SELECT configuration, metric, value FROM metrics WHERE target = '*' AND metric LIKE 'run_%'")}
    assert values[("with_skill", "run_pass_rate_mean")] == pytest.approx(0.8)
    assert values[("without_skill", "run_pass_rate_mean")] == pytest.approx(0.2)
    assert values[("with_skill", "run_pass_rate_stddev")] == 0.0
    for c in ("with_skill", "without_skill"):
        assert {f"run_{s}_{k}" for s in ("pass_rate", "time_seconds", "tokens")
                for k in ("mean", "stddev", "min", "max")} <= {m for (cc, m) in values if cc == c}
    expectation = dict(_sql(db, "SELECT configuration, value FROM metrics WHERE target = '*' "
                                "AND metric = 'expectation_pass_rate'"))
    assert expectation == {"with_skill": pytest.approx(0.8), "without_skill": pytest.approx(0.2)}

"""The regression verdicts as stored (table regressions, a real DuckDB file), as the two asset
checks read them, and as the reports show them: q-values, significant / large enough, breakage."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from types import SimpleNamespace

import duckdb

from eval_pipelines.analysis.regression import RegressionPolicy, compare_all
from eval_pipelines.pipeline.checks import CHECKS, no_hidden_breakage, no_regression
from eval_pipelines.pipeline.project import ProjectPaths
from eval_pipelines.reports.comparison import significance, verdict_flags, verdict_notes
from eval_pipelines.reports.summary import regression_markdown, regression_summary
from eval_pipelines.pipeline.stages import StageContext
from eval_pipelines.store import tables
from eval_pipelines.store.connection import connect, replace_partition
from eval_pipelines.store.partition import Partition
from tests.analysis.test_regression import suite

CURRENT = Partition("2026-11-20", "triage@2.0.0")
VERSION = Partition("2026-11-19", "triage@1.0.0")
NIGHT = Partition("2026-11-19", "triage@2.0.0")


def cancel_out() -> tuple[list, list]:
    """20 of 200 cases break completely while the other 180 improve by one trial in five."""
    base = suite({f"t{i:03d}": (5, 5) if i < 20 else (2, 5) for i in range(200)})
    cur = suite({f"t{i:03d}": (0, 5) if i < 20 else (3, 5) for i in range(200)})
    return cur, base


def store(tmp_path: Path, current: list, baselines: list[tuple[str, Partition, list]],
          policy: RegressionPolicy = RegressionPolicy()) -> StageContext:
    results = compare_all(current, [b for _, _, b in baselines], policy)
    frame = tables.encode_regressions([(name, partition, result) for (name, partition, _), result
                                       in zip(baselines, results)], policy, CURRENT, "run-1", "triage")
    paths = ProjectPaths.from_root(tmp_path, str(tmp_path / "results.duckdb"))
    with connect(paths.db_path) as con:
        replace_partition(con, "regressions", CURRENT, frame)
    return StageContext(partition=CURRENT, run_id="run-1", paths=paths, report_root=tmp_path / "reports",
                        env=lambda names: {}, log=logging.getLogger("test"))


def test_both_checks_are_asset_checks_of_the_regression_stage() -> None:
    by_name = {c.name: c for c in CHECKS}
    assert by_name["no_significant_regression"].stage == by_name["no_hidden_breakage"].stage == "regression_report"
    assert "breakage" in by_name["no_hidden_breakage"].spec.description.lower()
    assert "sign test" in by_name["no_hidden_breakage"].spec.description


def test_cancel_out_breakage_is_stored_and_fails_its_own_check(tmp_path: Path) -> None:
    current, base = cancel_out()
    ctx = store(tmp_path, current, [("previous_version", VERSION, base)])
    with duckdb.connect(str(ctx.paths.db_path), read_only=True) as con:
        rows = {level: n for level, n in con.execute(
            "SELECT level, count(*) FROM regressions GROUP BY level").fetchall()}
        assert rows == {"case": 200, "target": 1, "breakage": 1}
        labelled = con.execute("SELECT test_id, q_value, adjusted_p FROM regressions WHERE change = 'regressed' "
                               "ORDER BY test_id").fetchall()
        assert [t for t, _, _ in labelled] == [f"t{i:03d}" for i in range(20)]
        assert all(q == adj and 0 < q <= 0.10 for _, q, adj in labelled)
        target = con.execute("SELECT change, significant, large_enough, verdict FROM regressions "
                             "WHERE level = 'target'").fetchone()
        assert target[0] == "improved" and target[1] is False and target[3].startswith("improved")
        breakage = con.execute("SELECT change, p_value, verdict, detail FROM regressions "
                               "WHERE level = 'breakage'").fetchone()
        assert breakage[0] == "broken" and breakage[1] < 1e-5 and "20 cases dropped significantly" in breakage[2]
        assert json.loads(breakage[3])["significant_drops"] == 20
    mean = no_regression(ctx)
    assert mean.passed and "improved" in mean.description
    hidden = no_hidden_breakage(ctx)
    assert not hidden.passed
    assert "broken beyond chance" in hidden.description and "t000 (q=0.04)" in hidden.description
    assert hidden.metadata["significant_drops"] == 20 and hidden.metadata["significant_rises"] == 0


def test_with_dbh_the_breakage_check_names_the_cases_the_labels_chose(tmp_path: Path) -> None:
    # 10 cases break 5/5 -> 0/5, 10 break 4/5 -> 0/5, 180 stay at 4/5: the discrete BH labels all 20 (BH only
    # the first 10); the breakage count still sees only the 10 complete flips (p <= 0.02), and the check's
    # description and metadata name exactly the stored labels with their stored q-values.
    base = suite({f"t{i:03d}": (5, 5) if i < 10 else (4, 5) for i in range(200)})
    cur = suite({f"t{i:03d}": (0, 5) if i < 20 else (4, 5) for i in range(200)})
    ctx = store(tmp_path, cur, [("previous_version", VERSION, base)], RegressionPolicy(case_labels="dbh"))
    with duckdb.connect(str(ctx.paths.db_path), read_only=True) as con:
        stored = dict(con.execute("SELECT test_id, q_value FROM regressions WHERE level = 'case' "
                                  "AND change = 'regressed'").fetchall())
        detail = json.loads(con.execute("SELECT detail FROM regressions WHERE level = 'target'").fetchone()[0])
    assert sorted(stored) == [f"t{i:03d}" for i in range(20)] and detail["case_labels"] == "dbh"
    hidden = no_hidden_breakage(ctx)
    assert not hidden.passed and hidden.metadata["significant_drops"] == 10
    (comparison,) = hidden.metadata["comparisons"]
    assert comparison["labelled"] == stored
    assert "labelled regressed: t000 (q=0.0044)" in hidden.description
    assert no_regression(ctx).metadata["comparisons"][0]["labelled"] == stored


def test_the_regression_check_reports_significant_and_large_enough(tmp_path: Path) -> None:
    base = suite({f"t{i:03d}": (5, 5) for i in range(100)})
    current = suite({f"t{i:03d}": (0 if i < 20 else 5, 5) for i in range(100)})
    ctx = store(tmp_path, current, [("previous_version", VERSION, base), ("previous_night", NIGHT, base)])
    result = no_regression(ctx)
    assert not result.passed
    assert result.metadata["significant"] is True and result.metadata["large_enough"] is True
    (version, night) = result.metadata["comparisons"]
    assert version["adjusted_p"] == night["adjusted_p"] == 2 * version["p_value"]  # Holm over both
    assert version["margin"] == 0.05 and version["effect_rule"] == "plausible"
    assert "regressed: -20.0 pts" in result.description and "t000 (q=" in result.description
    assert not no_hidden_breakage(ctx).passed  # 20 significant drops, no rise


def test_no_change_passes_both_checks_with_equivalence_wording(tmp_path: Path) -> None:
    same = suite({f"t{i:03d}": (i % 6, 5) for i in range(300)})
    ctx = store(tmp_path, same, [("previous_night", NIGHT, same)])
    result = no_regression(ctx)
    assert result.passed and "no regression: no drop of 5 pts or more" in result.description
    assert "labelled regressed: none" in result.description and "fell" not in result.description
    assert no_hidden_breakage(ctx).passed


def test_a_store_made_before_the_new_columns_gets_them(tmp_path: Path) -> None:
    db = tmp_path / "old.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("""CREATE TABLE regressions (eval_date VARCHAR NOT NULL, skill_version VARCHAR NOT NULL,
            skill VARCHAR NOT NULL, version VARCHAR NOT NULL, run_id VARCHAR, suite VARCHAR NOT NULL,
            comparison VARCHAR NOT NULL, baseline_skill_version VARCHAR NOT NULL,
            baseline_eval_date VARCHAR NOT NULL, level VARCHAR NOT NULL, target VARCHAR NOT NULL, test_id VARCHAR,
            change VARCHAR NOT NULL, baseline_pass_rate DOUBLE, current_pass_rate DOUBLE, pass_rate_delta DOUBLE,
            baseline_score DOUBLE, current_score DOUBLE, p_value DOUBLE, adjusted_p DOUBLE, ci_low DOUBLE,
            ci_high DOUBLE, detail JSON NOT NULL)""")
        con.execute("INSERT INTO regressions VALUES ('2026-01-01', 'a@1', 'a', '1', NULL, 's', 'previous_night', "
                    "'a@1', '2025-12-31', 'case', 'm', 't1', 'regressed', 1, 0, -1, 1, 0, 0.004, NULL, NULL, NULL, "
                    "'{}')")
    with connect(db) as con:
        columns = {r[0] for r in con.execute("DESCRIBE regressions").fetchall()}
        assert {"q_value", "significant", "large_enough", "verdict"} <= columns
        assert con.execute("SELECT change, q_value FROM regressions").fetchall() == [("regressed", None)]


def test_reports_show_q_values_and_both_answers(tmp_path: Path) -> None:
    current, base = cancel_out()
    ctx = store(tmp_path, current, [("previous_version", VERSION, base)])
    # significance() reads only the partitions of the run and its baseline.
    run = SimpleNamespace(skill_version=CURRENT.skill_version, eval_date=CURRENT.eval_date)
    baseline = SimpleNamespace(skill_version=VERSION.skill_version, eval_date=VERSION.eval_date)
    with duckdb.connect(str(ctx.paths.db_path), read_only=True) as con:
        (sig,) = significance(con, run, baseline)
    assert sig["change"] == "improved" and sig["significant"] is False and sig["broken"]
    assert sig["labelled"][0][0] == "t000" and 0 < sig["labelled"][0][1] <= 0.1 and len(sig["labelled"]) == 20
    assert verdict_flags(sig) == " (significant: no; large enough: no)"
    notes = verdict_notes(sig)
    assert notes[0].startswith("Verdict: improved") and notes[1].startswith("Breakage signal: 20 cases dropped")
    assert "t000 (q = 0.04)" in notes[2]
    summary = regression_summary([("previous_version", VERSION, compare_all(current, [base])[0])])
    text = regression_markdown(summary)
    assert "| significant | large enough | verdict |" in text and "breakage [model-a]:" in text
    assert "regressed (q <= case_fdr): t000 [model-a] q=0.04" in text


def test_a_thin_drop_names_the_cases_that_fell_apart_from_those_labelled(tmp_path: Path) -> None:
    # 20 of 100 single-trial cases flip pass -> fail: the target's drop is significant, but one trial
    # per case cannot label a case on its own. The description says "labelled regressed: none" (what the
    # reports' "Labelled regressed" tile counts) and names the cases that fell apart.
    base = suite({f"t{i:03d}": (1, 1) for i in range(100)})
    current = suite({f"t{i:03d}": (0 if i < 20 else 1, 1) for i in range(100)})
    ctx = store(tmp_path, current, [("previous_version", VERSION, base)])
    result = no_regression(ctx)
    assert not result.passed
    assert "labelled regressed: none; fell, not labelled on their own: t000, t001" in result.description
    ctx.release()
    with duckdb.connect(str(ctx.paths.db_path), read_only=True) as con:
        run = SimpleNamespace(skill_version=CURRENT.skill_version, eval_date=CURRENT.eval_date)
        base_run = SimpleNamespace(skill_version=VERSION.skill_version, eval_date=VERSION.eval_date)
        from eval_pipelines.reports.comparison import labelled_regressed
        assert labelled_regressed(significance(con, run, base_run)) == []

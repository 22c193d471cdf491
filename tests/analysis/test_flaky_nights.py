"""The flaky_across_nights view: a case whose verdict changes between nights."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from eval_pipelines.store.connection import Partition, connect, replace_partition


def results(day: str, verdicts: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame([{
        "eval_date": day, "skill_version": "s@1.0.0", "skill": "s", "version": "1.0.0", "run_id": "r",
        "suite": "s", "test_id": test_id, "target": "t", "trial": 0, "category": None,
        "score": 1.0 if v == "pass" else 0.0, "verdict": v, "status": "graded", "reason": "",
    } for test_id, v in verdicts.items()])


def test_cases_that_change_verdict_between_nights_are_listed(tmp_path: Path) -> None:
    db = tmp_path / "f.duckdb"
    with connect(db) as con:
        for day, verdicts in [("2026-11-20", {"a": "pass", "b": "pass", "c": "fail"}),
                              ("2026-11-21", {"a": "fail", "b": "pass", "c": "fail"}),
                              ("2026-11-22", {"a": "pass", "b": "pass", "c": "fail"})]:
            replace_partition(con, "test_results", Partition(day, "s@1.0.0"), results(day, verdicts))
        rows = con.execute("SELECT test_id, nights, nights_passed, first_night, last_night "
                           "FROM flaky_across_nights").fetchall()
    assert rows == [("a", 3, 2, "2026-11-20", "2026-11-22")]

"""The store over both backends (a DuckDB file under tmp_path, a Postgres database on a
throwaway server; fixture ``store`` in conftest.py): partition replacement is exact and atomic."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from eval_pipelines.store.connection import (
    db_errors,
    TABLES,
    Partition,
    connect,
    query,
    read_partition,
    replace_partition,
)

P1 = Partition("2025-03-01", "calc@1.0.0")
P2 = Partition("2025-03-01", "calc@1.1.0")
P3 = Partition("2025-03-02", "calc@1.0.0")


def results(partition: Partition, *scores: float, suite: str = "calc") -> pd.DataFrame:
    return pd.DataFrame([{
        "eval_date": partition.eval_date, "skill_version": partition.skill_version,
        "skill": partition.skill, "version": partition.version, "run_id": "r1", "suite": suite,
        "test_id": f"t{i}", "target": "m", "trial": 0, "category": None, "score": s,
        "verdict": "pass" if s >= 0.8 else "fail", "status": "graded", "reason": "r",
    } for i, s in enumerate(scores)])


def scores(con, partition: Partition) -> list[float]:
    return sorted(read_partition(con, "test_results", partition)["score"].tolist())


def test_partition_properties() -> None:
    assert (P2.skill, P2.version) == ("calc", "1.1.0")


def test_connect_creates_every_table(store: str, tmp_path: Path) -> None:
    if not store.startswith("postgresql:"):
        store = str(tmp_path / "sub" / "eval.duckdb")
    with connect(store) as con:
        names = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert set(TABLES) | {"response_cache", "human_ratings"} <= names
    if not store.startswith("postgresql:"):
        assert Path(store).is_file()


def test_replace_partition_replaces_exactly_its_rows(store: str) -> None:
    db = store
    with connect(db) as con:
        assert replace_partition(con, "test_results", P1, results(P1, 1.0, 0.5, 0.9)) == 3
        replace_partition(con, "test_results", P2, results(P2, 0.1))
        replace_partition(con, "test_results", P3, results(P3, 0.2, 0.3))
    # A new connection (as another stage would open) sees committed data.
    with connect(db) as con:
        assert replace_partition(con, "test_results", P1, results(P1, 0.7)) == 1
    with connect(db, read_only=True) as con:
        assert scores(con, P1) == [0.7]
        assert scores(con, P2) == [0.1]
        assert scores(con, P3) == [0.2, 0.3]
        total = con.execute("SELECT count(*) FROM test_results").fetchone()[0]
    assert total == 4


def test_replace_with_empty_frame_clears_the_partition(store: str) -> None:
    with connect(store) as con:
        replace_partition(con, "test_results", P1, results(P1, 1.0))
        replace_partition(con, "test_results", P2, results(P2, 1.0))
        assert replace_partition(con, "test_results", P1, pd.DataFrame()) == 0
        assert scores(con, P1) == [] and scores(con, P2) == [1.0]


def test_failing_insert_rolls_back_and_keeps_old_rows(store: str) -> None:
    db = store
    with connect(db) as con:
        replace_partition(con, "test_results", P1, results(P1, 1.0, 0.9))
        broken = results(P1, 0.0).drop(columns=["status"])  # NOT NULL column missing
        with pytest.raises(db_errors()):
            replace_partition(con, "test_results", P1, broken)
        assert scores(con, P1) == [0.9, 1.0]
        # The connection is still usable after the rollback.
        replace_partition(con, "test_results", P1, results(P1, 0.5))
        assert scores(con, P1) == [0.5]
    with connect(db, read_only=True) as con:
        assert scores(con, P1) == [0.5]


def test_unknown_table_refused(store: str) -> None:
    with connect(store) as con:
        with pytest.raises(ValueError, match="unknown table"):
            replace_partition(con, "suites; DROP TABLE grades", P1, pd.DataFrame())
        with pytest.raises(ValueError):
            read_partition(con, "nope", P1)


def test_query_helper(store: str) -> None:
    db = store
    with connect(db) as con:
        replace_partition(con, "test_results", P1, results(P1, 1.0, 0.5))
    df = query(db, "SELECT count(*) AS n FROM test_results WHERE verdict = ?", ["pass"])
    assert int(df["n"].iloc[0]) == 1

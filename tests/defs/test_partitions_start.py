"""The partitions' date axis starts where evaluations start, not at a fixed date."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from eval_pipelines.defs.partitions import START_DATE_VARIABLE, first_evaluation_date
from eval_pipelines.store.connection import connect

TODAY = date(2026, 11, 23)
PROJECT = Path(__file__).resolve().parents[2]


def store_with_evaluations(path: Path, *days: str) -> Path:
    with connect(path) as con:
        for day in days:
            con.execute("INSERT INTO suites VALUES (?, 's@1', 's', '1', NULL, 's', 'eval-yaml', 'f', NULL, 'h', "
                        "'r', 0, '[]', 1, '{}', '[]', '{}', now())", [day])
    return path


def test_no_store_starts_today(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(START_DATE_VARIABLE, raising=False)
    assert first_evaluation_date(str(tmp_path / "none.duckdb"), TODAY) == "2026-11-23"


def test_store_starts_at_its_first_evaluation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(START_DATE_VARIABLE, raising=False)
    db = store_with_evaluations(tmp_path / "s.duckdb", "2026-11-09", "2026-11-02", "2026-11-20")
    assert first_evaluation_date(str(db), TODAY) == "2026-11-02"


def test_the_variable_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(START_DATE_VARIABLE, "2025-06-01")
    assert first_evaluation_date(str(tmp_path / "none.duckdb"), TODAY) == "2025-06-01"


def test_a_new_project_shows_days_not_a_year(tmp_path: Path) -> None:
    """The code location a new user loads: partitions from today (plus tomorrow's open one)."""
    env = {k: v for k, v in os.environ.items() if k not in (START_DATE_VARIABLE, "EVAL_PIPELINES_DB")}
    env |= {"EVAL_PIPELINES_HOME": str(tmp_path), "PYTHONPATH": str(PROJECT)}
    code = ("import json; from eval_pipelines.defs.partitions import eval_dates as d; "
            "keys = d.get_partition_keys(); print(json.dumps([keys[0], len(keys)]))")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, check=True).stdout
    first, count = json.loads(out.strip().splitlines()[-1])
    today = datetime.now(timezone.utc).date()
    assert first in (today.isoformat(), (today - timedelta(days=1)).isoformat())  # the load may straddle midnight
    assert count <= 3

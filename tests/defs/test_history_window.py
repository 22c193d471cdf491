"""EVAL_PIPELINES_HISTORY_DAYS bounds the date axis (5,000 skill versions x every night
would pass Dagster's 100,000 partitions per asset within weeks; docs/benchmarks.md)."""

from __future__ import annotations

from datetime import date

import pytest

from eval_pipelines.defs.partitions import first_evaluation_date

TODAY = date(2026, 11, 28)


def test_window_moves_the_start_forward(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVAL_PIPELINES_START_DATE", "2026-01-01")
    monkeypatch.setenv("EVAL_PIPELINES_HISTORY_DAYS", "14")
    start = first_evaluation_date("unused.duckdb", TODAY)
    assert start == "2026-11-15"
    assert (TODAY - date.fromisoformat(start)).days + 1 == 14  # 14 dates, today included


def test_window_never_moves_the_start_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVAL_PIPELINES_START_DATE", "2026-11-25")
    monkeypatch.setenv("EVAL_PIPELINES_HISTORY_DAYS", "14")
    assert first_evaluation_date("unused.duckdb", TODAY) == "2026-11-25"


def test_unset_keeps_every_date(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVAL_PIPELINES_START_DATE", "2026-01-01")
    monkeypatch.delenv("EVAL_PIPELINES_HISTORY_DAYS", raising=False)
    assert first_evaluation_date("unused.duckdb", TODAY) == "2026-01-01"

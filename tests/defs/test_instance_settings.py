"""The shipped dagster.yaml (issue 19): run monitoring is on, with finite timeouts,
so a run whose worker was SIGKILLed does not stay STARTED for ever."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest

PROJECT = Path(__file__).resolve().parents[2]


def test_the_shipped_instance_monitors_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(PROJECT / "dagster.yaml", tmp_path / "dagster.yaml")
    monkeypatch.chdir(tmp_path)  # its storage paths are relative to the project folder
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        assert instance.run_monitoring_enabled
        settings = instance.run_monitoring_settings
        # Every state a dead worker can leave a run in has a bound.
        assert 0 < settings["start_timeout_seconds"] <= 600
        assert 0 < settings["cancel_timeout_seconds"] <= 600
        assert 0 < instance.run_monitoring_max_runtime_seconds <= 24 * 3600
        assert 0 < instance.run_monitoring_poll_interval_seconds <= 300
        # The local launcher cannot resume runs; asking it to would fail the monitoring daemon's attempts.
        assert instance.run_monitoring_max_resume_run_attempts == 0

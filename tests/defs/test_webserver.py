"""Smoke test of the UI server: ``dagster-webserver -w workspace.yaml`` on a free port.

A copy of the project (skills/, datasets/, targets.yaml, dagster.yaml,
workspace.yaml) is served from ``tmp_path`` with ``DAGSTER_HOME`` and
``EVAL_PIPELINES_HOME`` pointing at the copy, exactly as ``make ui`` serves the
real folder (the webserver alone, without ``dagster dev``'s daemon, so the
sensor never starts a run here). The test waits for ``/server_info`` and the
code location (bounded), then reads the assets, their checks, the sensor and
the schedule back through the GraphQL API the UI uses. The server's process
group is terminated when the module ends.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Iterator

import pytest

from tests.support.webserver import DagsterWebserver

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parents[2]
STAGES = {"eval_suite", "test_cases", "model_outputs", "grades", "test_results", "metrics"}


def project_copy(root: Path) -> Path:
    for folder in ("skills", "datasets"):
        shutil.copytree(PROJECT / folder, root / folder)
    for name in ("targets.yaml", "dagster.yaml", "workspace.yaml"):
        shutil.copy(PROJECT / name, root / name)
    return root


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DagsterWebserver, dict]]:
    root = project_copy(tmp_path_factory.mktemp("webserver-project"))
    with DagsterWebserver(root) as web:
        repository = web.serve(timeout_s=90)
        yield web, {"repositoryName": repository["name"],
                    "repositoryLocationName": repository["location"]["name"]}


def test_server_info_and_code_location(server) -> None:
    web, selector = server
    info = web.wait_until_up(timeout_s=5)
    assert info.get("dagster_webserver_version")
    assert selector == {"repositoryName": "__repository__", "repositoryLocationName": "eval_pipelines"}


ASSETS = """
{
  assetNodes {
    assetKey { path }
    groupName
    isPartitioned
    partitionDefinition { type dimensionTypes { name type } }
    jobNames
    assetChecksOrError {
      __typename
      ... on AssetChecks { checks { name } }
    }
  }
}
"""


def test_assets_and_their_checks(server) -> None:
    web, _ = server
    nodes = {"/".join(n["assetKey"]["path"]): n for n in web.graphql(ASSETS)["assetNodes"]}
    assert STAGES <= set(nodes), sorted(nodes)
    for name in STAGES:
        node = nodes[name]
        assert node["groupName"] == "evaluation"
        assert node["isPartitioned"]
        assert node["partitionDefinition"]["type"] == "MULTIPARTITIONED"
        assert {d["name"]: d["type"] for d in node["partitionDefinition"]["dimensionTypes"]} == {
            "date": "TIME_WINDOW", "skill_version": "DYNAMIC"}
        assert "evaluate_skill_version" in node["jobNames"]
    checks = {}
    for name, node in nodes.items():
        assert node["assetChecksOrError"]["__typename"] == "AssetChecks", node
        for check in node["assetChecksOrError"]["checks"]:
            checks[check["name"]] = name
    assert checks.get("suite_thresholds_met") == "metrics"
    assert checks.get("every_case_has_an_output") == "model_outputs"


SENSORS = """
query ($selector: RepositorySelector!) {
  sensorsOrError(repositorySelector: $selector) {
    __typename
    ... on Sensors {
      results { name minIntervalSeconds targets { pipelineName } sensorState { status } }
    }
    ... on PythonError { message }
  }
}
"""

SCHEDULES = """
query ($selector: RepositorySelector!) {
  schedulesOrError(repositorySelector: $selector) {
    __typename
    ... on Schedules {
      results { name cronSchedule executionTimezone pipelineName scheduleState { status } }
    }
    ... on PythonError { message }
  }
}
"""


def test_sensor_and_schedule(server) -> None:
    web, selector = server
    sensors = web.graphql(SENSORS, {"selector": selector})["sensorsOrError"]
    assert sensors["__typename"] == "Sensors", sensors
    by_name = {s["name"]: s for s in sensors["results"]}
    sensor = by_name["new_skill_versions"]
    assert sensor["minIntervalSeconds"] == 30
    assert [t["pipelineName"] for t in sensor["targets"]] == ["evaluate_skill_version"]
    assert sensor["sensorState"]["status"] == "RUNNING"  # default_status=RUNNING

    schedules = web.graphql(SCHEDULES, {"selector": selector})["schedulesOrError"]
    assert schedules["__typename"] == "Schedules", schedules
    by_name = {s["name"]: s for s in schedules["results"]}
    schedule = by_name["nightly_regression"]
    assert schedule["pipelineName"] == "evaluate_skill_version"
    assert schedule["executionTimezone"] == "UTC"
    assert schedule["cronSchedule"]  # 0 2 * * * unless EVAL_PIPELINES_NIGHTLY_CRON is set
    assert schedule["scheduleState"]["status"] == "STOPPED"  # off until EVAL_PIPELINES_NIGHTLY=on or the toggle

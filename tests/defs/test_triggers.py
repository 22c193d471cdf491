"""The triggers: sensor ``new_skill_versions`` and schedule ``nightly_regression``.

Evaluated with Dagster's own contexts (``build_sensor_context`` /
``build_schedule_context``) on a temporary instance, over a skills folder in
``tmp_path``; no run is started.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

import dagster as dg
import pytest

from eval_pipelines.definitions import build_definitions
from eval_pipelines.defs.partitions import eval_partitions, skill_versions
from eval_pipelines.defs.resources import EvalProject, EvalStore
from eval_pipelines.defs.schedules import nightly_regression
from eval_pipelines.defs.sensors import new_skill_versions

PROJECT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def instance() -> Iterator[dg.DagsterInstance]:
    with dg.DagsterInstance.ephemeral() as inst:
        yield inst


@pytest.fixture(scope="module")
def _shared_persistent_instance() -> Iterator[dg.DagsterInstance]:
    with dg.instance_for_test() as inst:
        yield inst


@pytest.fixture
def persistent(_shared_persistent_instance: dg.DagsterInstance) -> Iterator[dg.DagsterInstance]:
    """A persistent temporary instance (schedule contexts and ``evaluate_tick`` need an
    instance reference), shared by the module for speed and emptied after each test."""
    inst = _shared_persistent_instance
    yield inst
    for partition in inst.get_dynamic_partitions(skill_versions.name):
        inst.delete_dynamic_partition(skill_versions.name, partition)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for skill in ("calculator/v1.0.0", "support-triage/1.0.0"):
        shutil.copytree(PROJECT / "skills" / skill, tmp_path / "skills" / skill)
    return tmp_path


def resources(root: Path) -> dict[str, object]:
    return {"project": EvalProject(root=str(root)), "store": EvalStore(db_path=str(root / "results.duckdb"))}


def tick(instance: dg.DagsterInstance, root: Path, cursor: str | None = None) -> dg.SensorResult:
    context = dg.build_sensor_context(instance=instance, cursor=cursor, resources=resources(root))
    result = new_skill_versions(context)
    assert isinstance(result, dg.SensorResult)
    return result


def added(result: dg.SensorResult) -> list[str]:
    keys: list[str] = []
    for request in result.dynamic_partitions_requests or []:
        assert isinstance(request, dg.AddDynamicPartitionsRequest)
        assert request.partitions_def_name == skill_versions.name
        keys.extend(request.partition_keys)
    return sorted(keys)


def requested(result: dg.SensorResult) -> dict[str, dg.RunRequest]:
    out = {}
    for request in result.run_requests or []:
        dims = eval_partitions.get_partition_key_from_str(str(request.partition_key)).keys_by_dimension
        out[dims["skill_version"]] = request
    return out


def today_utc() -> set[str]:
    # Around midnight the sensor may have read the clock on the other side.
    return {datetime.now(timezone.utc).date().isoformat()}


def add_version(root: Path, version: str) -> Path:
    """A new calculator version folder (a copy of 1.0.0 with another version number)."""
    target = root / "skills" / "calculator" / f"v{version}"
    shutil.copytree(PROJECT / "skills" / "calculator" / "v1.0.0", target)
    skill_md = target / "SKILL.md"
    skill_md.write_text(skill_md.read_text().replace("version: 1.0.0", f"version: {version}"))
    return target


def write_zip(path: Path, files: dict[str, str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return path


# ---- sensor -----------------------------------------------------------------------


def test_first_tick_requests_every_version_and_registers_it(instance: dg.DagsterInstance, root: Path) -> None:
    before = today_utc()
    result = tick(instance, root)
    dates = before | today_utc()

    assert added(result) == ["calculator@1.0.0", "support-triage@1.0.0"]
    runs = requested(result)
    assert sorted(runs) == ["calculator@1.0.0", "support-triage@1.0.0"]
    for version, request in runs.items():
        assert isinstance(request.partition_key, dg.MultiPartitionKey)
        assert request.partition_key.keys_by_dimension["date"] in dates
        assert request.run_key == f"new-version:{version}"
        assert request.tags["eval/trigger"] == "new_skill_version"
        assert request.tags["eval/skill_version"] == version
    assert json.loads(result.cursor) == {"requested": ["calculator@1.0.0", "support-triage@1.0.0"], "refused": {}}


def test_second_tick_with_the_cursor_requests_nothing(instance: dg.DagsterInstance, root: Path) -> None:
    first = tick(instance, root)
    instance.add_dynamic_partitions(skill_versions.name, added(first))  # what the daemon does
    second = tick(instance, root, first.cursor)
    assert not second.run_requests
    assert not second.dynamic_partitions_requests
    assert json.loads(second.cursor) == json.loads(first.cursor)


def test_a_new_version_folder_is_the_only_one_requested(instance: dg.DagsterInstance, root: Path) -> None:
    first = tick(instance, root)
    instance.add_dynamic_partitions(skill_versions.name, added(first))
    add_version(root, "1.2.0")

    third = tick(instance, root, first.cursor)
    assert sorted(requested(third)) == ["calculator@1.2.0"]
    assert added(third) == ["calculator@1.2.0"]
    assert "calculator@1.2.0" in json.loads(third.cursor)["requested"]


def test_the_cursor_alone_prevents_repeats(instance: dg.DagsterInstance, root: Path) -> None:
    # Even when the daemon never applied the partition requests, a known version is not requested again.
    first = tick(instance, root)
    again = tick(instance, root, first.cursor)
    assert not again.run_requests


def test_zip_slip_package_is_skipped(instance: dg.DagsterInstance, root: Path) -> None:
    evil = write_zip(root / "skills" / "evil.zip", {
        "SKILL.md": "---\nname: evil\ndescription: escapes its folder\nversion: 1.0.0\n---\nx\n",
        "eval.yaml": "name: evil\ntests: []\n",
        "../../escaped.txt": "written outside the package",
    })
    first = tick(instance, root)
    assert "evil@1.0.0" not in requested(first)
    assert "evil@1.0.0" not in added(first)
    assert "evil@1.0.0" not in json.loads(first.cursor)["requested"]
    assert sorted(requested(first)) == ["calculator@1.0.0", "support-triage@1.0.0"]  # the rest still run
    # Nothing was extracted, inside or outside the work folder.
    assert not list(root.parent.rglob("escaped.txt"))
    assert evil.exists()
    # The refusal is remembered (so it is logged once), and the next tick skips it again.
    assert str(evil) in json.loads(first.cursor)["refused"]
    assert "evil@1.0.0" not in requested(tick(instance, root, first.cursor))


def test_zip_package_is_requested(instance: dg.DagsterInstance, root: Path) -> None:
    source = PROJECT / "skills" / "calculator" / "v1.0.0"
    files = {str(p.relative_to(source)): p.read_text() for p in source.rglob("*") if p.is_file()
             and "__pycache__" not in p.parts}
    files["SKILL.md"] = files["SKILL.md"].replace("version: 1.0.0", "version: 3.0.0")
    write_zip(root / "skills" / "drops" / "calculator-3.0.0.zip",
              {f"calculator/{name}": text for name, text in files.items()})
    result = tick(instance, root)
    assert "calculator@3.0.0" in requested(result)
    assert "calculator@3.0.0" in added(result)


def test_sensor_requests_resolve_against_the_job(persistent: dg.DagsterInstance, root: Path) -> None:
    """Through the daemon's path: ``evaluate_tick`` validates each partition key against the job,
    counting the partitions the same tick adds."""
    defs = build_definitions(str(root), str(root / "results.duckdb"))
    sensor = defs.resolve_sensor_def("new_skill_versions")
    context = dg.build_sensor_context(instance=persistent, instance_ref=persistent.get_ref(),
                                      repository_def=defs.get_repository_def(), resources=resources(root))
    data = sensor.evaluate_tick(context)
    assert sorted(r.tags["dagster/partition/skill_version"] for r in data.run_requests) == [
        "calculator@1.0.0", "support-triage@1.0.0"]
    assert all(r.tags["dagster/sensor_name"] == "new_skill_versions" for r in data.run_requests)


# ---- schedule ---------------------------------------------------------------------


NIGHT = datetime(2026, 11, 21, 2, 0, tzinfo=timezone.utc)


def schedule_context(instance: dg.DagsterInstance, **kwargs: object) -> dg.ScheduleEvaluationContext:
    return dg.build_schedule_context(instance=instance, scheduled_execution_time=NIGHT, **kwargs)


def test_nightly_requests_the_latest_version_of_each_skill(persistent: dg.DagsterInstance) -> None:
    """Not neighbours in Dagster's order (calculator@1.0.0 sits between them): a run each."""
    persistent.add_dynamic_partitions(skill_versions.name,
                                      ["support-triage@1.0.0", "calculator@1.0.0", "calculator@1.1.0"])
    persistent.add_dynamic_partitions(skill_versions.name, ["calculator@1.0.0"])  # already there: stays put
    requests = nightly_regression(schedule_context(persistent))
    assert isinstance(requests, list)
    by_version = {r.partition_key.keys_by_dimension["skill_version"]: r for r in requests}
    assert sorted(by_version) == ["calculator@1.1.0", "support-triage@1.0.0"]
    for version, request in by_version.items():
        assert request.partition_key.keys_by_dimension["date"] == "2026-11-21"
        assert request.run_key == f"nightly:2026-11-21:{version}"
        assert request.tags["eval/trigger"] == "nightly_regression"
        assert request.tags["eval/skill_version"] == version


def test_nightly_runs_neighbouring_versions_together(persistent: dg.DagsterInstance,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Neighbours share a run over their range, at most EVAL_PIPELINES_VERSIONS_PER_RUN of them; a range
    never holds a version the night does not re-check (calculator@1.0.0 splits the batches)."""
    monkeypatch.setenv("EVAL_PIPELINES_VERSIONS_PER_RUN", "2")
    persistent.add_dynamic_partitions(skill_versions.name, [
        "a@1.0.0", "b@1.0.0", "c@1.0.0", "calculator@1.0.0", "d@1.0.0", "calculator@1.1.0"])
    requests = nightly_regression(schedule_context(persistent))
    ranges = [(r.tags.get("dagster/asset_partition_range_start"), r.tags.get("dagster/asset_partition_range_end"))
              for r in requests]
    assert ranges == [("2026-11-21|a@1.0.0", "2026-11-21|b@1.0.0"), (None, None),
                      ("2026-11-21|d@1.0.0", "2026-11-21|calculator@1.1.0")]
    assert requests[1].partition_key == "2026-11-21|c@1.0.0"
    assert requests[0].partition_key is None and "eval/skill_version" not in requests[0].tags
    assert requests[0].run_key == "nightly:2026-11-21:a@1.0.0..b@1.0.0"
    assert requests[2].tags["eval/skill_versions"] == "d@1.0.0 .. calculator@1.1.0 (2 versions)"
    monkeypatch.setenv("EVAL_PIPELINES_VERSIONS_PER_RUN", "1")
    assert len(nightly_regression(schedule_context(persistent))) == 5


def test_a_batch_gets_run_monitorings_limit_once_per_version() -> None:
    from datetime import date

    from eval_pipelines.defs.run_requests import batch_run_request

    batch = batch_run_request(["a@1", "b@1", "c@1"], date(2026, 11, 21), "nightly:x", {}, max_runtime_s=14400)
    assert batch.tags["dagster/max_runtime"] == str(3 * 14400)
    alone = batch_run_request(["a@1"], date(2026, 11, 21), "nightly:x", {}, max_runtime_s=14400)
    assert "dagster/max_runtime" not in alone.tags  # the instance's limit applies as it is
    assert "dagster/max_runtime" not in batch_run_request(["a@1", "b@1"], date(2026, 11, 21), "n", {}).tags


def test_nightly_orders_versions_semantically(persistent: dg.DagsterInstance) -> None:
    persistent.add_dynamic_partitions(skill_versions.name,
                                      ["calculator@1.9.0", "calculator@1.10.0", "calculator@1.10.0-rc1"])
    (request,) = nightly_regression(schedule_context(persistent))
    assert request.partition_key.keys_by_dimension["skill_version"] == "calculator@1.10.0"


def test_nightly_skips_when_nothing_is_registered(persistent: dg.DagsterInstance) -> None:
    result = nightly_regression(schedule_context(persistent))
    assert isinstance(result, dg.SkipReason)
    assert "no skill versions" in (result.skip_message or "")


def test_nightly_requests_resolve_against_the_job(persistent: dg.DagsterInstance, tmp_path: Path) -> None:
    persistent.add_dynamic_partitions(skill_versions.name,
                                      ["calculator@1.0.0", "calculator@1.1.0", "support-triage@1.0.0"])
    defs = build_definitions(str(tmp_path), str(tmp_path / "results.duckdb"))
    schedule = defs.resolve_schedule_def("nightly_regression")
    data = schedule.evaluate_tick(schedule_context(persistent, repository_def=defs.get_repository_def()))
    (request,) = data.run_requests  # neighbours: one run over both
    assert (request.tags["dagster/asset_partition_range_start"], request.tags["dagster/asset_partition_range_end"]) \
        == ("2026-11-21|calculator@1.1.0", "2026-11-21|support-triage@1.0.0")
    assert request.tags["dagster/schedule_name"] == "nightly_regression"

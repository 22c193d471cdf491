"""``eval-pipelines export``: every table and view, read back with DuckDB from Parquet and CSV."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from eval_pipelines.cli import main
from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.store.connection import connect
from eval_pipelines.store.export import relations

SUITE = """\
name: {name}
description: a two-case suite
execution:
  targets: [local]
tests:
  - id: one
    input: say yes
    assert: [{{type: contains, value: "yes"}}]
  - id: two
    input: say no
    assert: [{{type: contains, value: "maybe"}}]
"""


@pytest.fixture
def db(tmp_path: Path, fake_openai, monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
       capsys: pytest.CaptureFixture[str]) -> Path:
    """A store holding two skills, each evaluated through the CLI against the fake server."""
    (tmp_path / "targets.yaml").write_text(
        f"targets:\n  - name: local\n    type: openai\n    model: m\n    base_url: {fake_openai.base_url}\n"
        f"    api_key_env: FAKE_KEY\n")
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "store.duckdb"
    for name in ("alpha", "beta"):
        (tmp_path / f"{name}.yaml").write_text(SUITE.format(name=name))
        assert main(["run", str(tmp_path / f"{name}.yaml"), "--db", str(path)]) == ExitCode.OK
    capsys.readouterr()
    return path


def test_parquet_export_reads_back_every_table_and_view(db: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "export"
    assert main(["export", "--format", "parquet", "--out", str(out), "--db", str(db)]) == ExitCode.OK
    printed = capsys.readouterr().out
    with connect(db) as con:
        names = relations(con)
        counts = {n: con.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n in names}
    assert {"test_results", "model_outputs", "metrics", "latest_results", "failures"} <= names.keys()
    reader = duckdb.connect()
    for name, columns in names.items():
        partitioned = "eval_date" in columns and "skill_version" in columns
        if partitioned and counts[name] == 0:
            assert f"{name}: skipped (no rows)" in printed
            continue
        source = (f"read_parquet('{out / name}/**/*.parquet', hive_partitioning = true)" if partitioned
                  else f"read_parquet('{out / name}.parquet')")
        assert reader.execute(f"SELECT count(*) FROM {source}").fetchone()[0] == counts[name], name
    layout = {p.relative_to(out / "test_results").parent.as_posix() for p in (out / "test_results").rglob("*.parquet")}
    assert len(layout) == 2 and all(p.startswith("eval_date=") and "/skill_version=" in p for p in layout), layout
    read_back = reader.execute(
        f"SELECT skill_version, test_id, verdict FROM read_parquet('{out}/test_results/**/*.parquet', "
        f"hive_partitioning = true) ORDER BY ALL").fetchall()
    assert [r[0] for r in read_back] == ["alpha@" + read_back[0][0].split("@")[1]] * 2 + \
        ["beta@" + read_back[2][0].split("@")[1]] * 2
    assert [(r[1], r[2]) for r in read_back] == [("one", "pass"), ("two", "fail")] * 2


def test_csv_export_of_one_skill(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "csv"
    assert main(["export", "--format", "csv", "--out", str(out), "--db", str(db), "--skill", "beta"]) == ExitCode.OK
    assert "response_cache: skipped (no skill column to filter by)" in capsys.readouterr().out
    rows = duckdb.connect().execute(
        f"SELECT DISTINCT split_part(skill_version, '@', 1) FROM read_csv('{out}/model_outputs/**/*.csv', "
        f"hive_partitioning = true)").fetchall()
    assert rows == [("beta",)]
    assert not (out / "response_cache.csv").exists()


def test_export_refuses_missing_database_and_unknown_skill(db: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "--out", str(tmp_path / "x"), "--db", str(tmp_path / "none.duckdb")]) \
        == ExitCode.INVALID_INPUT
    assert "no such database" in capsys.readouterr().out
    assert main(["export", "--out", str(tmp_path / "x"), "--db", str(db), "--skill", "gamma"]) \
        == ExitCode.INVALID_INPUT
    assert "--skill: no results for gamma" in capsys.readouterr().out


def test_eval_date_is_varchar_in_the_store_and_in_the_export(db: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    # One type for the same column: VARCHAR in DuckDB, VARCHAR in every exported file (the partition
    # columns are written into the files), VARCHAR when the folder is read back as docs/ci.md shows.
    out = tmp_path / "export"
    assert main(["export", "--format", "parquet", "--out", str(out), "--db", str(db)]) == ExitCode.OK
    with connect(db) as con:
        stored = con.execute("SELECT data_type FROM information_schema.columns WHERE table_name = 'test_results' "
                             "AND column_name = 'eval_date'").fetchone()[0]
    reader = duckdb.connect()
    one_file = next((out / "test_results").rglob("*.parquet"))
    in_file = reader.execute(f"SELECT typeof(eval_date), typeof(skill_version) FROM read_parquet('{one_file}', "
                             "hive_partitioning = false) LIMIT 1").fetchone()
    documented = reader.execute(f"SELECT DISTINCT typeof(eval_date) FROM read_parquet('{out}/test_results/**/*.parquet', "
                                "hive_partitioning = true, hive_types = {'eval_date': VARCHAR})").fetchall()
    assert stored == "VARCHAR" and in_file == ("VARCHAR", "VARCHAR") and documented == [("VARCHAR",)]
    with connect(db) as con:
        dates = con.execute("SELECT DISTINCT eval_date FROM test_results").fetchall()
    assert reader.execute(f"SELECT DISTINCT eval_date FROM read_parquet('{one_file}', hive_partitioning = false)"
                          ).fetchall() == dates

"""The same evaluation stored in DuckDB and in PostgreSQL gives the same rows, views and reports.

Two versions of the bundled calculator skill run through ``eval-pipelines run``
(the real stage list, the skill's own script as target) once into a DuckDB file
and once into a Postgres database (``--db postgresql://...``); every table and
every documented view is then read back from both and compared, leaving out only
what differs between any two runs (run ids, clocks, latencies). The Markdown
and JSON reports built from each store must be identical.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from eval_pipelines.reports.data import load_report
from eval_pipelines.reports.files import write_report
from eval_pipelines.run.cache import ResponseCache
from eval_pipelines.run.targets.base import ModelOutput, TargetRequest
from eval_pipelines.store.connection import TABLES, connect
from eval_pipelines.store.views import VIEWS
from tests.support.stores import fresh_database

PROJECT = Path(__file__).resolve().parents[2]
VERSIONS = ("v1.0.0", "v1.1.0")
# What two runs of the same evaluation never share: when and how fast it ran, and its id.
VOLATILE = {"run_id", "created_at", "loaded_at", "latency_ms", "trace", "spans", "trace_id", "package_root"}
ALL_VIEWS = (*VIEWS, "flaky_across_nights")


def _run_into(db: str, root: Path) -> None:
    for version in VERSIONS:
        proc = subprocess.run([sys.executable, "-m", "eval_pipelines.cli", "--root", str(root), "run",
                               str(root / "skills" / "calculator" / version), "--db", db],
                              capture_output=True, text=True, timeout=300, cwd=root,
                              env={**os.environ, "PYTHONPATH": str(PROJECT)})
        assert proc.returncode in (0, 1), proc.stdout + proc.stderr  # 1: a gate failed, rows stored


@pytest.fixture(scope="module")
def both_stores(tmp_path_factory: pytest.TempPathFactory, postgres_server) -> tuple[str, str]:  # noqa: ANN001
    root = tmp_path_factory.mktemp("project")  # one project: stored paths are the same
    shutil.copytree(PROJECT / "skills" / "calculator", root / "skills" / "calculator")
    shutil.copy(PROJECT / "targets.yaml", root / "targets.yaml")
    stores = (str(root / "eval.duckdb"), fresh_database(postgres_server))
    for db in stores:
        _run_into(db, root)
    return stores


def _comparable(frame: pd.DataFrame) -> list[tuple]:
    """Rows without volatile columns, as plain sorted tuples (NaN and None both NULL)."""
    frame = frame.drop(columns=[c for c in frame.columns if c in VOLATILE])
    if "metric" in frame.columns:  # latency and cost metrics come from the clock
        frame = frame[~frame["metric"].astype(str).str.contains("latency|duration|_ms|time_seconds")]
    rows = []
    for record in frame.astype(object).itertuples(index=False, name=None):
        rows.append(tuple(None if v is None or (isinstance(v, float) and pd.isna(v)) or v is pd.NA
                          else round(v, 9) if isinstance(v, float) else str(v) for v in record))
    return sorted(rows, key=repr)


def _read(db: str, relation: str) -> pd.DataFrame:
    with connect(db, read_only=not db.startswith("postgresql")) as con:
        return con.execute(f"SELECT * FROM {relation}").df()


@pytest.mark.slow
@pytest.mark.parametrize("table", TABLES)
def test_same_rows_in_every_table(both_stores: tuple[str, str], table: str) -> None:
    duck, pg = (_read(db, table) for db in both_stores)
    # uplifts: runs without the skill; trigger_results, blind_comparisons: trigger sets and blind
    # comparisons (tests/skill_creator): the calculator has neither
    assert len(duck) > 0 or table in ("datasets", "regressions", "uplifts", "trigger_results", "blind_comparisons")
    assert list(duck.columns) == list(pg.columns)
    assert _comparable(duck) == _comparable(pg)


@pytest.mark.slow
@pytest.mark.parametrize("view", ALL_VIEWS)
def test_same_rows_in_every_view(both_stores: tuple[str, str], view: str) -> None:
    duck, pg = (_read(db, view) for db in both_stores)
    assert list(duck.columns) == list(pg.columns)
    assert _comparable(duck) == _comparable(pg)


@pytest.mark.slow
def test_same_reports(both_stores: tuple[str, str], tmp_path: Path) -> None:
    texts = []
    for i, db in enumerate(both_stores):
        data = load_report(db, "calculator")
        assert data.baseline is not None  # v1.1.0 against v1.0.0: the comparison is read too
        out = tmp_path / str(i)
        texts.append(write_report(data, "md", out).read_text())
    strip = [[line for line in t.splitlines() if "ms" not in line and "Run" not in line] for t in texts]
    assert strip[0] == strip[1]


def test_response_cache_round_trip(store: str) -> None:
    """Answers flushed to the cache are served back; a key stored twice keeps its first answer."""
    cache = ResponseCache(store)
    first = ModelOutput(test_id="t", target="m", trial=0, output="four", latency_ms=1.0, llm_calls=1,
                        trace=[{"step": 1}])
    asyncio.run(cache.put("k1", first, "model-a"))
    cache.flush()
    again = ResponseCache(store)
    asyncio.run(again.put("k1", ModelOutput(test_id="t", target="m", trial=0, output="five"), "model-a"))
    again.flush()
    reader = ResponseCache(store)
    reader.preload(["k1", "missing"])
    hit = reader.get("k1", TargetRequest(test_id="t", trial=0, system_prompt=None, messages=[], timeout_s=10), "m")
    assert hit is not None and hit.output == "four" and hit.cached and hit.trace == [{"step": 1}]
    with connect(store) as con:
        assert con.execute("SELECT count(*) FROM response_cache").fetchone()[0] == 1


@pytest.mark.slow
def test_export_of_the_postgres_store_matches_duckdb(both_stores: tuple[str, str], tmp_path: Path) -> None:
    """`eval-pipelines export` of the shared store (through a DuckDB snapshot) writes the same
    relations with the same row counts as the export of the DuckDB file."""
    from eval_pipelines.store.export import export_store

    duck = export_store(both_stores[0], tmp_path / "duck")
    pg = export_store(both_stores[1], tmp_path / "pg")
    assert pg.written == duck.written and pg.skipped == duck.skipped
    assert pg.written["test_results"] > 0 and pg.written["latest_results"] > 0
    assert sorted(p.name for p in (tmp_path / "pg" / "test_results").iterdir()) == \
        sorted(p.name for p in (tmp_path / "duck" / "test_results").iterdir())


def test_postgres_views_follow_views_sql() -> None:
    """views_postgres.sql is views.sql translated: a view added to one must be added to the other."""
    from eval_pipelines.store import postgres, views

    duck = [__import__("re").search(r"VIEW\s+(\w+)", s).group(1) for s in views.statements()]
    assert postgres.view_names() == duck


def test_schema_translates_every_duckdb_type() -> None:
    """The Postgres tables come from schema.sql; a DuckDB type without a translation is caught here."""
    import re

    from eval_pipelines.store.connection import schema_sql
    from eval_pipelines.store.postgres import postgres_ddl

    ddl = postgres_ddl(schema_sql())
    assert not re.search(r"\b(VARCHAR|DOUBLE(?! PRECISION)|UBIGINT|HUGEINT|STRUCT|MAP|UNION)\b", ddl)

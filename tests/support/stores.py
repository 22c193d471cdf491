"""The results stores the store tests run over: a DuckDB file and a PostgreSQL database.

``postgres_server`` starts one throwaway PostgreSQL server per test session
(tests/support/postgres.py); ``fresh_database`` gives each test its own empty
database on it, so tests never see each other's rows. The Postgres side skips,
with the reason, when the server binaries or psycopg are missing.
"""

from __future__ import annotations

import importlib.util
import secrets
from pathlib import Path
from typing import Iterator

import pytest

from tests.support.postgres import LocalPostgres, why_unavailable

BACKENDS = ("duckdb", "postgres")


def postgres_unavailable() -> str | None:
    if importlib.util.find_spec("psycopg") is None:
        return "psycopg (3) is not installed: pip install -e '.[dev]'"
    return why_unavailable()


def session_postgres() -> Iterator[LocalPostgres]:
    reason = postgres_unavailable()
    if reason:
        pytest.skip(reason)
    with LocalPostgres(db_name="eval_store") as server:
        yield server


def fresh_database(server: LocalPostgres) -> str:
    """A new empty database on ``server``; returns its ``postgresql://`` URL."""
    import psycopg

    name = f"store_{secrets.token_hex(6)}"
    args = server.connect_args(dbname="postgres")
    with psycopg.connect(host=args["host"], port=args["port"], user=args["user"],
                         password=args["password"], dbname="postgres", autocommit=True) as con:
        con.execute(f'CREATE DATABASE "{name}"')
    return f"postgresql://{server.user}:{server.password}@{server.host}:{server.port}/{name}"


def store_for(request: pytest.FixtureRequest, backend: str, tmp_path: Path) -> str:
    """The connection string of an empty store of ``backend``."""
    if backend == "duckdb":
        return str(tmp_path / "eval.duckdb")
    return fresh_database(request.getfixturevalue("postgres_server"))

"""Store tests run over both backends: ``store`` is a DuckDB file or a Postgres database."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from tests.support.postgres import LocalPostgres
from tests.support.stores import BACKENDS, session_postgres, store_for


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[LocalPostgres]:
    yield from session_postgres()


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return store_for(request, request.param, tmp_path)

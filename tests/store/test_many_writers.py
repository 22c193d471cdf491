"""4 writer processes at once on one store lose no row and duplicate none.

Each process writes 10 partitions of 200 rows, then replaces every one of them
(benchmarks/store_writers.py, the code the measured figures in docs/deploy.md
come from); one process then reads everything back. Over both stores: DuckDB's
writers take turns at the file lock, PostgreSQL's write side by side.
"""

from __future__ import annotations

import pytest

from benchmarks.store_writers import run


@pytest.mark.slow
def test_four_concurrent_writers_lose_no_rows(store: str) -> None:
    figures = run(store, processes=4, partitions=10, rows=200)
    assert figures.expected_rows == 4 * 10 * 200
    assert figures.rows_read == figures.expected_rows
    assert figures.lost == 0 and figures.duplicated == 0
    if figures.store == "postgres":
        assert figures.conflicts == 0  # no write had to be retried

"""The README's three starter queries, run on a store where two versions were evaluated on different days."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from eval_pipelines.pipeline.project import ProjectPaths
from eval_pipelines.pipeline.stages import StageContext, run_stages
from eval_pipelines.store.connection import connect
from eval_pipelines.store.partition import Partition

PROJECT = Path(__file__).resolve().parents[2]


def readme_queries() -> list[str]:
    text = (PROJECT / "README.md").read_text()
    block = re.search(r"Three queries to start with.*?```sql\n(.*?)```", text, re.S)
    assert block, "README.md: the block of starter queries is missing"
    return [q.strip() for q in block.group(1).split(";\n") if q.strip()]


@pytest.mark.slow  # runs the calculator's script as a subprocess per case
def test_the_readme_queries_answer_across_days(tmp_path: Path) -> None:
    paths = ProjectPaths.from_root(PROJECT, str(tmp_path / "store.duckdb"))
    paths = ProjectPaths(paths.skills_dir, paths.datasets_dir, paths.db_path, tmp_path / "work", paths.targets_file)
    for key, day in (("calculator@1.0.0", "2026-11-20"), ("calculator@1.1.0", "2026-11-21")):
        ctx = StageContext(partition=Partition(day, key), run_id=f"t-{day}", paths=paths,
                           report_root=tmp_path / "reports", env=lambda names: {n: os.environ.get(n) for n in names})
        version = key.split("@")[1]
        ctx.memo["loaded"] = paths.load(PROJECT / "skills" / "calculator" / f"v{version}")
        for _ in run_stages(ctx):
            pass
    queries = readme_queries()
    assert len(queries) == 3
    with connect(paths.db_path) as con:
        rates = con.execute(queries[0]).fetchall()
        changed = con.execute(queries[1]).fetchall()
        failing = con.execute(queries[2]).fetchall()
    assert {(r[0], r[1]) for r in rates} == {("2026-11-20", "calculator@1.0.0"), ("2026-11-21", "calculator@1.1.0")}
    # Query 2 finds the flips although the versions were evaluated on different days.
    assert [(r[0], r[3], r[4], r[5], r[6]) for r in changed] == [
        ("tc-002", "2026-11-20", "pass", "2026-11-21", "fail"),
        ("tc-005", "2026-11-20", "fail", "2026-11-21", "pass")]
    # Query 3 names the date, and only the latest one.
    assert failing and {(r[0], r[1], r[2]) for r in failing} == {("2026-11-21", "calculator@1.1.0", "tc-002")}

"""The bundled demo, run once per test session as a user runs it.

``eval-pipelines --root <copy of the project> demo --db <tmp>/demo.duckdb`` in a
subprocess, with DAGSTER_HOME in the copy and no model credentials in the
environment. The end-to-end demo test, the SQL-doc queries, the reports and the
browser check all read the same run, so CI pays for the demo once.

The timeout is generous on purpose: CI shares its machine, and the demo (every
bundled skill version through Dagster) takes about 2 minutes on an idle 2-core
machine but over 5 when the machine is busy. A failure is remembered, so the
tests that share the demo fail at once with its output instead of each
starting it again.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
DEMO_TIMEOUT_S = 1500
# pytest-timeout counts fixture setup: a test that may be the first to build the demo needs this.
DEMO_TEST_TIMEOUT_S = DEMO_TIMEOUT_S + 300


@dataclass(frozen=True)
class DemoRun:
    root: Path  # the copy of the project the demo ran in (DAGSTER_HOME too)
    db: Path
    returncode: int
    stdout: str
    stderr: str


def build_demo(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """The session's demo run, started on first use."""
    base = tmp_path_factory.getbasetemp() / "demo-for-reports"
    root, db = base / "project", base / "demo.duckdb"
    out, err, code = base / "stdout.txt", base / "stderr.txt", base / "returncode.txt"
    if not code.is_file():
        if base.exists():
            shutil.rmtree(base)
        root.mkdir(parents=True)
        shutil.copytree(PROJECT / "skills", root / "skills", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(PROJECT / "datasets", root / "datasets")
        for name in ("targets.yaml", "dagster.yaml"):
            shutil.copy(PROJECT / name, root / name)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("EVAL_PIPELINES_", "DAGSTER_", "OPENAI_"))}
        env["DAGSTER_HOME"] = str(root)
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "eval_pipelines.cli", "--root", str(root), "demo", "--db", str(db)],
                cwd=root, env=env, capture_output=True, text=True, timeout=DEMO_TIMEOUT_S,
            )
            returncode, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as exc:
            returncode = -1
            stdout = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            stderr = f"demo timed out after {DEMO_TIMEOUT_S} s"
        out.write_text(stdout)
        err.write_text(stderr)
        code.write_text(str(returncode))
    return DemoRun(root, db, int(code.read_text()), out.read_text(), err.read_text())


def build_demo_database(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(project root, DuckDB path) of a successful demo run, with the SQL views installed."""
    from eval_pipelines.store.connection import connect
    from eval_pipelines.store.views import install_views

    demo = build_demo(tmp_path_factory)
    assert demo.returncode == 0, demo.stdout[-4000:] + demo.stderr[-4000:]
    marker = demo.db.with_suffix(".views")
    if not marker.is_file():
        with connect(demo.db) as con:
            install_views(con)
        marker.write_text("ok\n")
    return demo.root, demo.db

"""Loading the code location imports Dagster and the stage list, not the evaluation core.

Every `dagster` command, code server and run imports ``eval_pipelines.definitions``
first; the optional dependencies (graders' jinja2, jsonschema, sqlglot...; the
Postgres and Celery extras; model SDKs) and pandas/DuckDB are imported by the code
that uses them, when it runs (issue 33). A fresh interpreter says which modules an
import pulled in; no timing is asserted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Never needed to declare the assets, checks, jobs, sensor and schedule.
HEAVY = ("pandas", "numpy", "duckdb", "openai", "pydantic_ai", "celery", "dagster_celery", "psycopg",
         "onnxruntime", "sqlglot", "html5lib", "pypdf", "jinja2", "jsonschema", "opentelemetry", "aiohttp",
         "eval_pipelines.formats.loader", "eval_pipelines.grading.registry", "eval_pipelines.pipeline.stages",
         "eval_pipelines.suite.models", "eval_pipelines.store.connection")

SCRIPT = """
import json, sys
import eval_pipelines.definitions
after_definitions = sorted(sys.modules)
from eval_pipelines.grading.registry import canonical_type, get_grader
canonical = canonical_type("exact_match")
before = set(sys.modules)
grader = get_grader("Exact-Match")
print(json.dumps({"definitions": after_definitions, "canonical": canonical, "grader": grader.type,
                  "graders_loaded": sorted(m for m in set(sys.modules) - before
                                           if m.startswith("eval_pipelines.grading.graders."))}))
"""


@pytest.mark.slow  # a fresh interpreter importing Dagster: about a second
def test_definitions_and_one_grader_import_only_what_they_need(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVAL_PIPELINES_", "DAGSTER_"))}
    env.update(EVAL_PIPELINES_HOME=str(tmp_path), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    loaded = set(seen["definitions"])
    assert "eval_pipelines.defs.assets" in loaded
    pulled_in = sorted(m for m in HEAVY if m in loaded or any(x.startswith(m + ".") for x in loaded))
    assert pulled_in == [], f"import eval_pipelines.definitions pulled in {pulled_in}"
    # The registry's index names the module: the canonical type without importing a grader,
    # the grader by importing its own module only.
    assert seen["canonical"] == "equals" and seen["grader"] == "equals"
    assert seen["graders_loaded"] == ["eval_pipelines.grading.graders.equals",
                                      "eval_pipelines.grading.graders.text"]


@pytest.mark.slow  # a fresh interpreter importing Dagster: about a second
def test_definitions_read_an_existing_store_without_pandas(tmp_path: Path) -> None:
    """The date axis starts at the store's first evaluation date (defs/partitions.py): reading it
    opens DuckDB, but pandas (~0.4 s of CPU) stays out of the code location's import."""
    from eval_pipelines.store.connection import connect

    db = tmp_path / ".data" / "eval_pipelines.duckdb"
    with connect(db):
        pass
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVAL_PIPELINES_", "DAGSTER_"))}
    env.update(EVAL_PIPELINES_HOME=str(tmp_path), PYTHONPATH=str(ROOT))
    script = "import json, sys; import eval_pipelines.definitions; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert "eval_pipelines.store.connection" in loaded  # it did read the store
    assert not {"pandas", "numpy"} & loaded

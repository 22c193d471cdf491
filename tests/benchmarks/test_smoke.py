"""The benchmark command still runs end to end (small N, no timing assertions).

Speed lives in docs/benchmarks.md, measured by `python -m benchmarks.run`; this
only keeps the benchmark itself from rotting: every figure is produced, and the
counts it checks along the way (requests per run, cached re-run, rows graded)
come out right.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_quick_benchmark_produces_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "benchmarks.md"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--quick", "--out", str(out),
         "--work-dir", str(tmp_path / "work"), "--tools-dir", str(tmp_path / "no-tools")],
        cwd=REPO, capture_output=True, text=True, timeout=580)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    text = out.read_text()
    for heading in ("## 0.", "## 1. Model stage", "## 2. End to end", "## 3. Side by side", "## 4. Cached",
                    "## 5. Grading", "## 6. Scale", "## 7. CPU"):
        assert heading in text
    assert "Quick smoke run" in text
    assert "| promptfoo | not installed |" in text and "| inspect_ai | not installed |" in text
    results = json.loads(out.with_suffix(".json").read_text())
    cases = results["sizes"]["cases"]
    assert results["e2e"]["requests"] == [cases]  # one request per case, no retries
    assert results["cached"]["requests"] == [0]  # the re-run is served from the cache
    assert results["grading"]["outputs"] == results["sizes"]["grading_cases"] * results["sizes"]["grading_trials"]
    assert [s["cases"] for s in results["scale"]] == results["sizes"]["scale"]
    assert all(v > 0 for v in results["ceiling_rps"])
    assert {"ours", "bare_post", "bare_create"} <= set(results["cpu"])
    # The import floors measured beside our import, in the same rounds, and what the page says of them.
    floors = {name: len(values) for name, values in results["floors"].items()}
    assert floors == {"dagster_import": 1, "cli_libraries": 1}
    assert "its floor, Dagster's own import" in text and "our definitions add" in text
    assert "plus importing openai, pandas and DuckDB" in text

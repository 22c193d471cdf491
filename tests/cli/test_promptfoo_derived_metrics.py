"""promptfoo ``derivedMetrics`` end to end: the named scores of a run become stored metric
rows ``derived:NAME`` per target, shown in the Markdown report (expected values worked by hand
from promptfoo's rule: named scores summed over the prompt-provider pair's evals)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.cli import main
from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.store.connection import connect

CONFIG = """\
prompts: ['{{ q }}']
providers: [echo]
tests:
  - vars: {q: 'cat positive'}
    assert:
      - {type: contains, value: positive, metric: tp, weight: 0}
      - {type: contains, value: negative, metric: fp, weight: 0}
  - vars: {q: 'dog positive'}
    assert:
      - {type: contains, value: positive, metric: tp, weight: 0}
      - {type: contains, value: dog, metric: fp, weight: 0}
  - vars: {q: bird}
    assert: [{type: contains, value: bird}]
derivedMetrics:
  - {name: precision, value: tp / (tp + fp)}
  - {name: scaled, value: 'precision * 2 + __count ^ 2'}
  - {name: undefined, value: tp / (fp - 1)}
"""


def test_derived_metrics_are_stored_and_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "promptfooconfig.yaml").write_text(CONFIG)
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "r.duckdb"
    assert main(["run", "promptfooconfig.yaml", "--db", str(db)]) in (ExitCode.OK, ExitCode.GATE_FAILED)
    capsys.readouterr()
    with connect(db) as con:
        rows = dict(con.execute("SELECT metric, value FROM metrics WHERE metric LIKE 'derived:%' "
                                "AND target = 'echo'").fetchall())
    # tp = 1 + 1, fp = 0 + 1 (the unnamed `bird` assertion counts for nothing), three evals.
    assert rows == {"derived:precision": pytest.approx(2 / 3), "derived:scaled": pytest.approx(4 / 3 + 9)}
    report = next((tmp_path / "reports").rglob("*.md")).read_text()
    assert "### Derived metrics" in report and "| echo | precision | 0.6667 |" in report
    assert "undefined" not in [line.split("|")[2].strip() for line in report.splitlines()
                               if line.startswith("| echo |")]

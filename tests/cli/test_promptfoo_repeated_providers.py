"""A promptfoo config that repeats a provider runs every entry, as promptfoo does
(examples/openai-responses/promptfooconfig.reasoning repeats `o3-pro-reasoning`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.cli import main
from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.store.connection import connect

CONFIG = """\
prompts: ['Say {{ q }}']
providers:
  - {id: echo, label: same}
  - {id: echo, label: same}
  - {id: echo, label: same-2}
tests: [{vars: {q: hi}, assert: [{type: contains, value: hi}]}]
"""


def test_a_repeated_provider_runs_as_its_own_target(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "promptfooconfig.yaml").write_text(CONFIG)
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "r.duckdb"
    code = main(["run", "promptfooconfig.yaml", "--db", str(db)])
    out = capsys.readouterr()
    assert code == ExitCode.OK, out
    with connect(db) as con:
        rows = con.execute("SELECT target, output FROM model_outputs ORDER BY target").fetchall()
        warnings = con.execute("SELECT warnings FROM suites").fetchone()[0]
    # The second `same` takes the next free suffix (`same-2` is the third entry's own label).
    assert rows == [("same", "Say hi"), ("same-2", "Say hi"), ("same-3", "Say hi")]
    assert "entry 2 repeats the provider name 'same'; it runs as its own target 'same-3'" in warnings

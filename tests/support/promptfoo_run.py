"""Run a promptfoo config body end to end through ``eval-pipelines run`` against the fake OpenAI server."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.cli import main
from eval_pipelines.analysis.exit_codes import ExitCode


def run_config(tmp_path: Path, fake_openai, monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
               capsys: pytest.CaptureFixture[str], body: str, *extra: str) -> Path:
    """``body`` (a config without ``providers``) run on one ``openai:chat:fake-model`` provider at the
    fake server, in ``tmp_path``; the run must finish (OK, or a failed gate). Returns the DuckDB file."""
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    provider = ("{id: 'openai:chat:fake-model', config: {apiBaseUrl: '" + fake_openai.base_url
                + "', apiKeyEnvar: FAKE_KEY}}")
    (tmp_path / "promptfooconfig.yaml").write_text(f"providers: [{provider}]\n" + body)
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "r.duckdb"
    code = main(["run", "promptfooconfig.yaml", "--db", str(db), *extra])
    out = capsys.readouterr()
    assert code in (ExitCode.OK, ExitCode.GATE_FAILED), out
    return db

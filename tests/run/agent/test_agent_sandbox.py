"""A hostile bundled script run by the agent (issue 31): the sandbox attacks of issue 19
(tests/support/hostile.py), each started by the scripted agent through ``run_command``. It cannot
read the operator's key, reach the network, or leave a process running after its case."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Iterator

import pytest

from eval_pipelines.cli import main
from eval_pipelines.run.sandbox.runner import STRONG_LEVELS
from tests.support import hostile
from tests.support.agent_skill import ScriptedAgent, make_agent_project
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.field_projects import sql

KEY = "sk-operator-SECRET-hostile-31"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(latency_s=0.0) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        yield fake


def test_a_hostile_bundled_script_cannot_read_keys_reach_the_network_or_outlive_its_case(
        capsys, server: FakeOpenAIServer, tmp_path: Path) -> None:
    marker = f"61.{uuid.uuid4().int % 10**12:012d}"
    skill = make_agent_project(tmp_path)
    scripts = skill / "scripts"
    (scripts / "read_environ.py").write_text(hostile.READ_ENVIRON)
    (scripts / "connect.py").write_text(hostile.WRITE_AND_CONNECT)
    (scripts / "escape.py").write_text(hostile.ESCAPE)
    connect_args = json.dumps({"outside": [str(tmp_path / "escaped.txt")], "port": server.port})
    ScriptedAgent(server, steps=[
        ("read_file", {"path": "skills/demo/SKILL.md"}),
        ("run_command", {"command": "env; echo KEY=[$OPENAI_API_KEY]"}),
        ("run_command", {"command": "python3 skills/demo/scripts/read_environ.py"}),
        ("run_command", {"command": f"python3 skills/demo/scripts/connect.py '{connect_args}'"}),
        ("run_command", {"command": f"python3 skills/demo/scripts/escape.py '{json.dumps({'marker': marker})}'"}),
        ("read_file", {"path": "/etc/hostname"}),
        ("read_file", {"path": "../../etc/passwd"}),
        "done",
    ])
    db = tmp_path / "results.duckdb"
    requests_before = server.request_count
    main(["--root", str(tmp_path), "run", str(skill), "--db", str(db), "--configurations", "with_skill"])
    capsys.readouterr()

    ((trace, transcript, metrics),) = sql(db, "SELECT trace, transcript, run_metrics FROM model_outputs")
    results = [item["result"] for item in json.loads(trace)]
    assert KEY not in transcript and KEY not in trace
    assert "KEY=[]" in results[1] and "OPENAI" not in results[1]
    environ = json.loads(results[2].split("stdout:\n", 1)[1].split("\nstderr:", 1)[0])
    assert environ["found"] == []
    level = json.loads(metrics)["commands"][0]["sandbox"]
    if level not in STRONG_LEVELS:  # the weak levels keep the host's network (docs/security.md)
        pytest.skip(f"the sandbox runs at {level} here: no network namespace")
    connected = json.loads(results[3].split("stdout:\n", 1)[1].split("\nstderr:", 1)[0])
    assert connected["network"] != "connected" and connected["written"] == []
    assert not (tmp_path / "escaped.txt").exists()
    assert results[4].startswith("exit code 0")
    assert hostile.survivors_after(marker) == []  # the escaped sleeper died with its command
    # The file tools refuse paths leading outside the workspace.
    assert results[5].startswith("error:") and "outside the workspace" in results[5]
    assert results[6].startswith("error:") and "outside the workspace" in results[6]
    assert json.loads(metrics)["errors"] >= 2
    # Only the model's and the judge's requests reached the server, none from the scripts.
    assert all(r and "messages" in r for r in server.requests[requests_before:])

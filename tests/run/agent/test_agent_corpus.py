"""Every real skill package of the corpus that loads, run by the agent target (issue 31, "Done when" #2).

Each package of `tests/data/skills_corpus/` that `validate` accepts is copied to a temporary folder,
cut down to one eval (the first one naming input files, else the first: a run per eval would only
repeat the same steps), and given a stand-in bundled script `scripts/standin.sh` in its skill folder
(the corpus holds no third-party code). The fake OpenAI server plays an agent that lists the files,
reads the skill's SKILL.md through `read_file`, runs the stand-in through `run_command` (it lists
every file of the workspace) and writes a file. Read back from DuckDB: the transcript, the tool
calls, the files written and the per-case metrics; from the server's requests: SKILL.md's body
reached the model through the tool call and never through the system prompt; from the stand-in's
listing: every input file (directory and binary ones included) was in the workspace.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

from eval_pipelines.cli import main
from eval_pipelines.formats.loader import load_skill
from eval_pipelines.suite.errors import SpecErrors
from tests.formats.test_skills_corpus import CORPUS, TARGETS, package_folders
from tests.support.agent_skill import TARGETS as PROJECT_TARGETS, ScriptedAgent, tool_messages
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.field_projects import sql

pytestmark = pytest.mark.slow

STANDIN = "mkdir -p out\nfind . -type f | sort > out/standin.txt\ncat out/standin.txt\n"
WRITTEN = "The stand-in ran; see out/standin.txt."


def loading_packages() -> list[Path]:
    ok = []
    for i, folder in enumerate(package_folders()):
        try:
            load_skill(folder, datasets_dir=None, extract_dir=Path("/nonexistent-zip-dir"), project_targets=TARGETS)
        except SpecErrors:
            continue
        ok.append(folder)
    return ok


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(latency_s=0.0) as fake:
        yield fake


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, server: FakeOpenAIServer) -> None:
    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-operator-SECRET-corpus")


def _one_eval(evals_file: Path) -> None:
    """Keep one eval of the copy: the first naming input files, else the first."""
    data = json.loads(evals_file.read_text(encoding="utf-8-sig"))
    wrapper = None if isinstance(data, list) else next(k for k in ("evals", "cases", "test_cases") if k in data)
    items = data if wrapper is None else data[wrapper]
    chosen = [next((e for e in items if isinstance(e, dict) and e.get("files")), items[0])]
    if wrapper is None:
        data = chosen
    else:
        data[wrapper] = chosen
    evals_file.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")


def _body_line(body: str, description: str) -> str:
    """A line of SKILL.md's body that the description does not also hold."""
    lines = [line.strip() for line in body.splitlines() if len(line.strip()) > 15]
    return next((line[:60] for line in lines if line[:60] not in description), lines[0][:60])


@pytest.mark.parametrize("folder", loading_packages(), ids=lambda f: f.relative_to(CORPUS).as_posix())
def test_a_real_package_runs_with_the_agent_target(folder: Path, server: FakeOpenAIServer, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "targets.yaml").write_text(PROJECT_TARGETS)
    package_copy = tmp_path / "copy" / folder.relative_to(CORPUS)
    shutil.copytree(CORPUS / folder.relative_to(CORPUS).parts[0], tmp_path / "copy" / folder.relative_to(CORPUS).parts[0])
    evals_file = min(package_copy.rglob("evals.json"), key=lambda p: (len(p.parts), str(p)))
    _one_eval(evals_file)
    loaded = load_skill(package_copy, datasets_dir=None, extract_dir=tmp_path / "x", project_targets=TARGETS)
    skill_dir = loaded.package.skill_folder
    (skill_dir / "scripts").mkdir(exist_ok=True)
    (skill_dir / "scripts" / "standin.sh").write_text(STANDIN)
    name = loaded.package.name
    (case,) = loaded.suite.tests

    server.requests.clear()
    agent = ScriptedAgent(server, [
        ("list_files", {"path": "."}),
        ("read_file", {"path": f"skills/{name}/SKILL.md"}),
        ("run_command", {"command": f"sh skills/{name}/scripts/standin.sh"}),
        ("write_file", {"path": "out/result.md", "content": WRITTEN}),
        "Done: out/result.md written.",
    ])
    db = tmp_path / "results.duckdb"
    capsys.readouterr()
    code = main(["--root", str(project), "run", str(package_copy), "--db", str(db)])
    out, err = capsys.readouterr()
    assert code in (0, 1), out + err  # 1: a gate or a failed grade, not a crash

    ((output, error, trace, files, transcript, run_metrics),) = sql(
        db, "SELECT output, error, trace, files, transcript, run_metrics FROM model_outputs")
    assert error is None and output == "Done: out/result.md written."
    assert [i["tool"] for i in json.loads(trace)] == ["list_files", "read_file", "run_command", "write_file"]
    assert [(i["role"], i["kind"]) for i in json.loads(transcript)][-1] == ("assistant", "text")
    by_path: dict[str, Any] = {f["path"]: f for f in json.loads(files)}
    assert by_path["out/result.md"]["text"] == WRITTEN
    metrics = json.loads(run_metrics)
    assert metrics["turns"] == 5 and metrics["commands"][0]["exit_code"] == 0
    assert metrics["tool_calls_by_tool"] == {"list_files": 1, "read_file": 1, "run_command": 1, "write_file": 1}
    if case.assertions:  # graded: per-case metrics stored, and the judge saw the files the agent wrote
        assert sql(db, "SELECT count(*) FROM case_metrics WHERE test_id = ?", [case.id])[0][0] > 0
        judged = agent.judge_requests()
        assert judged and all(WRITTEN in json.dumps(r["messages"], ensure_ascii=False) for r in judged)
    else:  # an eval with nothing to grade: run and stored, not evaluated (case_metrics leave such cases out)
        assert sql(db, "SELECT status FROM test_results") == [("not_evaluated",)]

    # SKILL.md's body reached the model through read_file, not through the system prompt.
    requests = agent.agent_requests()
    mark = _body_line(loaded.package.body, loaded.package.description)
    system = requests[0]["messages"][0]
    assert system["role"] == "system" and mark not in system["content"]
    assert f"- {name}: " in system["content"]
    assert any(mark in t for t in tool_messages(requests[2]))

    # Every input file (binary and directory ones included) was in the workspace: the stand-in listed it.
    listing = by_path["out/standin.txt"]["text"] or ""
    for item in case.input_files:
        assert f"./{item.path.removeprefix('./')}" in listing, item.path
    assert f"./skills/{name}/SKILL.md" in listing

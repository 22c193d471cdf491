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

The runs are made once, in a module-scoped fixture, by two worker processes (each with its own fake
server and one DuckDB file for all its runs; tests/support/agent_corpus_runs.py); each package's rows
are read by its run id, the server's requests are those of its run.
"""

from __future__ import annotations

import functools
import json
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import pytest

from eval_pipelines.formats.loader import load_skill
from eval_pipelines.suite.errors import SpecErrors
from tests.formats.test_skills_corpus import CORPUS, TARGETS, package_folders
from tests.support.agent_corpus_runs import WRITTEN, run_packages
from tests.support.agent_skill import TARGETS as PROJECT_TARGETS, tool_messages
from tests.support.field_projects import sql

pytestmark = pytest.mark.slow


@functools.cache
def loading_packages() -> list[Path]:
    ok = []
    for folder in package_folders():
        try:
            load_skill(folder, datasets_dir=None, extract_dir=Path("/nonexistent-zip-dir"), project_targets=TARGETS)
        except SpecErrors:
            continue
        ok.append(folder)
    return ok


@pytest.fixture(scope="module")
def corpus_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, dict[str, Any]]:
    """Every accepted package run once (tests/support/agent_corpus_runs.py), split between two
    worker processes, each with its own fake server and its own DuckDB file; each package's rows
    are read by its run id. The package's copy is loaded again here for what the assertions compare."""
    base = tmp_path_factory.mktemp("agent_corpus")
    folders = [str(f) for f in loading_packages()]
    shares = [folders[0::2], folders[1::2]]
    with ProcessPoolExecutor(max_workers=2, mp_context=get_context("spawn")) as pool:
        jobs = [pool.submit(run_packages, str(CORPUS), share, str(base / f"w{n}"), PROJECT_TARGETS)
                for n, share in enumerate(shares) if share]
        records = {Path(k): v for job in jobs for k, v in job.result().items()}
    for record in records.values():
        record["loaded"] = load_skill(Path(record["copy"]), datasets_dir=None, extract_dir=base / "x",
                                      project_targets=TARGETS)
    return records


def _body_line(body: str, description: str) -> str:
    """A line of SKILL.md's body that the description does not also hold."""
    lines = [line.strip() for line in body.splitlines() if len(line.strip()) > 15]
    return next((line[:60] for line in lines if line[:60] not in description), lines[0][:60])


@pytest.mark.parametrize("folder", loading_packages(), ids=lambda f: f.relative_to(CORPUS).as_posix())
def test_a_real_package_runs_with_the_agent_target(folder: Path, corpus_runs: dict[Path, dict[str, Any]]) -> None:
    run = corpus_runs[folder]
    (run_id,) = run["run_ids"]  # one run, one run id, in its worker's store
    db = Path(run["db"])
    loaded = run["loaded"]
    (case,) = loaded.suite.tests
    name = loaded.package.name
    assert run["exit_code"] in (0, 1)  # 1: a gate or a failed grade, not a crash

    ((output, error, trace, files, transcript, run_metrics),) = sql(
        db, "SELECT output, error, trace, files, transcript, run_metrics FROM model_outputs WHERE run_id = ?",
        [run_id])
    assert error is None and output == "Done: out/result.md written."
    assert [i["tool"] for i in json.loads(trace)] == ["list_files", "read_file", "run_command", "write_file"]
    assert [(i["role"], i["kind"]) for i in json.loads(transcript)][-1] == ("assistant", "text")
    by_path: dict[str, Any] = {f["path"]: f for f in json.loads(files)}
    assert by_path["out/result.md"]["text"] == WRITTEN
    metrics = json.loads(run_metrics)
    assert metrics["turns"] == 5 and metrics["commands"][0]["exit_code"] == 0
    assert metrics["tool_calls_by_tool"] == {"list_files": 1, "read_file": 1, "run_command": 1, "write_file": 1}
    agent_requests = [r for r in run["requests"] if r and r.get("tools")]
    judged = [r for r in run["requests"] if r and "messages" in r and not r.get("tools")]
    if case.assertions:  # graded: per-case metrics stored, and the judge saw the files the agent wrote
        assert sql(db, "SELECT count(*) FROM case_metrics WHERE run_id = ? AND test_id = ?",
                   [run_id, case.id])[0][0] > 0
        assert judged and all(WRITTEN in json.dumps(r["messages"], ensure_ascii=False) for r in judged)
    else:  # an eval with nothing to grade: run and stored, not evaluated (case_metrics leave such cases out)
        assert sql(db, "SELECT status FROM test_results WHERE run_id = ?", [run_id]) == [("not_evaluated",)]
        assert not judged

    # SKILL.md's body reached the model through read_file, not through the system prompt.
    mark = _body_line(loaded.package.body, loaded.package.description)
    system = agent_requests[0]["messages"][0]
    assert system["role"] == "system" and mark not in system["content"]
    assert f"- {name}: " in system["content"]
    assert any(mark in t for t in tool_messages(agent_requests[2]))

    # Every input file (binary and directory ones included) was in the workspace: the stand-in listed it.
    listing = by_path["out/standin.txt"]["text"] or ""
    for item in case.input_files:
        assert f"./{item.path.removeprefix('./')}" in listing, item.path
    assert f"./skills/{name}/SKILL.md" in listing

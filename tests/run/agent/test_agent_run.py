"""Agent targets end to end (issue 31): ``eval-pipelines run`` on a skill package whose evals.json
takes a text file, a directory and a binary file; a scripted agent (the fake OpenAI server) lists
the files, reads SKILL.md, runs the bundled script and writes a file. Everything is read back from
DuckDB and from the requests the server received."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Iterator

import pytest

from eval_pipelines.cli import EXIT_OK, main
from tests.support.agent_skill import (
    BINARY, BODY_MARK, ScriptedAgent, default_steps, make_agent_project, tool_messages,
)
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.field_projects import sql


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(latency_s=0.0) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-operator-SECRET-31")
        yield fake


def run(capsys: pytest.CaptureFixture[str], root: Path, skill: Path) -> tuple[int, str, Path]:
    db = root / "results.duckdb"
    capsys.readouterr()
    code = main(["--root", str(root), "run", str(skill), "--db", str(db), "--configurations", "with_skill"])
    out, err = capsys.readouterr()
    return code, out + err, db


def test_a_skill_runs_as_a_skill(capsys, server: FakeOpenAIServer, tmp_path: Path) -> None:
    agent = ScriptedAgent(server)
    skill = make_agent_project(tmp_path)
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out

    # SKILL.md reached the model through read_file, never through the system prompt.
    requests = agent.agent_requests()
    assert len(requests) == 5
    system = requests[0]["messages"][0]
    assert system["role"] == "system" and BODY_MARK not in system["content"]
    assert "- demo: Takes stock of input files and writes a JSON inventory." in system["content"]
    assert not any(BODY_MARK in str(m.get("content")) for m in requests[1]["messages"])
    assert any(BODY_MARK in t for t in tool_messages(requests[2]))
    assert {t["function"]["name"] for t in requests[0]["tools"]} == {
        "list_files", "read_file", "write_file", "run_command"}

    ((output, error, trace, files, transcript, metrics, limits, llm_calls, tool_calls, tokens),) = sql(
        db, "SELECT output, error, trace, files, transcript, run_metrics, limits, llm_calls, tool_calls, "
            "prompt_tokens FROM model_outputs")
    assert error is None and output == "Done: out/report.json holds the inventory."
    assert (llm_calls, tool_calls) == (5, 4) and tokens > 0

    # Every input file, the directory's and the binary one included, was in the workspace: the listing
    # the model saw names them, and the bundled script (run in the sandbox) hashed each one.
    listing = tool_messages(requests[1])[0]
    for path in ("evals/files/notes.txt", "evals/files/tree/a.csv", "evals/files/tree/sub/b.md",
                 "evals/files/scan.bin", "skills/demo/SKILL.md", "skills/demo/scripts/inventory.py"):
        assert path in listing
    assert "skills/demo/evals" not in listing  # the expectations are not installed with the skill
    by_path = {f["path"]: f for f in json.loads(files)}
    assert set(by_path) == {"out/report.json", "out/notes.md"}
    report = json.loads(by_path["out/report.json"]["text"])
    assert report["count"] == 4
    hashed = {f["path"]: f["sha256"] for f in report["files"]}
    assert hashed["evals/files/scan.bin"] == hashlib.sha256(BINARY).hexdigest()
    assert by_path["out/notes.md"] | {"text": None} == {
        "path": "out/notes.md", "size": 36, "status": "created", "binary": False, "text": None,
        "truncated": False, "sha256": hashlib.sha256(b"Inventory written by the demo skill.").hexdigest()}

    # The transcript and the trace (what tool_trajectory reads), the metrics and the limits.
    assert [(i["tool"], i["step"]) for i in json.loads(trace)] == [
        ("list_files", 1), ("read_file", 2), ("run_command", 3), ("write_file", 4)]
    kinds = [(i["role"], i["kind"]) for i in json.loads(transcript)]
    assert kinds[:3] == [("system", "instructions"), ("user", "text"), ("assistant", "tool_call")]
    assert kinds[-1] == ("assistant", "text")
    metrics = json.loads(metrics)
    assert metrics["turns"] == 5 and metrics["errors"] == 0
    assert metrics["tool_calls_by_tool"] == {"list_files": 1, "read_file": 1, "run_command": 1, "write_file": 1}
    assert metrics["files_created"] == ["out/notes.md", "out/report.json"]
    assert metrics["commands"][0]["exit_code"] == 0
    assert json.loads(limits)["max_turns"] == 12 and json.loads(limits)["network"] is False

    # The judge saw the transcript and the output files' text, not only the answer.
    (judged,) = agent.judge_requests()
    prompt = judged["messages"][-1]["content"]
    assert "## Agent Transcript" in prompt and "## Files the Agent Wrote" in prompt
    assert "### out/report.json" in prompt and '"count": 4' in prompt
    assert "Inventory written by the demo skill." in prompt
    assert sql(db, "SELECT assertion_type, passed FROM grades") == [("expectations", True)]


def test_existing_graders_and_output_file_work_on_agent_runs(capsys, server: FakeOpenAIServer,
                                                           tmp_path: Path) -> None:
    """tool_trajectory, execution_metrics, latency, cost, token_usage unchanged; output_file on the files."""
    ScriptedAgent(server)
    skill = make_agent_project(tmp_path)
    (skill / "evals" / "evals.json").unlink()
    (skill / "evals" / "expected.json").write_text("{}")
    (skill / "eval.yaml").write_text("""\
tests:
  - id: inventory
    input: "Take stock of the input files."
    assert:
      - type: tool_trajectory
        mode: in_order
        expected: [{tool: read_file, args: {path: skills/demo/SKILL.md}}, {tool: run_command}, {tool: write_file}]
      - type: execution_metrics
        max_tool_calls: 4
      - type: latency
        max_ms: 600000
      - type: cost
        max_usd: 1
      - type: token_usage
        max_total: 100000
      - type: output_file
        path: out/report.json
        assert: {type: is_json}
      - type: output_file
        path: out/notes.md
        assert: {type: contains, value: demo skill}
      - type: output_file
        path: out/missing.txt
        weight: 0
      - type: output_file
        path: out/notes.md
        equals_file: fixtures/notes.md
      - type: output_file
        path: out/notes.md
        equals_file: fixtures/other.md
        weight: 0
""")
    (skill / "fixtures").mkdir()
    (skill / "fixtures" / "notes.md").write_text("Inventory written by the demo skill.")
    (skill / "fixtures" / "other.md").write_text("Something else.")
    code, out, db = run(capsys, tmp_path, skill)
    assert code in (EXIT_OK, 1), out
    grades = dict(((t, i), p) for t, i, p in sql(
        db, "SELECT assertion_type, assertion_index, passed FROM grades"))
    assert grades == {("tool_trajectory", 0): True, ("execution_metrics", 1): True, ("latency", 2): True,
                      ("cost", 3): True, ("token_usage", 4): True, ("output_file", 5): True,
                      ("output_file", 6): True, ("output_file", 7): False, ("output_file", 8): True,
                      ("output_file", 9): False}, grades
    ((cost,),) = sql(db, "SELECT cost_usd FROM model_outputs")
    assert 0 < cost < 1


def test_a_skill_packages_own_agent_target_follows_the_key_policy(capsys, server: FakeOpenAIServer,
                                                                  tmp_path: Path, monkeypatch) -> None:
    """The package's own targets.yaml chose the address: the operator's key is not sent there."""
    monkeypatch.delenv("OPENAI_BASE_URL")
    agent = ScriptedAgent(server)
    skill = make_agent_project(tmp_path, targets="targets: []\n")
    (tmp_path / "targets.yaml").write_text(f"""\
targets:
  - name: judge
    type: openai
    model: judge-model
    base_url: {server.base_url}
    max_retries: 0
""")
    (skill / "targets.yaml").write_text(f"""\
targets:
  - name: own-agent
    type: agent
    model: scripted-agent
    base_url: {server.base_url}
    max_retries: 0
""")
    code, out, db = run(capsys, tmp_path, skill)
    assert code == EXIT_OK, out
    assert agent.agent_requests()
    agent_headers = [h for r, h in zip(server.requests, server.headers) if r and r.get("tools")]
    assert agent_headers and not any("authorization" in h for h in agent_headers)
    ((warnings,),) = sql(db, "SELECT warnings FROM suites")
    assert any("target own-agent: the key in $OPENAI_API_KEY is not sent to 127.0.0.1" in w
               for w in json.loads(warnings))
    assert sql(db, "SELECT target, error FROM model_outputs") == [("own-agent", None)]


LIMITED = """\
targets:
  - name: default
    type: agent
    model: scripted-agent
    max_retries: 0
    max_turns: 3
    timeout_s: {timeout}
    command_timeout_s: 60
  - name: judge
    type: openai
    model: judge-model
    max_retries: 0
"""


def test_limits_end_a_run_and_are_stored_with_it(capsys, server: FakeOpenAIServer, tmp_path: Path) -> None:
    # A model that never stops calling tools: max_turns ends the run, the last text is the output.
    ScriptedAgent(server, steps=[("list_files", {"path": "."})])
    skill = make_agent_project(tmp_path / "turns", targets=LIMITED.format(timeout=120))
    code, out, db = run(capsys, tmp_path / "turns", skill)
    ((output, error, trace, metrics, limits),) = sql(
        db, "SELECT output, error, trace, run_metrics, limits FROM model_outputs")
    assert (output, error) == ("", None)
    assert json.loads(trace)[-1]["stopped"] == "max_turns"
    assert "request_limit" in json.loads(metrics)["stopped"] and json.loads(metrics)["turns"] == 3
    assert json.loads(limits)["max_turns"] == 3

    # A command that outlasts the case: the case ends at timeout_s as an error row, its transcript kept.
    ScriptedAgent(server, steps=[("write_file", {"path": "partial.txt", "content": "so far"}),
                                 ("run_command", {"command": "sleep 600"}), "never"])
    skill = make_agent_project(tmp_path / "time", targets=LIMITED.format(timeout=3))
    code, out, db = run(capsys, tmp_path / "time", skill)
    ((output, error, transcript, files),) = sql(db, "SELECT output, error, transcript, files FROM model_outputs")
    assert output is None and error == "the agent ran out of time: timeout_s 3 s"
    assert [f["path"] for f in json.loads(files)] == ["partial.txt"]
    assert any(i.get("tool") == "run_command" for i in json.loads(transcript))

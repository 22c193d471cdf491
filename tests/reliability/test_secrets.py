"""Secrets (issue #9): with a recognisable fake API key in the environment, run
the demo command (through Dagster, on a persistent instance), a CLI run and
the reports, then scan everything they left for the key.

The project holds the demo's calculator plus two skills built to tempt a leak:

* ``keyed``: an OpenAI target and an ``llm_judge`` reading the key from
  ``OPENAI_API_KEY``, against the local server, which answers 401 to a third
  of the requests with the bearer key echoed in the error body (as some
  providers do);
* ``env-dump``: a command target and a code judge that both print their whole
  environment.

Scanned: every column of every DuckDB table (as text), every file under
DAGSTER_HOME (run and event-log SQLite, compute logs), the reports folder,
everything the CLI printed, every Dagster event message, and the error texts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

import eval_pipelines.run.targets.openai_compat as openai_compat
from eval_pipelines.cli import main
from eval_pipelines.store.connection import connect
from tests.support.fake_openai import FakeOpenAIServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
PROJECT = Path(__file__).resolve().parents[2]
CANARY = "sk-FAKE-eval-pipelines-canary-7d1e2f90ab"
PIECES = (CANARY, CANARY[8:], CANARY[-12:])  # the key, or a recognisable part of it

ENV_DUMP = "import json, os, sys\nsys.stdin.read()\nprint(json.dumps(dict(os.environ)))\n"
ENV_JUDGE = ("import json, os, sys\nsys.stdin.read()\n"
             "print(json.dumps({'score': 1.0, 'details': {'env': dict(os.environ)}}))\n")


def keyed_skill(root: Path) -> None:
    skill = root / "skills" / "keyed"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: keyed\ndescription: Uses a key.\nversion: 1.0.0\n---\nAnswer.\n")
    lines = ["judge: judge", "execution:", "  targets: [model]", "tests:"]
    for i in range(12):
        lines += [f"  - id: k{i:02d}", f"    input: question {i}", "    assert:",
                  "      - type: contains", "        value: question", "      - type: llm_judge"]
    (skill / "eval.yaml").write_text("\n".join(lines) + "\n")
    common = ("    type: openai\n    api_key_env: OPENAI_API_KEY\n    base_url_env: OPENAI_BASE_URL\n"
              "    max_retries: 1\n    timeout_s: 5\n")
    (skill / "targets.yaml").write_text(f"targets:\n  - name: model\n    model: fake\n{common}"
                                        f"  - name: judge\n    model: judge-model\n{common}")


def env_dump_skill(root: Path) -> None:
    skill = root / "skills" / "env-dump"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: env-dump\ndescription: Prints its env.\nversion: 1.0.0\n---\n")
    (skill / "dump.py").write_text(ENV_DUMP)
    (skill / "judge.py").write_text(ENV_JUDGE)
    (skill / "eval.yaml").write_text(
        "tests:\n  - id: env\n    input: show me\n    assert:\n      - type: contains\n        value: PATH\n"
        "      - type: code_judge\n        script: judge.py\n")
    (skill / "targets.yaml").write_text("targets:\n  - name: dump\n    type: command\n"
                                        "    command: [python, dump.py]\n")


def responder(body: dict) -> str:
    if body.get("model") == "judge-model":
        return '{"score": 1, "passed": true, "reasoning": "fine"}'
    return "answer to " + str(body["messages"][-1]["content"])


def leaks(text: str) -> list[str]:
    return [p for p in PIECES if p in text]


def test_the_key_appears_nowhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(openai_compat, "BACKOFF_BASE_S", 0.01)
    root, home = tmp_path / "project", tmp_path / "dagster_home"
    shutil.copytree(PROJECT / "skills" / "calculator" / "v1.0.0", root / "skills" / "calculator")
    shutil.copy(PROJECT / "targets.yaml", root / "targets.yaml")
    keyed_skill(root)
    env_dump_skill(root)
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    db = tmp_path / "results.duckdb"
    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.chdir(tmp_path)  # the demo changes into the project; this restores the cwd
    printed = []
    with FakeOpenAIServer(fault_rate=0.35, faults=["401"], seed=3, responder=responder) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        # 1. The demo command: every skill version through the Dagster job, instance in DAGSTER_HOME.
        code = main(["demo", "--root", str(root), "--db", str(db)])
        printed.append(capsys.readouterr())
        assert code in (0, 1), printed[-1]  # 1 = a run or gate failed, which 401s may cause
        # 2. A CLI run of the keyed skill (the tests' model calls), then the reports.
        main(["--root", str(root), "run", str(root / "skills" / "keyed"), "--db", str(db), "--no-cache"])
        printed.append(capsys.readouterr())
        reports = tmp_path / "cli-reports"
        assert main(["--root", str(root), "report", "--skill", "keyed", "--db", str(db), "--format", "all",
                     "--out", str(reports)]) == 0
        printed.append(capsys.readouterr())
        served = list(server.faults_served)
        keys_sent = {h.get("authorization") for h in server.headers}
    # The key was really in play: sent to the server, and echoed back by its 401s.
    assert keys_sent == {f"Bearer {CANARY}"}
    assert served.count("401") >= 3

    found: dict[str, list[str]] = {}
    # DuckDB: every table, every column, as text.
    with connect(db, read_only=True) as con:
        tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables "
                                            "WHERE table_type = 'BASE TABLE'").fetchall()]
        rows_scanned = 0
        for table in tables:
            rows_scanned += con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for piece in PIECES:
                hits = con.execute(f"SELECT count(*) FROM {table} t WHERE contains(CAST(t AS VARCHAR), ?)",
                                   [piece]).fetchone()[0]
                if hits:
                    found.setdefault(f"duckdb:{table}", []).append(piece)
        error_rows = con.execute("SELECT count(*) FROM model_outputs WHERE error LIKE '%401%'").fetchone()[0]
        masked = con.execute("SELECT count(*) FROM model_outputs WHERE error LIKE '%401%***%'").fetchone()[0]
        judge_401 = con.execute("SELECT count(*) FROM grades WHERE reason LIKE '%401%'").fetchone()[0]
        env_output = con.execute("SELECT output FROM model_outputs WHERE skill = 'env-dump'").fetchone()[0]
    assert error_rows >= 1 and masked == error_rows  # the echoing 401s are stored with the key masked ...
    assert "PATH" in env_output  # ... and the environment dump did run
    # Files: Dagster's storage (runs, event logs, compute logs), the reports, the package extraction.
    files_scanned = 0
    for folder in (home, root / "reports", reports, root / ".data"):
        for path in folder.rglob("*"):
            if path.is_file():
                files_scanned += 1
                data = path.read_bytes()
                for piece in PIECES:
                    if piece.encode() in data:
                        found.setdefault(str(path), []).append(piece)
    # Everything printed, and every event and error message of every run.
    for out in printed:
        if leaks(out.out + out.err):
            found["cli output"] = leaks(out.out + out.err)
    events = 0
    with dg.DagsterInstance.get() as instance:
        runs = instance.get_runs()
        for run in runs:
            for record in instance.all_logs(run.run_id):
                events += 1
                text = f"{record.user_message} {record.dagster_event!r}"
                if leaks(text):
                    found.setdefault(f"event log {run.run_id}", []).extend(leaks(text))
    assert len(runs) == 3 and events > 100
    assert found == {}, found
    assert leaks(f"error: {CANARY[:3]}...{CANARY}") and not leaks("sk-***")  # the scanner itself works
    print(f"\nFIGURES secrets: tables={len(tables)} rows_scanned={rows_scanned} files_scanned={files_scanned} "
          f"dagster_runs={len(runs)} events={events} requests={len(served)} 401s={served.count('401')} "
          f"error_rows_with_401={error_rows} judge_grades_with_401={judge_401} leaks=0")


def test_hostile_programs_cannot_read_the_key_from_the_pipelines_proc(tmp_path: Path) -> None:
    """Issue 19: the pipeline *starts* with the key (changing os.environ does not scrub
    /proc/<pid>/environ); a skill program (command target) and a code judge read every
    /proc/*/environ they can see. The CLI runs as its own process with the key in its
    start-up environment, at the default level; the key must reach no row and no file."""
    from tests.support.hostile import READ_ENVIRON

    root = tmp_path / "project"
    skill = root / "skills" / "proc-hunter"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: proc-hunter\ndescription: Hunts.\nversion: 1.0.0\n---\n")
    (skill / "hunt.py").write_text("import sys\nsys.stdin.read()\n" + READ_ENVIRON)
    (skill / "judge.py").write_text(
        "import io, json, sys, contextlib\nsys.stdin.read()\nbuf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf):\n" + "".join(f"    {line}\n" for line in READ_ENVIRON.splitlines())
        + "report = json.loads(buf.getvalue())\n"
        "print(json.dumps({'score': 1.0, 'reasoning': json.dumps(report), 'details': report}))\n")
    (skill / "eval.yaml").write_text(
        "tests:\n" + "".join(f"  - id: hunt{i}\n    input: find the key\n    assert:\n"
                             f"      - type: contains\n        value: visible\n"
                             f"      - type: code_judge\n        script: judge.py\n" for i in range(3)))
    (skill / "targets.yaml").write_text("targets:\n  - name: hunter\n    type: command\n"
                                        "    command: [python, hunt.py]\n")
    db = tmp_path / "results.duckdb"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(PROJECT), "OPENAI_API_KEY": CANARY,
           "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", "import sys; from eval_pipelines.cli import main; "
                           "sys.exit(main(sys.argv[1:]))", "--root", str(root), "run", str(skill), "--db", str(db),
                           "--no-cache"], env=env, capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    found: dict[str, list[str]] = {}
    if leaks(done.stdout + done.stderr):
        found["cli output"] = leaks(done.stdout + done.stderr)
    with connect(db, read_only=True) as con:
        outputs = con.execute("SELECT output, error FROM model_outputs").fetchall()
        grades = con.execute("SELECT status, details FROM grades WHERE assertion_type = 'code_judge'").fetchall()
        tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables "
                                            "WHERE table_type = 'BASE TABLE'").fetchall()]
        for table in tables:
            for piece in PIECES:
                if con.execute(f"SELECT count(*) FROM {table} t WHERE contains(CAST(t AS VARCHAR), ?)",
                               [piece]).fetchone()[0]:
                    found.setdefault(f"duckdb:{table}", []).append(piece)
    files = [p for p in root.rglob("*") if p.is_file()]
    for path in files:
        for piece in PIECES:
            if piece.encode() in path.read_bytes():
                found.setdefault(str(path), []).append(piece)
    assert found == {}, found
    # The hunt really ran, in the sandbox, at a level recorded with each grade.
    isolations = {json.loads(details)["isolation"] for _, details in grades}
    if any(label.startswith("namespaces") or label.startswith("bubblewrap") for label in isolations):
        assert len(outputs) == 3 and all(out and '"visible"' in out for out, _ in outputs), outputs
        assert [status for status, _ in grades] == ["graded"] * 3
    else:  # no strong level here: refused, with the reason in every row
        assert all(error and "untrusted code refused" in error for _, error in outputs)
    reports = [p for p in files if "reports" in p.parts]
    print(f"\nFIGURES secrets /proc hunt: isolation={sorted(isolations)} outputs={len(outputs)} "
          f"grades={len(grades)} tables={len(tables)} files_scanned={len(files)} reports={len(reports)} leaks=0")

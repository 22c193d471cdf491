"""AgentV's example suites run offline, unchanged: each example folder becomes a skill package
(its own files, plus a SKILL.md and a targets.yaml whose replay targets stand in for the agents
the suite names), ``eval-pipelines run`` stores every case, and the stored messages carry every
input text the YAML wrote."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from eval_pipelines.cli import EXIT_INVALID, main
from eval_pipelines.store.connection import connect
from tests.support.fake_openai import FakeOpenAIServer, last_user_message
from tests.formats.test_agentv_corpus import CORPUS, ENV, REFUSED, SUITES, _interpolated, load, package_of, \
    written_inputs

ACCEPTED = [s for s in SUITES if str(s.relative_to(CORPUS)) not in REFUSED]
ABSENT = r"program '(bun|uv|node|python)' not found on PATH|prompt file '[^']+' not found|no expected value for field"


def as_skill(suite_file: Path, root: Path) -> tuple[Path, Path]:
    """A copy of the example folder as a skill package; returns (package, suite file in it)."""
    example = package_of(suite_file)
    name = example.name.lower()
    package = root / "skills" / name / "1.0.0"
    shutil.copytree(example, package)
    for other in package.rglob("*.eval.yaml"):  # one suite per package: the one under test
        if other.relative_to(package) != suite_file.relative_to(example):
            other.unlink()
    (package / "SKILL.md").write_text(f"---\nname: {name}\ndescription: AgentV example {name}\nversion: 1.0.0\n"
                                      "---\nAnswer the task.\n", encoding="utf-8")
    suite, _ = load(suite_file)
    names = set(suite.execution.targets) | {t for c in suite.tests for t in (c.targets or [])} or {"agent"}
    recordings = []
    for case in suite.tests:
        expected = case.expected_output
        output = expected if isinstance(expected, str) else json.dumps(expected) if expected else "stand-in answer"
        for trial in range(suite.trials_for(case)):  # a recording per trial the suite asks for
            recordings.append({"test_id": case.id, "trial": trial, "output": output,
                               "trace": json.dumps([{"tool": "search", "args": {"query": "x"}, "duration_ms": 5}])})
    (package / "recordings.jsonl").write_text("\n".join(json.dumps(r) for r in recordings) + "\n", encoding="utf-8")
    (package / "targets.yaml").write_text(
        "targets:\n" + "".join(f"  - {{name: {n}, type: replay, path: recordings.jsonl}}\n" for n in sorted(names)),
        encoding="utf-8")
    return package, package / suite_file.relative_to(example)


def stand_in_judge(body: dict[str, Any]) -> str:
    """The fake judge: a verdict every judge parser here accepts (a score, and one per rubric id)."""
    prompt = last_user_message(body)
    ids = set(re.findall(r"^- \*\*([^*]+)\*\*", prompt, flags=re.MULTILINE))
    return json.dumps({"score": 0.9, "passed": True, "reasoning": "stand-in judge",
                       "scores": {i: 1 for i in ids}})


@pytest.mark.slow
def test_every_accepted_example_runs_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str],
                                             fake_openai: FakeOpenAIServer) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    fake_openai.responder = stand_in_judge
    ran = 0
    graded: dict[str, int] = {}
    for suite_file in ACCEPTED:
        root = tmp_path / "-".join(suite_file.relative_to(CORPUS).with_suffix("").parts[2:])
        package, copied = as_skill(suite_file, root)
        # The judge is a project target (never a target under test): the fake server over real HTTP.
        (root / "targets.yaml").write_text(
            f"targets:\n  - {{name: judge, type: openai, model: judge-model, base_url: '{fake_openai.base_url}'}}\n",
            encoding="utf-8")
        db = root / "results.duckdb"
        code = main(["--root", str(root), "run", str(package), "--db", str(db)])
        out, err = capsys.readouterr()
        assert code != EXIT_INVALID, (suite_file, out, err)
        with connect(db) as con:
            stored = {r[0]: json.loads(r[1]) for r in con.execute("SELECT test_id, messages FROM test_cases").fetchall()}
            outputs = con.execute("SELECT count(*) FROM model_outputs").fetchone()[0]
            unrecorded = con.execute("SELECT count(*) FROM model_outputs WHERE error LIKE 'no recorded output%'"
                                     ).fetchone()[0]
            for status, count in con.execute("SELECT status, count(*) FROM grades GROUP BY status").fetchall():
                graded[status] = graded.get(status, 0) + count
            errors = [r[0] for r in con.execute("SELECT DISTINCT reason FROM grades WHERE status = 'error'").fetchall()]
        suite, _ = load(suite_file)
        assert set(stored) == {c.id for c in suite.tests}, suite_file
        assert outputs >= len(suite.tests)
        assert unrecorded == 0, suite_file  # the stand-in answers every trial the suite asks for
        # A grading error only ever names what the corpus does not carry: AgentV's judge programs
        # (bun, uv), judge prompt files not copied, a field_accuracy field the example gives no
        # expected value for. Anything else would be a misreading of the suite.
        assert all(re.search(ABSENT, e) for e in errors), (suite_file, errors)
        for test_id, written in written_inputs(suite_file).items():
            messages = stored[test_id]
            assert len(messages) == len(written), (suite_file, test_id)
            for (role, texts), kept in zip(written, messages):
                assert kept["role"] == role
                for text in texts:
                    assert _interpolated(text) in kept["content"], (suite_file, text[:60])
        ran += 1
    with capsys.disabled():
        print(f"\nAgentV corpus: {ran} of {len(SUITES)} example suites ran offline; grades by status: {graded}")
    assert ran == len(ACCEPTED)
    assert graded.get("graded", 0) > 100  # the assertions that can run here were graded

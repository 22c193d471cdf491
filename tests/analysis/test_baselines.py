"""Regression comparisons read the baseline version's stored outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.analysis.baselines import choose_baseline
from eval_pipelines.cli import main
from eval_pipelines.store.connection import connect

SUITE = """
name: api
description: The response keeps the baseline's structure and numbers.
tests:
  - id: users
    input: list users
    assert:
      - type: structural
        ignore_values: [count, score]
      - type: numeric
        fields: [score]
        tolerance: {min_delta: -0.1}
"""


def make_version(root: Path, version: str, body: str) -> Path:
    folder = root / "skills" / "api" / version
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: api\ndescription: d\nversion: {version}\n---\nx\n")
    (folder / "eval.yaml").write_text(SUITE)
    (folder / "answer.py").write_text(f"print({body!r})\n")
    (folder / "targets.yaml").write_text(
        "targets:\n  - name: script\n    type: command\n    command: [python, answer.py]\n")
    return folder


def test_choose_baseline_prefers_pinned_then_previous_semver() -> None:
    assert choose_baseline("1.10.0", ["1.2.0", "1.9.0", "1.10.0", "2.0.0"]) == "1.9.0"
    assert choose_baseline("1.0.0", ["1.0.0"]) is None
    assert choose_baseline("2.0.0", ["1.0.0", "1.5.0"], pinned="api@1.0.0") == "1.0.0"
    assert choose_baseline("2.0.0", ["1.0.0"], pinned="0.9.0") is None


@pytest.mark.slow
def test_second_version_is_compared_with_the_first(tmp_path: Path) -> None:
    db = str(tmp_path / "b.duckdb")
    v1 = make_version(tmp_path, "1.0.0", '{"users": ["a"], "count": 1, "score": 0.9}')
    v2 = make_version(tmp_path, "1.1.0", '{"users": ["a"], "count": 7, "score": 0.5}')
    v3 = make_version(tmp_path, "1.2.0", '{"people": ["a"], "count": 1, "score": 0.9}')
    for folder in (v1, v2, v3):
        main(["run", str(folder), "--db", db, "--root", str(tmp_path)])
    with connect(db) as con:
        grades = {(v, t): (s, r) for v, t, s, r in con.execute(
            "SELECT version, assertion_type, status, reason FROM grades").fetchall()}
    # The first version has nothing to compare with: not evaluated (no baseline yet), which
    # counts neither as a pass nor as a failure or an error of that version.
    for kind in ("structural", "numeric"):
        assert grades[("1.0.0", kind)][0] == "not_evaluated" and "no baseline yet" in grades[("1.0.0", kind)][1]
    with connect(db) as con:
        first = con.execute("SELECT status, verdict FROM test_results WHERE version = '1.0.0'").fetchall()
        first_metrics = dict(con.execute("SELECT metric, value FROM metrics WHERE version = '1.0.0' "
                                          "AND target = '*'").fetchall())
    assert first == [("not_evaluated", None)]
    assert first_metrics["errors"] == 0 and first_metrics["not_evaluated"] == 1 and "pass_rate" not in first_metrics
    # 1.1.0 keeps the structure (count and score values may change) but its score dropped by 0.4.
    assert grades[("1.1.0", "structural")][0] == "graded"
    assert "structure matches" in grades[("1.1.0", "structural")][1]
    assert "score: 0.9 -> 0.5" in grades[("1.1.0", "numeric")][1]
    # 1.2.0 is compared with 1.1.0 (the previous version), and lost `users`.
    assert "users: missing" in grades[("1.2.0", "structural")][1]

"""End to end: ``eval-pipelines demo`` on a copy of the project, as a user runs it.

The demo registers every bundled skill version as a dynamic partition and
executes ``evaluate_skill_version`` for each on the instance in DAGSTER_HOME;
afterwards the README's queries must return rows from the DuckDB file, and
the runs must be in the instance (what the UI shows).
"""

from __future__ import annotations

import re
from pathlib import Path

import dagster as dg
import pytest
import yaml

from tests.support.demo import DEMO_TEST_TIMEOUT_S, build_demo

from eval_pipelines.defs.partitions import skill_versions
from eval_pipelines.store.connection import connect

PROJECT = Path(__file__).resolve().parents[2]


def bundled_versions(skills: Path) -> list[str]:
    keys = []
    for skill_md in skills.glob("*/*/SKILL.md"):
        meta = yaml.safe_load(skill_md.read_text().split("---")[1])
        keys.append(f"{meta['name']}@{meta['version']}")
    return sorted(keys)


def readme_queries() -> list[str]:
    readme = PROJECT / "README.md"
    if not readme.is_file():
        return []
    blocks = re.findall(r"```sql\n(.*?)```", readme.read_text(), re.S)
    statements = []
    for block in blocks:
        for statement in block.split(";"):
            code = "\n".join(line for line in statement.splitlines() if not line.strip().startswith("--"))
            if code.strip():
                statements.append(code.strip())
    return statements


@pytest.mark.slow
@pytest.mark.timeout(DEMO_TEST_TIMEOUT_S)
def test_demo_end_to_end(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    # The session's one demo run (tests.support.demo): a copy of the project, as a user runs it.
    demo = build_demo(tmp_path_factory)
    root, db = demo.root, demo.db
    expected = bundled_versions(root / "skills")
    assert len(expected) >= 3

    output = demo.stdout + demo.stderr
    assert demo.returncode == 0, output
    assert "Traceback" not in output
    for key in expected:
        assert f"evaluating {key} ..." in demo.stdout
        # cases, trials, passed, errors (none: every bundled skill runs offline), not evaluated, pass rate
        assert re.search(rf"^{re.escape(key)}\s+\d+\s+\d+\s+\d+\s+0\s+\d+\s+\d+%$", demo.stdout, re.M), demo.stdout
    assert f"DuckDB: {db}" in demo.stdout
    # The instance lives in the project folder, not in this repository.
    assert (root / ".dagster" / "storage").is_dir()

    with connect(db) as con:
        # The README's first question, as the brief words it.
        rates = dict(con.execute("select skill_version, value from metrics "
                                 "where target='*' and metric='pass_rate'").fetchall())
        assert sorted(rates) == expected
        assert rates["calculator@1.0.0"] == pytest.approx(5 / 6)
        assert rates["calculator@1.1.0"] == pytest.approx(5 / 6)
        # The README's story: 1.1.0 learns `**` (tc-005) and breaks tc-002.
        changed = dict((t, (a, b)) for t, a, b in con.execute(
            """SELECT a.test_id, a.verdict, b.verdict FROM test_results a
               JOIN test_results b USING (eval_date, test_id, target, trial)
               WHERE a.skill_version = 'calculator@1.0.0' AND b.skill_version = 'calculator@1.1.0'
                 AND a.verdict IS DISTINCT FROM b.verdict""").fetchall())
        assert changed == {"tc-002": ("pass", "fail"), "tc-005": ("fail", "pass")}
        # One example per profile; each later version fixes one case and breaks another.
        assert rates["invoice-extractor@1.1.0"] == pytest.approx(2 / 3)
        assert rates["meeting-summarizer@1.0.0"] == rates["meeting-summarizer@1.1.0"] == pytest.approx(5 / 6)
        assert rates["slide-outline@1.0.0"] == rates["slide-outline@2.0.0"] == pytest.approx(3 / 4)
        assert rates["export-screening@1.0.0"] == pytest.approx(14 / 18)
        assert rates["export-screening@2.0.0"] == pytest.approx(15 / 18)
        flips = {
            (skill, old, new): dict((t, (a, b)) for t, a, b in con.execute(
                """SELECT a.test_id, a.verdict, b.verdict FROM test_results a
                   JOIN test_results b USING (eval_date, test_id, target, trial)
                   WHERE a.skill_version = ? AND b.skill_version = ? AND a.trial = 0
                     AND a.verdict IS DISTINCT FROM b.verdict""",
                [f"{skill}@{old}", f"{skill}@{new}"]).fetchall())
            for skill, old, new in [("invoice-extractor", "1.0.0", "1.1.0"),
                                    ("meeting-summarizer", "1.0.0", "1.1.0"),
                                    ("slide-outline", "1.0.0", "2.0.0"),
                                    ("export-screening", "1.0.0", "2.0.0")]
        }
        assert flips[("invoice-extractor", "1.0.0", "1.1.0")] == {
            "no-currency": ("fail", "pass"), "thousands-separator": ("pass", "fail")}
        assert flips[("meeting-summarizer", "1.0.0", "1.1.0")] == {
            "action-items": ("fail", "pass"), "long-retro": ("pass", "borderline")}
        assert flips[("slide-outline", "1.0.0", "2.0.0")] == {
            "pptx-001": ("pass", "borderline"), "pptx-002": ("borderline", "pass")}
        assert flips[("export-screening", "1.0.0", "2.0.0")] == {
            "bosch": ("pass", "fail"), "hisilicon-subsidiary": ("fail", "pass")}
        hat = dict(con.execute("select skill_version, value from metrics where target='*' "
                               "and metric='pass_hat_3'").fetchall())
        assert hat["export-screening@1.0.0"] < hat["export-screening@2.0.0"]
        # Every query in the README returns rows.
        for statement in readme_queries():
            assert con.execute(statement).fetchall(), statement

    # The runs went through Dagster and are in the project's instance.
    monkeypatch.setenv("DAGSTER_HOME", str(root))
    monkeypatch.chdir(root)  # dagster.yaml's storage paths are relative to the project folder
    with dg.DagsterInstance.get() as instance:
        assert sorted(instance.get_dynamic_partitions(skill_versions.name)) == expected
        runs = instance.get_runs(dg.RunsFilter(job_name="evaluate_skill_version"))
        assert sorted(r.tags["eval/skill_version"] for r in runs) == expected
        # A run whose evaluation failed a check is failed (red in the Runs list) and tagged so;
        # the others succeeded. The bundled versions that miss a gate or regress on purpose:
        failed = {r.tags["eval/skill_version"]: r.tags["eval/verdict"] for r in runs
                  if r.status == dg.DagsterRunStatus.FAILURE}
        assert failed == {"export-screening@1.0.0": "gate_failed", "support-triage@2.0.0": "gate_failed"}
        assert {r.status for r in runs if r.tags["eval/skill_version"] not in failed} == {
            dg.DagsterRunStatus.SUCCESS}
        assert "evaluation verdict: gate failed (the run is marked failed)" in proc.stdout
        assert "Stack Trace" not in output
        assert {r.tags["eval/trigger"] for r in runs} == {"demo"}

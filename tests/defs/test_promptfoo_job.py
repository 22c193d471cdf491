"""A promptfoo config in a skill folder runs end to end through the Dagster job.

The config has a ``{{var}}`` prompt, its tests in a CSV (``__expected1``,
``__expected2``, ``__description``, ``__threshold``), a ``defaultTest`` and six
assertion types (equals, starts-with, icontains, regex, contains with and
without ``not-``, javascript). The model is the local fake OpenAI server, over
real HTTP with the real client. The expected scores are written from promptfoo's
documented semantics (site/docs/configuration/expected-outputs): each
deterministic assertion scores 1 or 0, ``not-`` inverts it; the test score is
the weighted mean of its assertion scores; a test passes when every assertion
passes, or, when it sets ``threshold``, when its score reaches it; defaultTest's
assertions come first.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest

from eval_pipelines.definitions import build_definitions
from eval_pipelines.defs.partitions import skill_versions
from eval_pipelines.store.connection import connect
from tests.support.fake_openai import FakeOpenAIServer

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parents[2]
SKILL = "pf-translate@1.0.0"
ANSWERS = {
    "Translate to French: Hello": "Bonjour",
    "Translate to Spanish: Cat": "El gato",
    "Translate to German: Dog": "Der Hund ist hier",
    "Translate to Italian: Sorry": "Mi dispiace, sorry",
}
CONFIG = """\
description: Translations
prompts:
  - "Translate to {{{{language}}}}: {{{{text}}}}"
providers:
  - id: openai:chat:fake-translator
    config:
      apiBaseUrl: {base_url}
      apiKeyEnvar: OPENAI_API_KEY
      temperature: 0
defaultTest:
  assert:
    - type: not-contains
      value: sorry
    - type: javascript
      value: output.length < 30
tests: file://tests.csv
"""
CSV = """\
language,text,__expected1,__expected2,__description,__threshold
French,Hello,equals:Bonjour,starts-with:Bon,greeting,
Spanish,Cat,icontains:GATO,regex:^El \\w+$,animal,
German,Dog,equals:Hund,contains:Hund,loose answer,0.7
Italian,Sorry,contains:dispiace,,apology,
"""
# (test id) -> (passed, score, per-assertion scores), from promptfoo's rules above.
EXPECTED = {
    "test-1": ("pass", 1.0, [1, 1, 1, 1]),        # all four pass
    "test-2": ("pass", 1.0, [1, 1, 1, 1]),        # icontains ignores case; regex matches
    "test-3": ("pass", 0.75, [1, 1, 0, 1]),       # equals fails, but 3/4 = 0.75 >= threshold 0.7
    "test-4": ("fail", 2 / 3, [0, 1, 1]),         # not-contains "sorry" fails; no threshold: fail
}


def test_promptfoo_config_runs_through_the_dagster_job(tmp_path: Path, fake_openai: FakeOpenAIServer,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-promptfoo")
    skill = tmp_path / "skills" / "pf-translate" / "1.0.0"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: pf-translate\ndescription: Translates.\nversion: 1.0.0\n---\n")
    (skill / "promptfooconfig.yaml").write_text(CONFIG.format(base_url=fake_openai.base_url))
    (skill / "tests.csv").write_text(CSV)
    shutil.copy(PROJECT / "targets.yaml", tmp_path / "targets.yaml")
    fake_openai.answers = dict(ANSWERS)
    db = tmp_path / "results.duckdb"

    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(skill_versions.name, [SKILL])
        job = build_definitions(str(tmp_path), str(db)).resolve_job_def("evaluate_skill_version")
        result = job.execute_in_process(
            partition_key=dg.MultiPartitionKey({"date": "2026-11-20", "skill_version": SKILL}),
            instance=instance, raise_on_error=False,
            run_config={"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}})
    assert result.success, [e.step_failure_data.error.message for e in result.get_step_failure_events()]

    # One request per CSV row, with the rendered prompt, to the provider's model.
    assert fake_openai.request_count == 4
    assert {r["model"] for r in fake_openai.requests} == {"fake-translator"}
    assert sorted(r["messages"][-1]["content"] for r in fake_openai.requests) == sorted(ANSWERS)

    with connect(db) as con:
        results = {row[0]: row[1:] for row in con.execute(
            "SELECT test_id, verdict, score FROM test_results").fetchall()}
        grades = con.execute("SELECT test_id, assertion_index, assertion_type, score, passed FROM grades "
                             "ORDER BY test_id, assertion_index").fetchall()
        cases = {row[0] for row in con.execute("SELECT test_id FROM test_cases").fetchall()}
        pass_rate = con.execute("SELECT value FROM metrics WHERE metric = 'pass_rate' AND target = '*'"
                                ).fetchone()[0]
    assert {k: (v[0], round(v[1], 4)) for k, v in results.items()} == {
        k: (verdict, round(score, 4)) for k, (verdict, score, _) in EXPECTED.items()}
    by_test: dict[str, list[float]] = {}
    for test_id, _, _, score, passed in grades:
        by_test.setdefault(test_id, []).append(score)
        assert passed == (score >= 0.8)
    assert by_test == {k: [float(s) for s in scores] for k, (_, _, scores) in EXPECTED.items()}
    assert [g[2] for g in grades if g[0] == "test-1"] == ["contains", "javascript", "equals", "starts_with"]
    assert cases == set(EXPECTED)
    assert pass_rate == pytest.approx(0.75)

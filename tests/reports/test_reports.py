"""Reports (JSON eval_report, Markdown phase report, self-contained HTML) and the SQL views.

The fast tests build a small results database by hand (``build_widget_db``):
two versions of a skill ``widget``, the later one evaluated on two nights,
with a regression whose output holds HTML/JS, a flaky case, a model-graded
case with rubric scores, an HTTP 500 error, a slow call, a JSON Schema failure,
a case waiting for human review and one with nothing to evaluate. The slow test
runs the report command on the demo database for every bundled skill.
"""

from __future__ import annotations

import html.parser
import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import jsonschema
import pandas as pd
import pytest

from tests.support.demo import DEMO_TEST_TIMEOUT_S

from eval_pipelines.analysis.metrics import TrialResult, case_metrics, suite_metrics
from eval_pipelines.reports import files
from eval_pipelines.cli import report as cli_report
from eval_pipelines.reports.data import ReportError, grader_family, load_report
from eval_pipelines.reports.html.page import diff_rows, render_html
from eval_pipelines.reports.json_report import build_report, recommendations, report_schema, validate_report
from eval_pipelines.reports.markdown import render_markdown, render_markdown_summary
from eval_pipelines.store.views import MARKER_VIEW, VIEWS, ensure_views, install_views
from eval_pipelines.store.connection import Partition, connect, replace_partition
from eval_pipelines.analysis.versions import version_sort_key

PROJECT = Path(__file__).resolve().parents[2]
XSS = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2"></pre>'
SECRET = "sk-test-secret-value-123"


# ---- a hand-built results database ------------------------------------------------

def _grade(kind: str, score: float, reason: str, name: str | None = None, status: str = "graded",
           details: dict | None = None, passed: bool | None = None) -> dict[str, Any]:
    return {"assertion_type": kind, "assertion_name": name or kind, "score": score,
            "passed": (score >= 0.8 and status == "graded") if passed is None else passed,
            "status": status, "reason": reason, "details": details or {}}


def _trial(output: str | None, verdict: str | None, score: float | None, grades: list[dict], *,
           status: str = "graded", reason: str = "", error: str | None = None, latency: float = 120.0,
           tokens: tuple[int, int] | None = (50, 10)) -> dict[str, Any]:
    return {"output": output, "verdict": verdict, "score": score, "grades": grades, "status": status,
            "reason": reason or ("all assertions passed" if verdict == "pass" else "failed"),
            "error": error, "latency": latency, "tokens": tokens}


def _case(test_id: str, trials: list[dict], *, name: str | None = None, category: str | None = None,
          metadata: dict | None = None, expected: Any = None, criteria: str | None = None,
          input_text: str | None = None) -> dict[str, Any]:
    return {"test_id": test_id, "name": name, "category": category, "metadata": metadata or {},
            "expected": expected, "criteria": criteria, "input": input_text or f"input of {test_id}",
            "trials": trials}


def _passing(output: str = "ok") -> dict[str, Any]:
    return _trial(output, "pass", 1.0, [_grade("contains", 1.0, "contains ['ok']")])


TARGETS = [
    {"name": "gpt", "type": "openai", "model": "gpt-test", "base_url": "https://user:pw@llm.example/v1?key=abc",
     "base_url_env": "OPENAI_BASE_URL", "api_key_env": "OPENAI_API_KEY", "temperature": 0.0},
    {"name": "script", "type": "command", "command": ["python", "scripts/run.py"]},
]


def widget_cases(version: str) -> list[dict[str, Any]]:
    new = version != "1.0.0"
    schema_reason = "1 schema error(s): 'P2' is not one of ['low', 'medium', 'high']"
    return [
        _case("xss", [_trial(XSS, "fail", 0.0, [_grade("equals", 0.0, "output differs from the expected value",
                                                       name="exact", details={"expected": "safe",
                                                                              "actual": XSS})])]
              if new else [_passing("safe")], name="Escapes <b>markup</b>", category="security",
              expected="safe"),
        _case("flaky", [_passing(), _trial("nope", "fail", 0.0, [_grade("contains", 0.0, "missing ['ok']")])]
              if new else [_passing(), _passing()], category="stability"),
        _case("judge", [_trial("a fine answer", "borderline", 0.7, [
            _grade("llm_judge", 0.9, "score 0.9 >= threshold 0.8: clear and correct", name="quality",
                   details={"rubric_scores": {"accuracy": 1.0, "clarity": 0.8}, "feedback": "Clear & correct.",
                            "judge_model": "judge-test"}),
            _grade("contains", 0.0, "missing ['citation']")])], metadata={"eval_type": "regression"},
              criteria="Cites a source."),
        *([_case("slow", [_trial("ok", "pass", 1.0, [_grade("contains", 1.0, "contains ['ok']")],
                                 latency=3500.0)])] if new else [_case("old", [_passing()])]),
        _case("err", [_trial(None, "fail", 0.0, [], status="error", reason="no output: HTTP 500: upstream down",
                             error="HTTP 500: upstream down", tokens=None)] * 2, category="stability"),
        _case("human", [_trial("draft", None, None, [_grade("human", 0.0, "waiting for human ratings (0/1)",
                                                            status="pending_human", passed=False)],
                               status="pending_human", reason="waiting for human ratings")]),
        _case("none", [_trial("whatever", None, None, [], status="not_evaluated",
                              reason="no assertions or criteria to evaluate")]),
        _case("schema", [_trial('{"priority": "P2"}', "borderline", 0.67, [
            _grade("is_json", 1.0, "output is valid JSON"),
            _grade("json_schema", 0.0, schema_reason, name="shape",
                   details={"schema_errors": [{"path": "$.priority", "message": schema_reason[19:]}]})])],
              category="format"),
        _case("fixed", [_passing("42")] if new else
              [_trial("41", "fail", 0.0, [_grade("equals", 0.0, "output differs from the expected value")])],
              expected="42", category="format"),
    ]


def write_partition(con, skill: str, version: str, eval_date: str, cases: list[dict[str, Any]],  # noqa: ANN001
                    *, thresholds: dict | None = None, spec: dict | None = None, target: str = "gpt") -> None:
    partition = Partition(eval_date, f"{skill}@{version}")
    run_id = f"run-{version}-{eval_date}"
    base = {"eval_date": eval_date, "skill_version": partition.skill_version, "skill": skill, "version": version,
            "run_id": run_id, "suite": f"{skill}-suite"}
    loaded = datetime.fromisoformat(f"{eval_date}T10:00:00")
    created = datetime.fromisoformat(f"{eval_date}T10:00:42")
    replace_partition(con, "suites", partition, pd.DataFrame([base | {
        "format": "eval-yaml", "source_file": "eval.yaml", "profile": None, "package_hash": "abc123",
        "package_root": "/tmp/widget", "n_tests": len(cases), "targets": json.dumps(TARGETS),
        "trials": max(len(c["trials"]) for c in cases), "thresholds": json.dumps(thresholds or {}),
        "warnings": "[]", "spec": json.dumps(spec or {"baseline": None, "reporting": None}), "loaded_at": loaded}]))
    tc, outs, grades, results, trial_rows = [], [], [], [], []
    for case in cases:
        tc.append(base | {"test_id": case["test_id"], "name": case["name"], "category": case["category"],
                          "input": case["input"], "messages": json.dumps([{"role": "user", "content": case["input"]}]),
                          "expected": None if case["expected"] is None else json.dumps(case["expected"]),
                          "criteria": case["criteria"], "assertions": "[]", "tags": "[]",
                          "metadata": json.dumps(case["metadata"]), "source_file": "eval.yaml", "source_line": 1})
        for trial, t in enumerate(case["trials"]):
            key = {"test_id": case["test_id"], "target": target, "trial": trial}
            outs.append(base | key | {
                "output": t["output"], "error": t["error"], "latency_ms": t["latency"],
                "prompt_tokens": t["tokens"][0] if t["tokens"] else None,
                "completion_tokens": t["tokens"][1] if t["tokens"] else None,
                "cost_usd": 0.0001 if t["tokens"] else None, "cached": False, "attempts": 1, "llm_calls": 1,
                "tool_calls": 0, "trace": "[]", "created_at": created})
            for index, g in enumerate(t["grades"]):
                grades.append(base | key | g | {"assertion_index": index, "weight": 1.0, "required": "false",
                                                "details": json.dumps(g["details"])})
            results.append(base | key | {"category": case["category"], "score": t["score"],
                                         "verdict": t["verdict"], "status": t["status"], "reason": t["reason"]})
            trial_rows.append(TrialResult(case["test_id"], target, trial, t["status"], t["verdict"], t["score"],
                                          t["latency"], 0.0001 if t["tokens"] else None,
                                          *(t["tokens"] or (None, None))))
    replace_partition(con, "test_cases", partition, pd.DataFrame(tc))
    replace_partition(con, "model_outputs", partition, pd.DataFrame(outs))
    replace_partition(con, "grades", partition, pd.DataFrame(grades))
    replace_partition(con, "test_results", partition, pd.DataFrame(results))
    metric_frame = [base | {"target": t, "metric": m, "value": float(v)}
                    for t, values in suite_metrics(trial_rows).items() for m, v in values.items()]
    replace_partition(con, "metrics", partition, pd.DataFrame(metric_frame))
    per_case = [base | {"test_id": test_id, "target": t, "metric": m, "value": float(v)}
                for (t, test_id), values in case_metrics(trial_rows).items() for m, v in values.items()]
    replace_partition(con, "case_metrics", partition, pd.DataFrame(per_case))


def build_widget_db(path: Path) -> Path:
    with connect(path) as con:
        write_partition(con, "widget", "1.0.0", "2026-01-01", widget_cases("1.0.0"),
                        spec={"baseline": None, "reporting": {"format": ["json", "markdown"]}})
        for night in ("2026-01-01", "2026-01-02"):
            write_partition(con, "widget", "1.1.0", night, widget_cases("1.1.0"),
                            thresholds={"required_pass_rate": 0.8, "pass@1": 0.3})
    return path


@pytest.fixture(scope="module")
def widget_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_widget_db(tmp_path_factory.mktemp("widget") / "results.duckdb")


@pytest.fixture(scope="module")
def widget(widget_db: Path):  # noqa: ANN201
    return load_report(widget_db, "widget")


# ---- loading -------------------------------------------------------------------------

def test_load_report_picks_latest_version_date_and_baseline(widget) -> None:  # noqa: ANN001
    assert widget.run.skill_version == "widget@1.1.0"
    assert widget.run.eval_date == "2026-01-02"
    assert widget.run.run_id == "run-1.1.0-2026-01-02"
    assert widget.run.timestamp == datetime(2026, 1, 2, 10, 0, 0)
    assert widget.run.duration_seconds == pytest.approx(42.0)
    assert widget.baseline is not None and widget.baseline.skill_version == "widget@1.0.0"
    changes = {c.test_id: c.change for c in widget.cases if c.trial == 0}
    assert changes["xss"] == "now_failing" and changes["fixed"] == "now_passing" and changes["slow"] == "new"
    assert changes["judge"] == "same" and widget.removed == ["old"]
    assert [c.change for c in widget.cases if c.test_id == "flaky"] == ["same", "now_failing"]
    assert {c.test_id for c in widget.cases if c.flaky} == {"flaky"}
    categories = {c.test_id: c.category for c in widget.cases}
    assert categories["judge"] == "regression"  # metadata eval_type
    assert categories["slow"] == "uncategorised"
    assert [p.version for p in widget.version_history] == ["1.0.0", "1.1.0"]
    assert [p.eval_date for p in widget.date_history] == ["2026-01-01", "2026-01-02"]
    assert widget.version_history[1].is_current and widget.version_history[0].is_baseline


def test_load_report_explicit_choices(widget_db: Path) -> None:
    run_only = load_report(widget_db, "widget", against="none")
    assert run_only.baseline is None and all(c.change is None for c in run_only.cases)
    first = load_report(widget_db, "widget", version="1.0.0")
    assert first.baseline is None  # nothing earlier
    nightly = load_report(widget_db, "widget", against="1.1.0")  # same version, previous night
    assert nightly.baseline is not None and nightly.baseline.eval_date == "2026-01-01"
    assert {c.change for c in nightly.cases} == {"same"}
    older = load_report(widget_db, "widget", version="widget@1.1.0", eval_date="2026-01-01", against="v1.0.0")
    assert older.run.eval_date == "2026-01-01" and older.baseline.version == "1.0.0"


@pytest.mark.parametrize("kwargs, message", [
    ({"skill": "nope"}, "no results for skill 'nope'"),
    ({"skill": "widget", "version": "9.9.9"}, "no results for version '9.9.9' of skill 'widget'"),
    ({"skill": "widget", "eval_date": "2020-01-01"}, "no results for widget@1.1.0 on 2020-01-01"),
    ({"skill": "widget", "against": "0.1.0"}, "no results for baseline version '0.1.0'"),
    ({"skill": "widget", "version": "1.0.0", "against": "1.0.0"}, "no earlier evaluation"),
])
def test_load_report_errors_are_one_line(widget_db: Path, kwargs: dict, message: str) -> None:
    with pytest.raises(ReportError) as info:
        load_report(widget_db, **kwargs)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_missing_database(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="no results database"):
        load_report(tmp_path / "missing.duckdb", "widget")
    assert not (tmp_path / "missing.duckdb").exists()


def test_grader_families() -> None:
    assert [grader_family(t) for t in ("llm_judge", "rubrics", "model", "semantic_sim", "agent_judge")] == ["model"] * 5
    assert grader_family("human") == "human"
    assert grader_family("json_schema") == grader_family("equals") == "code"


# ---- JSON ----------------------------------------------------------------------------

def test_json_report_matches_the_schema_and_seed_structure(widget) -> None:  # noqa: ANN001
    report = json.loads(files.renderer("json")(widget))
    validate_report(report)
    r = report["eval_report"]
    assert set(r) >= {"metadata", "summary", "metrics", "failures", "recommendations"}
    meta = r["metadata"]
    assert meta["run_id"] == "run-1.1.0-2026-01-02" and meta["timestamp"] == "2026-01-02T10:00:00Z"
    assert meta["duration_seconds"] == 42.0
    assert {t["name"] for t in meta["environment"]["targets"]} == {"gpt"}  # only the targets that ran
    assert meta["environment"]["targets"][0]["base_url"] == "https://llm.example/v1"
    s = r["summary"]
    # 11 evals: 3 pass (flaky#0, slow, fixed), 6 counted non-passes, 2 skipped.
    assert (s["total_evals"], s["passed"], s["failed"], s["skipped"]) == (11, 3, 6, 2)
    assert s["pass_rate"] == pytest.approx(3 / 9, abs=1e-6)
    assert r["metrics"]["pass_rate"] == pytest.approx(s["pass_rate"], abs=1e-6)
    assert set(s["by_category"]) == {"security", "stability", "regression", "uncategorised", "format"}
    assert s["by_category"]["stability"] == {"total": 4, "passed": 1, "failed": 3, "skipped": 0, "pass_rate": 0.25}
    assert set(s["by_grader"]) == {"code", "model", "human"}
    assert s["by_grader"]["model"] == {"total": 1, "passed": 1, "failed": 0, "pending": 0, "not_evaluated": 0}
    assert s["by_grader"]["human"]["pending"] == 1
    assert {"pass_at_1", "pass_hat_1"} <= set(r["metrics"])
    failures = {f["eval_id"] for f in r["failures"]}
    assert failures == {"xss", "flaky", "judge", "err", "schema"}
    xss = next(f for f in r["failures"] if f["eval_id"] == "xss")
    assert xss["details"]["actual"] == XSS and xss["details"]["baseline"]["verdict"] == "pass"
    assert xss["details"]["assertions"][0]["name"] == "exact"
    # Trials that flipped are described, not labelled: no regression stage ran for this store.
    assert r["comparison"]["now_failing"] == ["xss", "flaky"] and r["comparison"]["now_passing"] == ["fixed"]
    assert r["comparison"]["regressed"] == []
    assert not any("labelled regressed against" in rec for rec in r["recommendations"])
    assert ("Not labelled regressed (within chance on their own): 2 trials passing in 1.0.0 now fail: "
            "xss (pass → fail), flaky (pass → fail)") in r["recommendations"]
    assert r["comparison"]["new"] == ["slow"] and r["comparison"]["removed"] == ["old"]
    assert r["comparison"]["pass_rate"]["baseline"] == pytest.approx(4 / 9)
    assert r["gates"] == [
        {"threshold": "pass@1", "metric": "pass_at_1", "value": pytest.approx(r["metrics"]["pass_at_1"]),
         "minimum": 0.3, "passed": True},
        {"threshold": "required_pass_rate", "metric": "pass_rate", "value": pytest.approx(3 / 9),
         "minimum": 0.8, "passed": False},
    ]


def test_schema_is_a_valid_draft_2020_12_schema_and_rejects_bad_reports(widget) -> None:  # noqa: ANN001
    schema = report_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    report = json.loads(files.renderer("json")(widget))
    broken = json.loads(json.dumps(report))
    del broken["eval_report"]["summary"]["by_grader"]
    with pytest.raises(jsonschema.ValidationError):
        validate_report(broken)
    broken = json.loads(json.dumps(report))
    broken["eval_report"]["metadata"]["environment"]["api_key"] = "x"
    with pytest.raises(jsonschema.ValidationError):
        validate_report(broken)


def test_recommendations_are_derived_from_the_failures(widget) -> None:  # noqa: ANN001
    recs = recommendations(widget)
    assert recs == recommendations(widget)  # deterministic
    text = "\n".join(recs)
    assert recs[0] == "Check target availability: 2 calls to `gpt` failed with HTTP 500 (err)"
    assert "Raise pass rate from 0.33 to at least 0.8 (threshold `required_pass_rate`)" in recs
    assert ("Not labelled regressed (within chance on their own): 2 trials passing in 1.0.0 now fail: "
            "xss (pass → fail), flaky (pass → fail)") in recs
    assert not any("labelled regressed against" in r for r in recs)
    # A case the regression stage labelled is named as a regression, and only the other flip as a trial.
    labelled = replace(widget, significance=[{"target": "gpt", "labelled": [("xss", 0.03)]}])
    recs = recommendations(labelled)
    assert "Investigate 1 case labelled regressed against 1.0.0: xss" in recs
    assert ("Not labelled regressed (within chance on their own): 1 trial passing in 1.0.0 now fails: "
            "flaky (pass → fail)") in recs
    assert build_report(labelled)["eval_report"]["comparison"]["regressed"] == ["xss"]
    assert ("Fix `json_schema` assertion `shape` failing in 1 case (schema): "
            "'P2' is not one of ['low', 'medium', 'high']") in recs
    assert "Fix `contains` failures in 2 cases (flaky, judge)" in text
    assert "Investigate latency: 1 case over 2000 ms (slowest: slow at 3500 ms)" in recs
    assert "Stabilise 1 flaky case whose trials disagree (flaky)" in recs
    assert "Add assertions or criteria to 1 case that is not evaluated (none)" in recs
    assert any(r.startswith("Collect human ratings for 1 output") for r in recs)
    # Nothing to recommend when everything passed.
    passing = load_report_like(widget, keep={"slow"})
    assert [r for r in recommendations(passing) if not r.startswith(("Raise", "Investigate latency"))] == []


def load_report_like(data, keep: set[str]):  # noqa: ANN001, ANN201
    """A copy of ``data`` with only the ``keep`` cases and no thresholds or baseline."""
    from dataclasses import replace

    return replace(data, cases=[c for c in data.cases if c.test_id in keep], baseline=None,
                   run=replace(data.run, thresholds={}))


def test_expected_names_the_assertion_value_when_the_case_has_no_expected_output(widget) -> None:  # noqa: ANN001
    from eval_pipelines.reports.json_report import expected_text

    xss = next(c for c in widget.cases if c.test_id == "xss")
    # `equals` with its own `value`: the value, not "exact (equals) passes".
    assert expected_text(replace(xss, expected=None)) == "safe"
    judge = next(c for c in widget.cases if c.test_id == "judge")
    assert expected_text(replace(judge, criteria=None)) == "contains (contains) passes"


def test_no_secret_reaches_a_report(widget_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    data = load_report(widget_db, "widget")
    for fmt in ("json", "md", "html"):
        text = files.renderer(fmt)(data)
        assert SECRET not in text
        assert "user:pw" not in text and "key=abc" not in text and "api_key_env" not in text


# ---- Markdown --------------------------------------------------------------------------

def test_markdown_phase_completion_layout(widget) -> None:  # noqa: ANN001
    md = render_markdown(widget)
    assert "## Phase Completion Report" in md and "### Eval Results" in md
    assert "| Metric | Value | Threshold | Status | 1.0.0 |" in md
    assert "| pass rate | 0.33 | 0.8 | FAIL | 0.44 |" in md
    assert "| pass@1 | 0.36 | 0.3 | PASS | 0.43 |" in md  # pass@1 averages over cases
    assert "#### Stability Evals (1/4 passed)" in md
    assert "#### Uncategorised Evals (1/1 passed, 2 skipped)" in md
    lines = md.splitlines()
    i = lines.index(next(line for line in lines if line.startswith("- [ ] xss \\[trial 0\\]")))
    assert "(FAILED; now failing: pass in 1.0.0)" in lines[i]
    assert "Escapes \\<b\\>markup\\</b\\>" in lines[i]  # markup in names is escaped
    assert lines[i + 1] == "  - Expected: `safe`"
    assert lines[i + 2].startswith("  - Actual: `<script>")  # a code span: shown literally
    assert lines[i + 3].startswith("  - Why: exact: output differs")
    assert any(line.startswith("- [x] fixed \\[trial 0\\]") and "now passing: fail in 1.0.0" in line for line in lines)
    assert "- [ ] none \\[trial 0\\] (NOT EVALUATED)" in md
    assert "- [ ] human \\[trial 0\\] (PENDING HUMAN REVIEW)" in md
    assert "### Changes since 1.0.0" in md
    assert "| xss \\[trial 0\\] | pass | fail | now failing |" in md  # markup in labels is escaped
    assert "| slow \\[trial 0\\] | — | pass | new |" in md and "| old | (present) | — | removed |" in md
    assert "### Recommendations" in md and "\n1. Check target availability" in md
    summary = render_markdown_summary(widget)
    assert "| Metric | Value | Threshold | Status |" in summary and "- [" not in summary
    assert ("Labelled regressed (q <= case_fdr): none; trials now failing: xss \\[trial 0\\], flaky \\[trial 1\\]; "
            "now passing: fixed \\[trial 0\\]") in summary


# ---- HTML --------------------------------------------------------------------------------

class _Collector(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False if tag == "script" else self._in_script

    def handle_data(self, data: str) -> None:
        (self.scripts if self._in_script else self.text).append(data)


def test_html_is_self_contained_and_escapes_everything(widget) -> None:  # noqa: ANN001
    page = render_html(widget)
    parsed = _Collector()
    parsed.feed(page)
    tags = [t for t, _ in parsed.tags]
    assert tags.count("script") == 1 and "img" not in tags  # the payload stayed text
    assert len(parsed.scripts) == 1 and "__xss" not in parsed.scripts[0]
    assert XSS in "".join(parsed.text)  # shown as text, verbatim
    assert "&lt;script&gt;window.__xss = 1&lt;/script&gt;" in page
    # No external asset of any kind.
    for _, attrs in parsed.tags:
        for name in ("src", "href"):
            value = attrs.get(name)
            assert value is None or value.startswith(("#", "data:")), (name, value)
    assert re.findall(r"https?://[^\s\"'<]+", page) == ["http://www.w3.org/2000/svg"] * page.count("<svg ")
    assert "@import" not in page and "url(" not in page
    assert "Content-Security-Policy" in page


def test_html_has_table_filters_chart_details_and_diff(widget) -> None:  # noqa: ANN001
    page = render_html(widget)
    assert 'id="results-table"' in page and page.count('<tbody class="case"') == len(widget.cases) == 11
    for key in ("id", "category", "target", "verdict", "score", "latency", "change"):
        assert f'data-key="{key}"' in page
    for name in ("filter-verdict", "filter-category", "filter-target", "filter-change"):
        assert f'id="{name}"' in page
    assert 'id="pass-rate-chart"' in page and page.count('<g class="bar ') == 2
    assert 'id="pass-rate-by-date-chart"' in page  # the version ran on two nights
    assert 'class="diff-block now_failing" id="diff-xss-trial-0"' in page and 'class="diff-block now_passing"' in page
    assert "rubric scores" in page and "<td>accuracy</td><td>1.00</td>" in page
    assert "Clear &amp; correct." in page  # the judge's feedback, escaped
    assert "score 0.9 &gt;= threshold 0.8: clear and correct" in page


def test_diff_rows_mark_words_and_escape() -> None:
    assert diff_rows("27", "27.0") == [("27", "27<ins>.0</ins>", "chg")]
    rows = diff_rows("a\n<b>\nc", "a\nc\nd")
    assert rows[0] == ("a", "a", "same")
    assert ("<del>&lt;b&gt;</del>", "", "del") in rows and ("", "<ins>d</ins>", "add") in rows


# ---- views -----------------------------------------------------------------------------

def test_views_install_and_agree_with_the_report(widget_db: Path, widget) -> None:  # noqa: ANN001
    with connect(widget_db) as con:
        assert install_views(con) == list(VIEWS)
        install_views(con)  # idempotent
        flips = dict(con.execute("SELECT test_id || '#' || trial, change FROM version_comparison "
                                 "WHERE skill_version = 'widget@1.1.0'").fetchall())
        latest = con.execute("SELECT DISTINCT eval_date FROM latest_results WHERE skill_version = 'widget@1.1.0'"
                             ).fetchall()
        failing = {r[0] for r in con.execute("SELECT DISTINCT test_id FROM failures "
                                             "WHERE skill_version = 'widget@1.1.0' AND eval_date = '2026-01-02'"
                                             ).fetchall()}
        flaky = con.execute("SELECT test_id, trials, passes FROM flaky_cases WHERE eval_date = '2026-01-02'"
                            ).fetchall()
        history = con.execute("SELECT eval_date, delta FROM metric_history WHERE skill_version = 'widget@1.1.0' "
                              "AND target = '*' AND metric = 'pass_rate' ORDER BY eval_date").fetchall()
    assert flips == {f"{c.test_id}#{c.trial}": c.change for c in widget.cases} | {"old#0": "removed"}
    assert latest == [("2026-01-02",)]
    assert failing == {c.test_id for c in widget.cases if c.failed}
    assert flaky == [("flaky", 2, 1)]
    assert history == [("2026-01-01", None), ("2026-01-02", 0.0)]


def test_ensure_views_installs_once(tmp_path: Path) -> None:
    import duckdb

    from eval_pipelines.store.connection import schema_sql

    with duckdb.connect(str(tmp_path / "fresh.duckdb")) as con:  # not the store's connect: it may install them
        con.execute(schema_sql())
        assert ensure_views(con) is True
        assert ensure_views(con) is False  # already this views.sql
        con.execute(f"CREATE OR REPLACE VIEW {MARKER_VIEW} AS SELECT 'old' AS views_sha256")
        assert ensure_views(con) is True  # views.sql changed: reinstalled
        names = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    assert set(VIEWS) | {MARKER_VIEW} <= names


def test_ensure_views_from_many_connections_at_once(tmp_path: Path) -> None:
    import threading

    db = tmp_path / "busy.duckdb"
    with connect(db):
        pass  # the schema first: concurrent CREATE TABLE is the store's business
    errors: list[str] = []

    def work() -> None:
        try:
            for _ in range(3):
                with connect(db) as con:
                    ensure_views(con)
                    con.execute("SELECT count(*) FROM latest_results").fetchall()
        except Exception as exc:  # noqa: BLE001
            errors.append(repr(exc))

    threads = [threading.Thread(target=work) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_version_order_view_matches_python_semver(tmp_path: Path) -> None:
    versions = ["1.10.0", "1.9.0", "1.0.0-rc.1", "1.0.0", "v2", "banana", "0.9", "apple", "1.0.0+build.5x"]
    rows = [{"eval_date": "2026-01-01", "skill_version": f"s@{v}", "skill": "s", "version": v, "run_id": "r",
             "suite": "s", "test_id": "t", "target": "x", "trial": 0, "category": None, "score": 1.0,
             "verdict": "pass", "status": "graded", "reason": ""} for v in versions]
    with connect(tmp_path / "order.duckdb") as con:
        for row in rows:
            replace_partition(con, "test_results", Partition(row["eval_date"], row["skill_version"]),
                              pd.DataFrame([row]))
        install_views(con)
        ordered = [r[0] for r in con.execute("SELECT version FROM version_order ORDER BY version_rank").fetchall()]
        baselines = dict(con.execute("SELECT version, baseline_version FROM version_baselines").fetchall())
    assert ordered == sorted(versions, key=version_sort_key)
    assert baselines["1.10.0"] == "1.9.0" and baselines["1.0.0"] == "1.0.0-rc.1"


# ---- command line and materialisation ------------------------------------------------------

def test_report_command_writes_each_format(widget_db: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert cli_report.main(["--root", str(tmp_path), "report", "--skill", "widget", "--db", str(widget_db)]) == 0
    written = sorted(p.name for p in (tmp_path / "reports").iterdir())
    assert written == ["widget-1.1.0.html", "widget-1.1.0.json", "widget-1.1.0.md"]
    validate_report(json.loads((tmp_path / "reports" / "widget-1.1.0.json").read_text()))
    for fmt in ("json", "md", "html"):
        target = out / f"r.{fmt}"
        assert cli_report.main(["report", "--skill", "widget", "--db", str(widget_db), "--format", fmt,
                                "--out", str(target), "--against", "none"]) == 0
        assert target.stat().st_size > 500
    assert "1.0.0" not in json.loads((out / "r.json").read_text())["eval_report"]["metadata"]["version"]
    capsys.readouterr()
    assert cli_report.main(["report", "--skill", "widget", "--db", str(widget_db), "--format", "md",
                            "--out", "-", "--version", "1.0.0"]) == 0
    assert capsys.readouterr().out.startswith("# Eval report: widget 1.0.0")
    assert cli_report.main(["--root", str(tmp_path), "report", "--skill", "widget", "--db", str(widget_db),
                            "--against", "1.0.0", "--format", "json"]) == 0
    assert (tmp_path / "reports" / "widget-1.1.0-vs-1.0.0.json").is_file()


@pytest.mark.parametrize("args, message", [
    (["--skill", "nope"], "error: no results for skill 'nope'"),
    (["--skill", "widget", "--version", "3.0.0"], "error: no results for version '3.0.0' of skill 'widget'"),
    (["--skill", "widget", "--date", "1999-01-01"], "error: no results for widget@1.1.0 on 1999-01-01"),
])
def test_report_command_invalid_input_exits_2(widget_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              args: list[str], message: str) -> None:
    assert cli_report.main(["--root", str(tmp_path), "report", "--db", str(widget_db), *args]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(message) and captured.err.count("\n") == 1
    assert "Traceback" not in captured.out + captured.err
    assert not (tmp_path / "reports").exists()


def test_write_reports_for_a_materialisation(widget_db: Path, tmp_path: Path) -> None:
    written = files.write_reports(widget_db, "widget@1.1.0", "2026-01-02", tmp_path / "r")
    assert sorted(written) == ["html", "json", "md"]
    assert all(p.is_file() and p.parent == tmp_path / "r" for p in written.values())
    # The JSON file is written as it is encoded (issue 33), in small groups here: render_json's text.
    from eval_pipelines.reports.json_report import render_json

    data = load_report(widget_db, "widget", version="1.1.0", eval_date="2026-01-02")
    assert written["json"].read_text(encoding="utf-8") == render_json(data)
    with (tmp_path / "small.json").open("w", encoding="utf-8") as file:
        files.write_json(data, file, chunks_per_write=3)
    assert (tmp_path / "small.json").read_text(encoding="utf-8") == render_json(data)
    # The suite's `reporting.format` (seed 003) picks the formats.
    older = files.write_reports(widget_db, "widget@1.0.0", "2026-01-01", tmp_path / "r")
    assert sorted(older) == ["json", "md"]
    with pytest.raises(ReportError):
        files.write_reports(widget_db, "widget@1.1.0", "2030-01-01", tmp_path / "r")


def test_partition_reports_and_their_dagster_metadata(widget_db: Path, tmp_path: Path) -> None:
    import dagster as dg

    from eval_pipelines.defs.metadata import as_metadata
    from eval_pipelines.pipeline.stages import FilePath, Markdown
    from eval_pipelines.store.partition import Partition

    written, summary = files.write_partition_reports(widget_db, Partition("2026-01-02", "widget@1.1.0"), tmp_path)
    assert set(written) == {"json", "md", "html"} and all(p.is_file() for p in written.values())
    meta = as_metadata({f"report_{f}": FilePath(str(p)) for f, p in written.items()}
                       | {"report_summary": Markdown(summary)})
    assert isinstance(meta["report_summary"], dg.MarkdownMetadataValue)
    assert "| Metric | Value | Threshold | Status |" in meta["report_summary"].md_str
    assert Path(meta["report_html"].path).is_file()


def test_schema_and_views_are_package_data() -> None:
    from importlib import resources

    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11+")

    assert resources.files("eval_pipelines.reports").joinpath("report.schema.json").is_file()
    assert resources.files("eval_pipelines.store").joinpath("views.sql").is_file()
    data = tomllib.loads((PROJECT / "pyproject.toml").read_text())
    patterns = data["tool"]["setuptools"].get("package-data", {}).get("eval_pipelines", [])
    assert {"reports/*.json", "store/*.sql"} <= set(patterns)


# ---- the demo (slow) -----------------------------------------------------------------------

def report_command() -> list[str]:
    """``eval-pipelines report`` once the main CLI registers it, else this package's own entry point."""
    from eval_pipelines.cli import build_parser

    parser = build_parser()
    registered = any(getattr(a, "choices", None) and "report" in a.choices for a in parser._actions)  # noqa: SLF001
    return [sys.executable, "-m", "eval_pipelines.cli" if registered else "eval_pipelines.cli.report"]


@pytest.mark.slow
@pytest.mark.timeout(DEMO_TEST_TIMEOUT_S)
def test_demo_reports_for_every_skill(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    from tests.support.demo import build_demo_database

    root, db = build_demo_database(tmp_path_factory)
    env = {k: v for k, v in os.environ.items()
           if k == "EVAL_PIPELINES_START_DATE" or not k.startswith(("EVAL_PIPELINES_", "OPENAI_"))}
    with connect(db) as con:
        skills = [r[0] for r in con.execute("SELECT DISTINCT skill FROM test_results ORDER BY skill").fetchall()]
    assert len(skills) >= 3
    # Every report in this process (24 interpreter starts cost two minutes of the suite); the
    # command-line path itself is the subprocess at the end.
    from eval_pipelines.cli.app import main

    for skill in skills:
        for fmt in ("json", "md", "html"):
            out = tmp_path / f"{skill}.{fmt}"
            code = main(["--root", str(root), "report", "--skill", skill, "--format", fmt, "--db", str(db),
                         "--out", str(out)])
            assert code == 0, (skill, fmt)
            assert out.stat().st_size > 300
        validate_report(json.loads((tmp_path / f"{skill}.json").read_text()))
    calc = json.loads((tmp_path / "calculator.json").read_text())["eval_report"]
    assert calc["metadata"]["version"] == "1.1.0"
    assert calc["comparison"]["baseline_version"] == "1.0.0"
    assert (calc["comparison"]["now_failing"], calc["comparison"]["now_passing"]) == (["tc-002"], ["tc-005"])
    assert calc["comparison"]["regressed"] == []  # one trial a side: a flip is never labelled
    triage = json.loads((tmp_path / "support-triage.json").read_text())["eval_report"]
    assert any("`json_schema`" in r and "'P2' is not one of" in r for r in triage["recommendations"])
    invoice = json.loads((tmp_path / "invoice-extractor.json").read_text())["eval_report"]
    assert invoice["summary"]["skipped"] == 1
    assert "- [ ] tc-002: Complex expression (FAILED; now failing: pass in 1.0.0)" in \
        (tmp_path / "calculator.md").read_text()
    proc = subprocess.run([*report_command(), "report", "--skill", "no-such-skill", "--db", str(db)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().startswith("error: no results for skill 'no-such-skill'")

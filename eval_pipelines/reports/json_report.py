"""The ``eval_report`` of seed 003 (Phase 4: Report) as JSON, and the summaries,
failures and recommendations the Markdown and HTML reports share.

Counting (the same as the ``metrics`` table): every row of ``test_results``
(case x target x trial) is one eval. ``passed`` has verdict pass; ``failed``
is every other graded or errored eval (fail, borderline, error); ``skipped``
is not evaluated or waiting for human review. ``pass_rate`` = passed /
(passed + failed), ``null`` when nothing was counted.

The JSON validates against ``report.schema.json`` (draft 2020-12), shipped in this package.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from importlib import resources
from typing import Any, Iterable

from eval_pipelines.analysis.gates import failed_thresholds, metric_for_threshold
from eval_pipelines.reports.blind import blind_json
from eval_pipelines.reports.comparison import labelled_regressed
from eval_pipelines.reports.configurations import json_block as configurations_json
from eval_pipelines.reports.data import CaseResult, HistoryPoint, ReportData, RunInfo, once_per_report
from eval_pipelines.reports.triggers import triggers_json

SCHEMA_VERSION = "1.0"
DEFAULT_LATENCY_LIMIT_MS = 2000.0
LATENCY_THRESHOLD_KEYS = ("max_latency_ms", "latency_ms", "latency_limit_ms")  # read as a per-call limit (ms)
ID_LIST_LIMIT = 5


# ---- small helpers shared by the renderers ------------------------------------

def short(text: Any, limit: int = 200) -> str:
    """One line, at most ``limit`` characters."""
    if text is None:
        return ""
    if not isinstance(text, str):
        text = json.dumps(text, ensure_ascii=False, sort_keys=True)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def id_list(ids: Iterable[str], limit: int = ID_LIST_LIMIT) -> str:
    unique = list(dict.fromkeys(ids))
    shown = ", ".join(unique[:limit])
    return shown + (f" and {len(unique) - limit} more" if len(unique) > limit else "")


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def display_metric(name: str) -> str:
    if match := re.fullmatch(r"pass_(at|hat)_(\d+)", name):
        return f"pass{'@' if match.group(1) == 'at' else '^'}{match.group(2)}"
    if name == "cost_usd":
        return "cost"
    if name.endswith("_ms"):
        name = name[:-3]
    return name.replace("_", " ")


def format_value(metric: str, value: float | None) -> str:
    if value is None:
        return "n/a"
    if metric.endswith("_ms"):
        return f"{value:.0f} ms"
    if metric == "cost_usd":
        return f"${value:.4f}"
    if float(value).is_integer() and metric not in ("pass_rate", "mean_score") and not metric.startswith("pass_"):
        return str(int(value))
    return f"{value:.2f}"


def timestamp(run: RunInfo) -> str | None:
    return run.timestamp.strftime("%Y-%m-%dT%H:%M:%SZ") if run.timestamp else None


def case_label(case: CaseResult, data: ReportData) -> str:
    """``tc-001`` or, when the run has several targets or trials, ``tc-001 [target, trial 2]``."""
    several_targets, several_trials = data.label_shape()
    extra = []
    if several_targets:
        extra.append(case.target)
    if several_trials:
        extra.append(f"trial {case.trial}")
    return case.test_id + (f" [{', '.join(extra)}]" if extra else "")


def expected_text(case: CaseResult) -> str:
    """What the case expected, in words: the expected output, criteria, the assertions' values or checks."""
    if case.expected is not None:
        return short(case.expected)
    if case.criteria:
        return short(case.criteria)
    checks = case.failing_grades or case.grades  # an assertion's own value (`equals` `value`) if it has one
    return "; ".join(short(g.details["expected"]) if "expected" in g.details else f"{g.name} ({g.type}) passes"
                     for g in checks) or "(nothing declared)"


def actual_text(case: CaseResult) -> str:
    if case.error is not None:
        return f"error: {short(case.error)}"
    if case.output is None:
        return "(no output)"
    return short(case.output) if case.output.strip() else "(empty output)"


def failure_reason(case: CaseResult) -> str:
    failing = case.failing_grades
    if case.status == "error" and case.error is not None:
        return short(case.reason, 300)
    if failing:
        return short("; ".join(f"{g.name}: {g.reason}" for g in failing), 300)
    return short(case.reason, 300)


# ---- summary -----------------------------------------------------------------

def _counts(cases: list[CaseResult]) -> dict[str, Any]:
    passed = sum(c.passed for c in cases if c.counted)
    failed = sum(c.failed for c in cases)
    skipped = sum(not c.counted for c in cases)
    return {
        "total": len(cases), "passed": passed, "failed": failed, "skipped": skipped,
        "pass_rate": round(passed / (passed + failed), 6) if passed + failed else None,
    }


@once_per_report  # every renderer shows it (five times a run): read-only
def summary(data: ReportData) -> dict[str, Any]:
    cases = data.cases
    overall = _counts(cases)
    by_category: dict[str, list[CaseResult]] = defaultdict(list)
    by_target: dict[str, list[CaseResult]] = defaultdict(list)
    for case in cases:
        by_category[case.category].append(case)
        by_target[case.target].append(case)
    by_grader: dict[str, dict[str, int]] = {}
    for family in ("code", "model", "human"):
        grades = [g for c in cases for g in c.grades if g.family == family]
        if not grades:
            continue
        counted = [g for g in grades if g.status in ("graded", "error")]
        by_grader[family] = {
            "total": len(counted), "passed": sum(g.passed for g in counted),
            "failed": sum(not g.passed for g in counted),
            "pending": sum(g.status == "pending_human" for g in grades),
            "not_evaluated": sum(g.status == "not_evaluated" for g in grades),
        }
    return {
        "total_evals": overall["total"],
        "passed": overall["passed"],
        "failed": overall["failed"],
        "skipped": overall["skipped"],
        "pass_rate": overall["pass_rate"],
        "cases": len({c.test_id for c in cases}),
        "borderline": sum(c.verdict == "borderline" and c.status == "graded" for c in cases),
        "errors": sum(c.status == "error" for c in cases),
        "not_evaluated": sum(c.status == "not_evaluated" for c in cases),
        "pending_human": sum(c.status == "pending_human" for c in cases),
        "by_category": {k: _counts(v) for k, v in sorted(by_category.items())},
        "by_grader": by_grader,
        "by_target": {k: _counts(v) for k, v in sorted(by_target.items())},
    }


def gate_rows(data: ReportData) -> list[dict[str, Any]]:
    """The suite's thresholds against this run's metrics."""
    missed = {name for name, _, _ in failed_thresholds(data.run.thresholds, data.overall)}
    rows = []
    for name, minimum in sorted(data.run.thresholds.items()):
        metric = metric_for_threshold(name)
        value = data.overall.get(metric)
        rows.append({"threshold": name, "metric": metric, "value": value, "minimum": minimum,
                     "passed": name not in missed})
    return rows


def headline_metrics(data: ReportData) -> list[str]:
    """The metrics every report shows: pass rate, mean score, pass@k and pass^k for k = 1 and the largest k."""
    ks = sorted(int(m.rsplit("_", 1)[1]) for m in data.overall if re.fullmatch(r"pass_at_\d+", m))
    names = ["pass_rate", "expectation_pass_rate", "mean_score"]  # the second: evals.json only
    for k in dict.fromkeys([1, ks[-1]] if ks else []):
        names += [f"pass_at_{k}", f"pass_hat_{k}"]
    names += ["latency_p95_ms", "cost_usd"]
    return [n for n in names if n in data.overall]


def metric_table(data: ReportData) -> list[dict[str, Any]]:
    """Rows of the metric / value / threshold / status table (gates first)."""
    rows = []
    seen = set()
    for gate in gate_rows(data):
        seen.add(gate["metric"])
        rows.append({"metric": gate["metric"], "label": display_metric(gate["metric"]), "value": gate["value"],
                     "threshold": gate["minimum"], "status": "PASS" if gate["passed"] else "FAIL",
                     "baseline": data.baseline_metrics.get(gate["metric"]) if data.compared else None})
    for name in headline_metrics(data):
        if name in seen:
            continue
        rows.append({"metric": name, "label": display_metric(name), "value": data.overall.get(name),
                     "threshold": None, "status": None,
                     "baseline": data.baseline_metrics.get(name) if data.compared else None})
    return rows


# ---- failures and recommendations ---------------------------------------------

def _grade_json(grade) -> dict[str, Any]:  # noqa: ANN001
    return {"type": grade.type, "name": grade.name, "grader": grade.family, "score": grade.score,
            "passed": grade.passed, "status": grade.status, "reason": grade.reason, "details": grade.details}


def failures(data: ReportData) -> list[dict[str, Any]]:
    out = []
    for case in data.cases:
        if not case.failed:
            continue
        details: dict[str, Any] = {
            "target": case.target, "trial": case.trial, "category": case.category,
            "verdict": case.verdict, "status": case.status, "score": case.score,
            "input": case.input, "expected": case.expected, "criteria": case.criteria,
            "actual": case.output, "error": case.error, "latency_ms": case.latency_ms,
            "assertions": [_grade_json(g) for g in case.failing_grades], "failed_expectations": case.failed_expectations,
        }
        if case.change is not None:
            details["change"] = case.change
        if case.baseline is not None:
            details["baseline"] = {"version": case.baseline.version, "verdict": case.baseline.verdict,
                                   "status": case.baseline.status, "score": case.baseline.score,
                                   "output": case.baseline.output}
        out.append({"eval_id": case.test_id, "name": case.name or case.test_id,
                    "reason": failure_reason(case), "details": details if include_details(data) else {}})
    return out


def _error_kind(error: str) -> str:
    if match := re.search(r"\bHTTP\s*(\d{3})\b|\bstatus(?: code)?\s*(\d{3})\b", error, re.I):
        return f"HTTP {match.group(1) or match.group(2)}"
    if re.search(r"time(d)? ?out", error, re.I):
        return "a timeout"
    if match := re.search(r"exit(?:ed with)? (?:code|status) (-?\d+)", error, re.I):
        return f"exit code {match.group(1)}"
    return f"'{short(error.splitlines()[0] if error.strip() else error, 80)}'"


def latency_limit(data: ReportData) -> float:
    for key in LATENCY_THRESHOLD_KEYS:
        if key in data.run.thresholds:
            return float(data.run.thresholds[key])
    return DEFAULT_LATENCY_LIMIT_MS


def recommendations(data: ReportData) -> list[str]:
    """Actions derived from this run's failures, most urgent first. Deterministic: the same data
    gives the same list."""
    recs: list[str] = []
    cases = data.cases

    # 1. Calls that produced no output.
    errors: dict[tuple[str, str], list[CaseResult]] = defaultdict(list)
    for case in cases:
        if case.error is not None:
            errors[(case.target, _error_kind(case.error))].append(case)
    for (target, kind), group in sorted(errors.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        recs.append(f"Check target availability: {plural(len(group), 'call')} to `{target}` failed with "
                    f"{kind} ({id_list(c.test_id for c in group)})")

    # 2. Graders that could not grade.
    grader_errors: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for case in cases:
        for grade in case.grades:
            if grade.status == "error" and case.error is None:
                grader_errors[(grade.type, grade.name, short(grade.reason, 120))].append(case.test_id)
    for (kind, name, reason), ids in sorted(grader_errors.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        label = f"`{kind}`" if name == kind else f"`{kind}` assertion `{name}`"
        recs.append(f"Fix grader errors: {label} could not grade {plural(len(set(ids)), 'case')}: "
                    f"{reason} ({id_list(ids)})")

    # 3. Missed gates.
    for name, value, minimum in failed_thresholds(data.run.thresholds, data.overall):
        metric = metric_for_threshold(name)
        if value is None:
            recs.append(f"Threshold `{name}` cannot be checked: metric {display_metric(metric)} is missing "
                        f"from this run")
        else:
            recs.append(f"Raise {display_metric(metric)} from {value:.2f} to at least {minimum:g} "
                        f"(threshold `{name}`)")

    # 4. Regressions against the baseline.
    # Only the statistical labels are called regressions; single trials that flipped are
    # named apart, since with flaky cases some always do.
    labelled = labelled_regressed(data.significance)
    if labelled and data.baseline is not None:
        more = f" and {len(labelled) - ID_LIST_LIMIT} more" if len(labelled) > ID_LIST_LIMIT else ""
        recs.append(f"Investigate {plural(len(labelled), 'case')} labelled regressed against "
                    f"{data.baseline.version}: {', '.join(labelled[:ID_LIST_LIMIT])}{more}")
    failing = [c for c in data.changed("now_failing") if c.test_id not in labelled and c.baseline is not None]
    if failing and data.baseline is not None:
        flips = ", ".join(f"{c.test_id} ({c.baseline.verdict or c.baseline.status} → {c.outcome})"
                          for c in failing[:ID_LIST_LIMIT])
        more = f" and {len(failing) - ID_LIST_LIMIT} more" if len(failing) > ID_LIST_LIMIT else ""
        recs.append(f"Not labelled regressed (within chance on their own): {plural(len(failing), 'trial')} "
                    f"passing in {data.baseline.version} now fail{'s' if len(failing) == 1 else ''}: {flips}{more}")

    # 5. Failing assertions, grouped by type and name, most frequent first.
    groups: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for case in cases:
        if case.error is not None:
            continue
        for grade in case.grades:
            if grade.failing and grade.status == "graded":
                groups[(grade.type, grade.name)].append((case.test_id, _reason_core(grade.reason)))
    for (kind, name), items in sorted(groups.items(), key=lambda kv: (-len({i for i, _ in kv[1]}), kv[0])):
        ids = [i for i, _ in items]
        reasons = Counter(r for _, r in items).most_common()
        shown = "; ".join(f"{r} ({n}×)" if len(reasons) > 1 or n > 1 else r for r, n in reasons[:2])
        if len(reasons) > 2:
            shown += f"; {plural(len(reasons) - 2, 'other reason')}"
        label = f"`{kind}` failures" if name == kind else f"`{kind}` assertion `{name}`"
        verb = "in" if name == kind else "failing in"
        recs.append(f"Fix {label} {verb} {plural(len(set(ids)), 'case')} ({id_list(ids)}): {shown}")

    # 6. Slow calls.
    limit = latency_limit(data)
    slow = sorted((c for c in cases if c.latency_ms is not None and c.latency_ms > limit),
                  key=lambda c: (-(c.latency_ms or 0), c.test_id))
    if slow:
        recs.append(f"Investigate latency: {plural(len(slow), 'case')} over {limit:g} ms "
                    f"(slowest: {slow[0].test_id} at {slow[0].latency_ms:.0f} ms)")

    # 7. Flaky cases.
    flaky = list(dict.fromkeys(c.test_id for c in cases if c.flaky))
    if flaky:
        recs.append(f"Stabilise {plural(len(flaky), 'flaky case')} whose trials disagree ({id_list(flaky)})")

    # 8. Cases that are not evaluated or wait for people.
    unevaluated = list(dict.fromkeys(c.test_id for c in cases if c.status == "not_evaluated"))
    if unevaluated:
        recs.append(f"Add assertions or criteria to {plural(len(unevaluated), 'case')} that "
                    f"{'is' if len(unevaluated) == 1 else 'are'} not evaluated ({id_list(unevaluated)})")
    pending = [c.test_id for c in cases if c.status == "pending_human"]
    if pending:
        recs.append(f"Collect human ratings for {plural(len(pending), 'output')} "
                    f"(`eval-pipelines grades export`): {id_list(pending)}")
    return recs


def _reason_core(reason: str) -> str:
    """A grader reason without its count prefix: '1 schema error(s): X' -> 'X'."""
    return short(re.sub(r"^\d+ [a-z ]+\(s\): ", "", reason), 140)


# ---- the report ----------------------------------------------------------------

def _history_json(points: list[HistoryPoint]) -> list[dict[str, Any]]:
    return [{"version": p.version, "eval_date": p.eval_date, "pass_rate": p.pass_rate,
             "mean_score": p.mean_score, "passed": p.passed, "counted": p.counted,
             "current": p.is_current, "baseline": p.is_baseline} for p in points]


def comparison(data: ReportData) -> dict[str, Any] | None:
    if data.baseline is None:
        return None
    base, cur = data.baseline_metrics.get("pass_rate"), data.overall.get("pass_rate")
    return {
        "baseline_version": data.baseline.version,
        "baseline_skill_version": data.baseline.skill_version,
        "baseline_eval_date": data.baseline.eval_date,
        "baseline_run_id": data.baseline.run_id,
        "pass_rate": {"baseline": base, "current": cur,
                      "delta": None if base is None or cur is None else round(cur - base, 6)},
        # Labelled by the regression stage (q-value <= case_fdr); the per-trial flips follow.
        "regressed": labelled_regressed(data.significance),
        "now_failing": [c.test_id for c in data.changed("now_failing")],
        "now_passing": [c.test_id for c in data.changed("now_passing")],
        "changed": [c.test_id for c in data.changed("changed")],
        "new": [c.test_id for c in data.changed("new")],
        "removed": list(data.removed),
    }


def build_report(data: ReportData) -> dict[str, Any]:
    run = data.run
    metrics = {name: value for name, value in sorted(data.overall.items())}
    report: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "metadata": {
            "suite_name": run.suite,
            "skill": run.skill,
            "version": run.version,
            "skill_version": run.skill_version,
            "eval_date": run.eval_date,
            "run_id": run.run_id,
            "run_ids": run.run_ids,
            "timestamp": timestamp(run),
            "duration_seconds": None if run.duration_seconds is None else round(run.duration_seconds, 3),
            "duration_basis": run.duration_basis,
            "suite_format": run.suite_format,
            "n_tests": run.n_tests,
            "thresholds": run.thresholds,
            "environment": run.environment,
            "warnings": list(run.warnings),
        },
        "summary": summary(data),
        "metrics": metrics,
        "metrics_by_target": {t: dict(sorted(m.items())) for t, m in sorted(data.metrics.items()) if t != "*"},
        "gates": gate_rows(data),
        "failures": failures(data),
        "recommendations": recommendations(data),
        "comparison": comparison(data),
        "configurations": configurations_json(data),
        "triggers": triggers_json(data.triggers), "blind_comparisons": blind_json(data.blind),
        "results": [] if not include_details(data) else [
            {"eval_id": c.test_id, "name": c.name, "category": c.category, "target": c.target,
             "trial": c.trial, "verdict": c.verdict, "status": c.status, "score": c.score,
             "reason": c.reason, "latency_ms": c.latency_ms, "change": c.change}
            for c in data.cases
        ],
        "history": {"by_version": _history_json(data.version_history), "by_date": _history_json(data.date_history)},
    }
    return {"eval_report": report}


def include_details(data: ReportData) -> bool:
    """Seed 003 ``reporting.include_details``: false leaves the per-case results out of every report."""
    reporting = data.run.reporting if isinstance(data.run.reporting, dict) else {}
    return reporting.get("include_details", True) is not False


def render_json(data: ReportData) -> str:
    return json.dumps(build_report(data), indent=2, ensure_ascii=False, default=str) + "\n"


def report_schema() -> dict[str, Any]:
    return json.loads(resources.files("eval_pipelines.reports").joinpath("report.schema.json").read_text())


def validate_report(report: dict[str, Any]) -> None:
    """Raise ``jsonschema.ValidationError`` when ``report`` does not match report.schema.json."""
    import jsonschema

    schema = report_schema()
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    validator.validate(report)

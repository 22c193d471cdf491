"""JUnit XML of one evaluated partition, for CI test reporters (``run --junit PATH``).

One ``<testsuite>`` per target and one ``<testcase>`` per case in it
(``classname`` = skill version and target, ``name`` = the case id). A case's
verdict over its trials is the one the metrics stage stored in
``case_metrics.case_passed`` (the suite's trial strategy), so JUnit and the
pass rate never disagree:

- every counted trial an error row -> ``<error>`` with the error text;
- otherwise a case that did not pass -> ``<failure>`` with each failing trial's reason;
- no trial counted (not evaluated, waiting for a human) -> ``<skipped>`` with why.

Scores go in ``<properties>``: mean score, trials, passing trials, and the
suite-level metrics (pass rate, ...) on each ``<testsuite>``.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from eval_pipelines.store.connection import connect
from eval_pipelines.store.partition import Partition

COUNTED = ("graded", "error")
MAX_OUTPUT_CHARS = 1000
SUITE_METRICS = ("pass_rate", "mean_score", "case_pass_rate", "cost_usd", "latency_p50_ms")


def _fmt(value: float) -> str:
    return f"{value:.6g}"


def _properties(parent: ET.Element, values: dict[str, object]) -> None:
    if not values:
        return
    props = ET.SubElement(parent, "properties")
    for name, value in values.items():
        ET.SubElement(props, "property", name=name,
                      value=_fmt(value) if isinstance(value, float) else str(value))


def _case(suite_el: ET.Element, classname: str, test_id: str, trials: pd.DataFrame,
          case_passed: float | None, seconds: float, detail: "TrialDetail") -> str:
    """Add one ``<testcase>``; returns its outcome: pass, failure, error or skipped."""
    case = ET.SubElement(suite_el, "testcase", name=test_id, classname=classname, time=f"{seconds:.3f}")
    counted = trials[trials["status"].isin(COUNTED)]
    scores = [float(s) for s in counted["score"] if s is not None and not math.isnan(s)]
    _properties(case, {
        "score": sum(scores) / len(scores) if scores else 0.0,
        "trials": len(trials),
        "passed_trials": int((counted["verdict"] == "pass").sum()),
        **{"category": c for c in trials["category"][:1] if isinstance(c, str) and c},
    })
    if counted.empty:
        reasons = sorted({f"{r['status']}: {r['reason']}" for r in trials.to_dict("records")})
        ET.SubElement(case, "skipped", message="; ".join(reasons)[:500])
        return "skipped"
    errors = counted[counted["status"] == "error"]
    if len(errors) == len(counted):
        first = str(errors.iloc[0]["reason"])
        el = ET.SubElement(case, "error", message=first[:500], type="error")
        el.text = "\n".join(f"trial {int(r['trial'])}: {r['reason']}" for r in errors.to_dict("records"))
        return "error"
    if case_passed is not None and case_passed >= 1.0:
        return "pass"
    failing = counted[counted["verdict"] != "pass"].to_dict("records")
    if failing:
        first = failing[0]
        assertions = detail.failed_assertions.get(int(first["trial"]), [])
        message = f"{first['reason']}: {'; '.join(assertions)}" if assertions else str(first["reason"])
    else:
        message = "the case did not pass its trial strategy"
    el = ET.SubElement(case, "failure", message=message[:500],
                       type=str(failing[0]["verdict"] or "fail") if failing else "fail")
    lines = []
    for r in failing:
        trial = int(r["trial"])
        lines.append(f"trial {trial} ({r['status']}, score {_score(r['score'])}): {r['reason']}")
        lines += [f"  - {a}" for a in detail.failed_assertions.get(trial, [])]
        if trial in detail.outputs:
            lines.append(f"  output: {detail.outputs[trial][:MAX_OUTPUT_CHARS]}")
    el.text = "\n".join(lines)
    return "failure"


@dataclass
class TrialDetail:
    """Per trial of one case and target: the failed assertions' reasons and the output."""

    failed_assertions: dict[int, list[str]] = field(default_factory=dict)
    outputs: dict[int, str] = field(default_factory=dict)


def _score(value: object) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{float(value):.3f}"


def junit_xml(partition: Partition, results: pd.DataFrame, case_passed: dict[tuple[str, str], float],
              latency_ms: dict[tuple[str, str], float], suite_metrics: dict[str, dict[str, float]],
              details: dict[tuple[str, str], TrialDetail] | None = None) -> str:
    """The XML document for one partition's ``test_results`` rows."""
    root = ET.Element("testsuites", name=f"eval-pipelines {partition.skill_version}")
    totals: dict[str, int] = defaultdict(int)
    total_time = 0.0
    for target, rows in results.groupby("target", sort=True):
        suite_el = ET.SubElement(root, "testsuite", name=f"{partition.skill_version} [{target}]",
                                 timestamp=f"{partition.eval_date}T00:00:00")
        _properties(suite_el, {"eval_date": partition.eval_date, "skill_version": partition.skill_version,
                               "target": str(target),
                               **{m: v for m, v in suite_metrics.get(str(target), {}).items() if m in SUITE_METRICS}})
        counts: dict[str, int] = defaultdict(int)
        seconds_total = 0.0
        for test_id, trials in rows.groupby("test_id", sort=True):
            seconds = latency_ms.get((str(target), str(test_id)), 0.0) / 1000
            outcome = _case(suite_el, f"{partition.skill_version}.{target}", str(test_id), trials,
                            case_passed.get((str(target), str(test_id))), seconds,
                            (details or {}).get((str(target), str(test_id)), TrialDetail()))
            counts["tests"] += 1
            counts[outcome] += 1
            seconds_total += seconds
        suite_el.set("tests", str(counts["tests"]))
        suite_el.set("failures", str(counts["failure"]))
        suite_el.set("errors", str(counts["error"]))
        suite_el.set("skipped", str(counts["skipped"]))
        suite_el.set("time", f"{seconds_total:.3f}")
        for key in ("tests", "failure", "error", "skipped"):
            totals[key] += counts[key]
        total_time += seconds_total
    root.set("tests", str(totals["tests"]))
    root.set("failures", str(totals["failure"]))
    root.set("errors", str(totals["error"]))
    root.set("skipped", str(totals["skipped"]))
    root.set("time", f"{total_time:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(db_path: str, partition: Partition, out: Path) -> Path:
    """Read the partition's rows from the store and write its JUnit XML to ``out``."""
    # One testcase per case, target and trial of the skill as shipped (with_skill).
    where = "eval_date = ? AND skill_version = ? AND configuration = 'with_skill'"
    params = [partition.eval_date, partition.skill_version]
    with connect(db_path, read_only=True) as con:
        results = con.execute(f"SELECT test_id, target, trial, category, score, verdict, status, reason "
                              f"FROM test_results WHERE {where} ORDER BY target, test_id, trial", params).df()
        passed = con.execute(f"SELECT target, test_id, value FROM case_metrics WHERE {where} "
                             f"AND metric = 'case_passed'", params).fetchall()
        latency = con.execute(f"SELECT target, test_id, sum(coalesce(latency_ms, 0)) FROM model_outputs "
                              f"WHERE {where} GROUP BY target, test_id", params).fetchall()
        metrics = con.execute(f"SELECT target, metric, value FROM metrics WHERE {where}", params).fetchall()
        grades = con.execute(f"SELECT target, test_id, trial, assertion_name, reason FROM grades WHERE {where} "
                             f"AND NOT passed ORDER BY assertion_index", params).fetchall()
        outputs = con.execute(f"SELECT target, test_id, trial, output FROM model_outputs WHERE {where} "
                              f"AND output IS NOT NULL", params).fetchall()
    details: dict[tuple[str, str], TrialDetail] = defaultdict(TrialDetail)
    for target, test_id, trial, name, reason in grades:
        details[(target, test_id)].failed_assertions.setdefault(trial, []).append(f"{name}: {reason}")
    for target, test_id, trial, output in outputs:
        details[(target, test_id)].outputs[trial] = output
    suite_metrics: dict[str, dict[str, float]] = defaultdict(dict)
    for target, metric, value in metrics:
        suite_metrics[target][metric] = value
    xml = junit_xml(partition, results, {(t, c): v for t, c, v in passed},
                    {(t, c): v for t, c, v in latency}, suite_metrics, details)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(xml)
    return out

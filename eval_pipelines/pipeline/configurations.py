"""The metrics stage per configuration (``with_skill`` / ``without_skill``): one configuration's
metrics from its stored rows, the runs the skill's uplift pairs, and their Markdown summary.

The stages (``stages.py``) split each table by its ``configuration`` column and compute every
configuration as a run of its own would; only the uplift (``analysis/uplift.py``) looks at two.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any, Iterable

import pandas as pd

from eval_pipelines.analysis.configurations import Run, run_summary
from eval_pipelines.analysis.derived_metrics import suite_derived
from eval_pipelines.analysis.metrics import case_metrics, expectation_metrics, suite_metrics
from eval_pipelines.run.targets.base import ModelOutput
from eval_pipelines.store import tables
from eval_pipelines.store.configurations import ORDER, column, configurations_in, of_configuration

if TYPE_CHECKING:
    from eval_pipelines.analysis.uplift import Uplift
    from eval_pipelines.suite.models import Suite


def configurations_of_outputs(outputs: Iterable[ModelOutput]) -> list[str]:
    found = {o.configuration for o in outputs}
    return sorted(found, key=lambda c: (ORDER.index(c) if c in ORDER else len(ORDER), c))


def _details(value: Any) -> dict[str, Any]:
    data = json.loads(value) if isinstance(value, str) else value
    return data if isinstance(data, dict) else {}


def expectations_graded(grades: pd.DataFrame) -> list[tuple[str, list[bool]]]:
    """(target, each expectation's passed) of every graded ``expectations`` grade (evals.json)."""
    if grades.empty:
        return []
    rows = grades[(grades["assertion_type"] == "expectations") & (grades["status"] == "graded")]
    return [(str(target), [bool(e.get("passed")) for e in _details(details).get("expectations", [])])
            for target, details in zip(rows["target"], rows["details"])]


def configuration_metrics(suite: "Suite", configuration: str, results: pd.DataFrame, grades: pd.DataFrame,
                          outputs: list[ModelOutput], log: Any = None
                          ) -> tuple[dict[str, dict[str, float]], dict[tuple[str, str], dict[str, float]]]:
    """(target -> metric -> value, (target, test id) -> metric -> value) of one configuration's rows."""
    trials = tables.decode_trials(results, outputs)
    per_case = case_metrics(trials, suite.execution.trials.strategy)
    values = suite_metrics(trials)
    for target in values:
        cases = [v for (t, _), v in per_case.items() if target in ("*", t)]
        if cases:
            values[target]["case_pass_rate"] = sum(v["case_passed"] for v in cases) / len(cases)
            values[target]["flaky_cases"] = float(sum(v["flaky"] for v in cases))
    for target, items in expectation_metrics(expectations_graded(grades)).items():
        values.setdefault(target, {}).update(items)
    # skill-creator's run_summary: mean, stddev, min, max of each run's pass rate, time and tokens.
    for target, items in run_summary(runs_of(configuration, results, grades, outputs)).items():
        values.setdefault(target, {}).update(items)
    if suite.derived_metrics:  # promptfoo derivedMetrics over the named grades (analysis/derived_metrics.py)
        graded = [(r["test_id"], r["target"], int(r["trial"]), int(r["assertion_index"]), float(r["score"]),
                   float(r["weight"])) for r in grades.to_dict("records")]
        derived, undefined = suite_derived(suite, [(o.test_id, o.target, o.trial) for o in outputs], graded)
        for target, items in derived.items():
            values.setdefault(target, {}).update(items)
        for line in undefined:  # no row: the metrics table holds numbers only
            (log or logging.getLogger(__name__)).warning("derived metric %s", line)
    return values, per_case


def runs_of(configuration: str, results: pd.DataFrame, grades: pd.DataFrame,
            outputs: Iterable[ModelOutput]) -> list[Run]:
    """Each stored result of one configuration as a run, with its expectations and measurements."""
    measured = {(o.test_id, o.target, o.trial): o for o in outputs if o.configuration == configuration}
    expectations: dict[tuple[str, str, int], list[bool]] = {}
    if not grades.empty:
        rows = grades[(grades["assertion_type"] == "expectations") & (grades["status"] == "graded")]
        for test_id, target, trial, details in zip(rows["test_id"], rows["target"], rows["trial"], rows["details"]):
            expectations[(test_id, target, int(trial))] = [
                bool(e.get("passed")) for e in _details(details).get("expectations", [])]
    runs = []
    for r in tables.records(results):
        key = (r["test_id"], r["target"], int(r["trial"]))
        o = measured.get(key)
        tokens = None if o is None else (o.prompt_tokens or 0) + (o.completion_tokens or 0)
        runs.append(Run(configuration=configuration, target=str(r["target"]), test_id=str(r["test_id"]),
                        trial=int(r["trial"]), status=str(r["status"]),
                        verdict=r["verdict"] if isinstance(r["verdict"], str) else None,
                        expectations=expectations.get(key), latency_ms=o.latency_ms if o else None, tokens=tokens))
    return runs


def all_runs(results: pd.DataFrame, grades: pd.DataFrame, outputs: list[ModelOutput]) -> list[Run]:
    runs: list[Run] = []
    for configuration in configurations_in(results):
        runs += runs_of(configuration, of_configuration(results, configuration),
                        grades[column(grades) == configuration] if len(grades) else grades, outputs)
    return runs


def configurations_markdown(by_configuration: dict[str, dict[str, dict[str, float]]],
                            uplifts: list["Uplift"]) -> str:
    """Each configuration's run summary (all targets) and the uplift, as a Markdown table."""
    lines = ["| configuration | pass rate (mean ± sd, min-max) | time s (mean) | tokens (mean) |", "|---|---|---|---|"]
    for configuration, values in by_configuration.items():
        m = values.get("*", {})
        if "run_pass_rate_mean" not in m:
            continue
        lines.append(f"| {configuration} | {m['run_pass_rate_mean']:.2f} ± {m['run_pass_rate_stddev']:.2f} "
                     f"({m['run_pass_rate_min']:.2f}-{m['run_pass_rate_max']:.2f}) | {m['run_time_seconds_mean']:.1f} "
                     f"| {m['run_tokens_mean']:.0f} |")
    for u in uplifts:
        if u.target == "*":
            lines.append(f"\nSkill uplift: **{u.verdict}** ({u.wording})")
    return "\n".join(lines)

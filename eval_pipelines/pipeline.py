"""The pipeline's stages as plain functions: each builds one table's partition rows.

The Dagster assets (``eval_pipelines.defs.assets``) and the CLI call these; the
tables in DuckDB are the interface between stages, so every stage can be
re-run on its own and reads exactly what its upstream stored.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Container, Mapping

import pandas as pd
from pydantic import TypeAdapter

from eval_pipelines.engine import GradedOutput, GradingContext, agrade_outputs, run_model_phase
from eval_pipelines.grading import Grade
from eval_pipelines.metrics import TrialResult, case_metrics, suite_metrics
from eval_pipelines.scoring import score_case
from eval_pipelines.spec.errors import SpecErrors
from eval_pipelines.spec.loader import LoadedSkill, load_skill
from eval_pipelines.spec.models import Suite
from eval_pipelines.spec.package import find_packages, open_package
from eval_pipelines.store.duckdb_store import Partition
from eval_pipelines.targets.base import ModelOutput
from eval_pipelines.targets.config import OpenAITargetConfig, TargetConfig, load_targets_file, resolve_connection

_TARGETS = TypeAdapter(list[TargetConfig])


@dataclass(frozen=True)
class ProjectPaths:
    """Where a project keeps its inputs and outputs (all overridable)."""

    skills_dir: Path
    datasets_dir: Path
    db_path: str
    work_dir: Path
    targets_file: Path | None = None

    @classmethod
    def from_root(cls, root: Path, db_path: str | None = None) -> "ProjectPaths":
        targets = root / "targets.yaml"
        return cls(
            skills_dir=root / "skills",
            datasets_dir=root / "datasets",
            db_path=db_path or str(root / ".data" / "eval_pipelines.duckdb"),
            work_dir=root / ".data" / "packages",
            targets_file=targets if targets.is_file() else None,
        )

    def project_targets(self) -> dict[str, TargetConfig]:
        if self.targets_file is None:
            return {}
        return {t.name: t for t in load_targets_file(self.targets_file)}


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def find_package_source(paths: ProjectPaths, skill_version: str) -> Path:
    """The folder or zip in the skills directory whose key is ``skill_version``."""
    problems = []
    for source in find_packages(paths.skills_dir):
        try:
            if open_package(source, paths.work_dir).key == skill_version:
                return source
        except SpecErrors as exc:
            problems.append(str(exc))
    hint = f"; packages that failed to open: {'; '.join(problems)}" if problems else ""
    raise SpecErrors.single(paths.skills_dir, f"skill version {skill_version!r} not found{hint}")


def discover_skill_versions(paths: ProjectPaths) -> tuple[dict[str, Path], dict[Path, str]]:
    """Every valid skill version in the skills directory, and why the others were refused."""
    found: dict[str, Path] = {}
    problems: dict[Path, str] = {}
    for source in find_packages(paths.skills_dir):
        try:
            package = open_package(source, paths.work_dir)
        except SpecErrors as exc:
            problems[source] = str(exc)
            continue
        if package.key in found:
            problems[source] = f"{source}: duplicate skill version {package.key} (also {found[package.key]})"
            continue
        found[package.key] = source
    return found, problems


def load_partition_skill(paths: ProjectPaths, partition: Partition) -> LoadedSkill:
    source = find_package_source(paths, partition.skill_version)
    return load_skill(source, datasets_dir=paths.datasets_dir, extract_dir=paths.work_dir,
                      project_targets=paths.project_targets())


def _base(partition: Partition, run_id: str | None, suite: str) -> dict[str, Any]:
    return {
        "eval_date": partition.eval_date,
        "skill_version": partition.skill_version,
        "skill": partition.skill,
        "version": partition.version,
        "run_id": run_id,
        "suite": suite,
    }


# ---- stage 1: suite -------------------------------------------------------

def suite_rows(loaded: LoadedSkill, partition: Partition, run_id: str | None) -> pd.DataFrame:
    suite = loaded.suite
    used = sorted({n for case in suite.tests for n in suite.targets_for(case)} | ({suite.judge} - {None}))
    row = _base(partition, run_id, suite.name) | {
        "format": suite.format,
        "source_file": suite.source_file,
        "profile": suite.profile,
        "package_hash": loaded.package.content_hash,
        "package_root": str(loaded.package.root),
        "n_tests": len(suite.tests),
        # Target settings hold environment variable *names*, never secrets.
        "targets": _json([loaded.targets[n].model_dump() for n in used]),
        "trials": suite.execution.trials.count,
        "thresholds": _json(suite.thresholds),
        "warnings": _json(loaded.warnings),
        "spec": suite.model_dump_json(),
        "loaded_at": _now(),
    }
    return pd.DataFrame([row])


class MissingUpstream(LookupError):
    """A stage ran before the stage it reads from stored its rows."""


@dataclass(frozen=True)
class StoredSuite:
    suite: Suite
    targets: dict[str, TargetConfig]
    package_root: Path


def stored_suite(suites: pd.DataFrame) -> StoredSuite:
    """The partition's suite as stored by ``eval_suite``; treat it as read-only.

    Every later stage reads it, and parsing a 100,000-case spec takes seconds,
    so the parsed suite is kept per stored row (its partition, run, load time
    and package hash): the steps of one in-process run parse it once.
    """
    if suites.empty:
        raise MissingUpstream("no suite stored for this partition; materialise eval_suite first")
    row = suites.iloc[0]
    key = (row["eval_date"], row["skill_version"], row["run_id"], str(row["loaded_at"]), row["package_hash"],
           len(row["spec"]))
    cached = _PARSED_SUITES.get(key)
    if cached is None:
        targets = {t.name: t for t in _TARGETS.validate_json(row["targets"])}
        cached = StoredSuite(Suite.model_validate_json(row["spec"]), targets, Path(row["package_root"]))
        _PARSED_SUITES.clear()  # one partition at a time per process is the common case
        _PARSED_SUITES[key] = cached
    return cached


_PARSED_SUITES: dict[tuple, StoredSuite] = {}


# ---- stage 1b: external datasets ---------------------------------------------

def dataset_rows(suite: Suite, partition: Partition, run_id: str | None) -> pd.DataFrame:
    """One row per external file the suite's cases came from (not the suite file)."""
    import hashlib

    counts: dict[str, int] = {}
    for case in suite.tests:
        if case.source_file and case.source_file != suite.source_file:
            counts[case.source_file] = counts.get(case.source_file, 0) + 1
    rows = []
    for path, n in sorted(counts.items()):
        file = Path(path)
        data = file.read_bytes() if file.is_file() else b""
        rows.append(_base(partition, run_id, suite.name) | {
            "path": path, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data), "test_cases": n})
    return pd.DataFrame(rows)


# ---- stage 2: test cases ---------------------------------------------------

def test_case_rows(suite: Suite, partition: Partition, run_id: str | None) -> pd.DataFrame:
    rows = []
    for case in suite.tests:
        rows.append(_base(partition, run_id, suite.name) | {
            "test_id": case.id,
            "name": case.name,
            "category": case.category,
            "input": case.user_text,
            "messages": _json([m.model_dump() for m in case.input]),
            "expected": None if case.expected_output is None else _json(case.expected_output),
            "criteria": case.criteria,
            "assertions": _json([a.model_dump() for a in case.assertions]),
            "tags": _json(case.tags),
            "metadata": _json(case.metadata),
            "source_file": case.source_file,
            "source_line": case.source_line,
        })
    return pd.DataFrame(rows)


# ---- stage 3: model outputs -----------------------------------------------

def workspace_dir(paths: ProjectPaths, partition: Partition) -> Path:
    """Where a partition's run workspace lives (kept until the partition re-runs)."""
    return paths.work_dir.parent / "workspaces" / partition.eval_date / partition.skill_version


def collect_model_outputs(stored: StoredSuite, env: Mapping[str, str | None] | None = None,
                          concurrency: int | None = None, *, db_path: str | None = None,
                          use_cache: bool = True, workspace: Path | None = None,
                          on_output: Callable[[ModelOutput], None] | None = None) -> list[ModelOutput]:
    """Every output of the suite; with ``db_path`` and ``use_cache`` answers are cached there."""
    import asyncio

    from eval_pipelines.cache import ResponseCache

    cache = ResponseCache(db_path) if db_path and use_cache else None
    return asyncio.run(run_model_phase(stored.suite, stored.targets, stored.package_root,
                                       env if env is not None else os.environ,
                                       concurrency=concurrency, cache=cache, workspace_dir=workspace,
                                       on_output=on_output))


def model_output_rows(suite: Suite, outputs: list[ModelOutput], partition: Partition,
                      run_id: str | None) -> pd.DataFrame:
    now = _now()
    rows = [_base(partition, run_id, suite.name) | {
        "test_id": o.test_id, "target": o.target, "trial": o.trial,
        "output": o.output, "error": o.error, "latency_ms": o.latency_ms,
        "prompt_tokens": o.prompt_tokens, "completion_tokens": o.completion_tokens,
        "cost_usd": o.cost_usd, "cached": o.cached, "attempts": o.attempts,
        "llm_calls": o.llm_calls, "tool_calls": o.tool_calls,
        "trace": _json(o.trace), "created_at": now,
    } for o in outputs]
    return pd.DataFrame(rows)


def outputs_from_rows(rows: pd.DataFrame) -> list[ModelOutput]:
    from eval_pipelines.store.duckdb_store import none_if_missing as val

    out = []
    for r in rows.to_dict("records"):
        out.append(ModelOutput(
            test_id=r["test_id"], target=r["target"], trial=int(r["trial"]),
            output=val(r["output"]), error=val(r["error"]), latency_ms=val(r["latency_ms"]),
            prompt_tokens=None if val(r["prompt_tokens"]) is None else int(r["prompt_tokens"]),
            completion_tokens=None if val(r["completion_tokens"]) is None else int(r["completion_tokens"]),
            cost_usd=val(r["cost_usd"]), cached=bool(r["cached"]), attempts=int(r["attempts"]),
            llm_calls=int(r["llm_calls"]), tool_calls=int(r["tool_calls"]),
            trace=json.loads(r["trace"]) if r["trace"] else [],
        ))
    return out


# ---- stage 4: grades -------------------------------------------------------

def judge_env_names(stored: StoredSuite) -> list[str]:
    """Environment variables the judge target needs (names only)."""
    config = stored.targets.get(stored.suite.judge or "")
    if not isinstance(config, OpenAITargetConfig):
        return []
    return [config.api_key_env, config.base_url_env]


def grade_stored_outputs(stored: StoredSuite, outputs: list[ModelOutput],
                         env: Mapping[str, str | None] | None = None,
                         context: GradingContext | None = None,
                         skip: Container[tuple[str, int]] = frozenset()) -> list[GradedOutput]:
    """Grade with the suite's judge (created only when the suite names one)."""
    import asyncio

    async def run() -> list[GradedOutput]:
        config = stored.targets.get(stored.suite.judge or "")
        judge = None
        if isinstance(config, OpenAITargetConfig):
            from eval_pipelines.judge import OpenAIJudge  # imports openai: only when a judge is named

            api_key, base_url = resolve_connection(config, env if env is not None else os.environ)
            judge = OpenAIJudge(config, api_key=api_key, base_url=base_url)
        try:
            # Judge prompts and scripts are relative to the suite file, as every path in a suite.
            suite_dir = Path(stored.suite.source_file).parent
            return await agrade_outputs(stored.suite, outputs, suite_dir, judge, context, skip)
        finally:
            if judge is not None:
                await judge.aclose()

    return asyncio.run(run())


def grade_rows(stored: StoredSuite, outputs: pd.DataFrame | list[ModelOutput], partition: Partition,
               run_id: str | None, env: Mapping[str, str | None] | None = None,
               context: GradingContext | None = None) -> pd.DataFrame:
    """One row per output x assertion.

    ``outputs`` are the partition's ``model_outputs`` rows (or ``ModelOutput``s).
    Text-only assertions are graded in batch (batch_grading.py); only outputs
    with other assertions are turned into ``ModelOutput``s and graded one by one.
    """
    from eval_pipelines.batch_grading import GRADE_COLUMNS, batch_grade, batch_plan

    suite = stored.suite
    if not isinstance(outputs, pd.DataFrame):
        outputs = model_output_rows(suite, outputs, partition, run_id)
    plan = batch_plan(suite)
    batched = batch_grade(plan, outputs)
    handled = set(zip(plan["test_id"], plan["assertion_index"]))
    scalar_cases = {c.id for c in suite.tests if any((c.id, i) not in handled for i in range(len(c.assertions)))}
    rows = []
    if scalar_cases and not outputs.empty:
        one_by_one = outputs_from_rows(outputs[outputs["test_id"].isin(scalar_cases)])
        for item in grade_stored_outputs(stored, one_by_one, env, context, handled):
            o = item.output
            for g in item.grades:
                rows.append({
                    "test_id": o.test_id, "target": o.target, "trial": o.trial,
                    "assertion_index": g.assertion_index, "assertion_type": g.assertion_type,
                    "assertion_name": g.assertion_name, "weight": g.weight,
                    "required": json.dumps(g.required), "score": g.score, "passed": g.passed,
                    "status": g.status, "reason": g.reason, "details": _json(g.details),
                })
    frames = [f for f in (batched, pd.DataFrame(rows, columns=GRADE_COLUMNS)) if not f.empty]
    graded = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=GRADE_COLUMNS)
    graded = graded.sort_values(["test_id", "target", "trial", "assertion_index"], kind="stable",
                                ignore_index=True)
    base = _base(partition, run_id, suite.name)
    return graded.assign(**base)[list(base) + GRADE_COLUMNS]


# ---- stage 5: test results -------------------------------------------------

def test_result_rows(suite: Suite, outputs: list[ModelOutput], grades: pd.DataFrame,
                     partition: Partition, run_id: str | None) -> pd.DataFrame:
    """Score every output from its stored grades (gates, weights, verdict)."""
    by_output: dict[tuple[str, str, int], list[Grade]] = {}
    for r in grades.to_dict("records"):
        key = (r["test_id"], r["target"], int(r["trial"]))
        by_output.setdefault(key, []).append(Grade(
            assertion_index=int(r["assertion_index"]), assertion_type=r["assertion_type"],
            assertion_name=r["assertion_name"], score=float(r["score"]), passed=bool(r["passed"]),
            status=r["status"], reason=r["reason"], weight=float(r["weight"]),
            required=json.loads(r["required"]), details={},
        ))
    categories = {c.id: c.category for c in suite.tests}
    rows = []
    for o in outputs:
        key = (o.test_id, o.target, o.trial)
        grades_for = sorted(by_output.get(key, []), key=lambda g: g.assertion_index)
        output_error = o.error if o.error is not None else ("no output" if o.output is None else None)
        result = score_case(grades_for, output_error)
        rows.append(_base(partition, run_id, suite.name) | {
            "test_id": o.test_id, "target": o.target, "trial": o.trial,
            "category": categories.get(o.test_id), "score": result.score,
            "verdict": result.verdict, "status": result.status, "reason": result.reason,
        })
    return pd.DataFrame(rows)


# ---- stage 6: metrics ------------------------------------------------------

def trial_results(results: pd.DataFrame, outputs: list[ModelOutput]) -> list[TrialResult]:
    measured = {(o.test_id, o.target, o.trial): o for o in outputs}
    trials = []
    for r in results.to_dict("records"):
        o = measured.get((r["test_id"], r["target"], int(r["trial"])))
        score = r["score"]
        trials.append(TrialResult(
            test_id=r["test_id"], target=r["target"], trial=int(r["trial"]), status=r["status"],
            verdict=r["verdict"] if isinstance(r["verdict"], str) else None,
            score=None if score is None or pd.isna(score) else float(score),
            latency_ms=o.latency_ms if o else None, cost_usd=o.cost_usd if o else None,
            prompt_tokens=o.prompt_tokens if o else None,
            completion_tokens=o.completion_tokens if o else None,
        ))
    return trials


def metric_tables(suite: Suite, results: pd.DataFrame, outputs: list[ModelOutput],
                  partition: Partition, run_id: str | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(``metrics``, ``case_metrics``) rows from one pass over the trials.

    ``metrics``: suite metrics per target (and ``*``), plus the share of cases
    passing under the suite's trial strategy (``case_pass_rate``).
    ``case_metrics``: per case and target, the metrics over its trials.
    """
    trials = trial_results(results, outputs)
    per_case = case_metrics(trials, suite.execution.trials.strategy)
    values = suite_metrics(trials)
    for target in values:
        cases = [v for (t, _), v in per_case.items() if target in ("*", t)]
        if cases:
            values[target]["case_pass_rate"] = sum(v["case_passed"] for v in cases) / len(cases)
            values[target]["flaky_cases"] = float(sum(v["flaky"] for v in cases))
    base = _base(partition, run_id, suite.name)
    rows = [base | {"target": target, "metric": metric, "value": float(value)}
            for target, metrics_ in sorted(values.items()) for metric, value in sorted(metrics_.items())]
    return pd.DataFrame(rows), _case_metric_frame(per_case, base)


def _case_metric_frame(per_case: dict, base: dict[str, Any]) -> pd.DataFrame:
    # Built as columns: some eight rows per case, and a dict per row held
    # hundreds of megabytes at 100,000 cases.
    test_ids, targets, metric_names, values = [], [], [], []
    for (target, test_id), metrics_ in sorted(per_case.items()):
        for metric, value in sorted(metrics_.items()):
            test_ids.append(test_id)
            targets.append(target)
            metric_names.append(metric)
            values.append(float(value))
    if not values:
        return pd.DataFrame(columns=[*base, "test_id", "target", "metric", "value"])
    frame = pd.DataFrame({"test_id": test_ids, "target": targets, "metric": metric_names, "value": values})
    return frame.assign(**base)[[*base, "test_id", "target", "metric", "value"]]


# ---- stages 4-6 from stored outputs (CLI run, re-grading after human ratings) ----

def score_partition(db_path: str, partition: Partition, run_id: str | None,
                    env: Mapping[str, str | None] | None = None,
                    workspace: Path | None = None) -> pd.DataFrame:
    """Grade, score and aggregate a partition's stored outputs; returns its metrics rows.

    The judge and sandboxed graders run between two short connections, never
    inside one, so other writers are not blocked by grading.
    """
    from eval_pipelines.baselines import grading_context
    from eval_pipelines.store.duckdb_store import connect, read_partition, replace_partition

    with connect(db_path) as con:
        stored = stored_suite(read_partition(con, "suites", partition))
        output_rows = read_partition(con, "model_outputs", partition)
        _, context = grading_context(con, partition, stored.suite.baseline)
    outputs = outputs_from_rows(output_rows)
    if workspace is not None and workspace.is_dir():
        context = replace(context, workspace=workspace)
    grades = grade_rows(stored, output_rows, partition, run_id, env, context)
    results = test_result_rows(stored.suite, outputs, grades, partition, run_id)
    metrics, per_case = metric_tables(stored.suite, results, outputs, partition, run_id)
    with connect(db_path) as con:
        replace_partition(con, "grades", partition, grades)
        replace_partition(con, "test_results", partition, results)
        replace_partition(con, "metrics", partition, metrics)
        replace_partition(con, "case_metrics", partition, per_case)
    return metrics


# ---- stage 7: regression report ----------------------------------------------

@dataclass(frozen=True)
class BaselineRun:
    comparison: str  # "previous_version" | "previous_night"
    partition: Partition


def find_baselines(con: Any, partition: Partition, pinned: str | None) -> list[BaselineRun]:
    """The previous version's latest run, and the previous night of this version."""
    from eval_pipelines.baselines import choose_baseline

    found = []
    versions = [r[0] for r in con.execute(
        "SELECT DISTINCT version FROM test_results WHERE skill = ?", [partition.skill]).fetchall()]
    version = choose_baseline(partition.version, versions, pinned)
    if version is not None:
        key = f"{partition.skill}@{version}"
        (date,) = con.execute("SELECT max(eval_date) FROM test_results WHERE skill_version = ?", [key]).fetchone()
        found.append(BaselineRun("previous_version", Partition(date, key)))
    (night,) = con.execute(
        "SELECT max(eval_date) FROM test_results WHERE skill_version = ? AND eval_date < ?",
        [partition.skill_version, partition.eval_date]).fetchone()
    if night is not None:
        found.append(BaselineRun("previous_night", Partition(night, partition.skill_version)))
    return found


def regression_rows(suite: Suite, current: pd.DataFrame, baselines: list[tuple[BaselineRun, pd.DataFrame]],
                    partition: Partition, run_id: str | None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Rows of the ``regressions`` table, and a summary per comparison for metadata/checks."""
    from eval_pipelines.regression import RegressionPolicy, compare

    policy = RegressionPolicy(alpha=suite.regression.alpha, min_effect=suite.regression.min_effect)
    rows: list[dict[str, Any]] = []
    summary: dict[str, Any] = {}
    for baseline, frame in baselines:
        result = compare(trial_results(current, []), trial_results(frame, []), policy)
        common = _base(partition, run_id, suite.name) | {
            "comparison": baseline.comparison,
            "baseline_skill_version": baseline.partition.skill_version,
            "baseline_eval_date": baseline.partition.eval_date,
        }
        for case in result.cases:
            rows.append(common | {
                "level": "case", "target": case.target, "test_id": case.test_id, "change": case.change,
                "baseline_pass_rate": case.baseline.pass_rate if case.baseline else None,
                "current_pass_rate": case.current.pass_rate if case.current else None,
                "pass_rate_delta": case.pass_rate_delta,
                "baseline_score": case.baseline.mean_score if case.baseline else None,
                "current_score": case.current.mean_score if case.current else None,
                "p_value": case.p_value, "adjusted_p": None, "ci_low": None, "ci_high": None,
                "detail": _json({"baseline_trials": case.baseline.trials if case.baseline else 0,
                                 "current_trials": case.current.trials if case.current else 0}),
            })
        for t in result.targets:
            rows.append(common | {
                "level": "target", "target": t.target, "test_id": None,
                "change": "regressed" if t.regressed else (
                    "improved" if t.pass_rate_delta >= policy.min_effect and t.ci_low > 0 else "unchanged"),
                "baseline_pass_rate": t.baseline_pass_rate, "current_pass_rate": t.current_pass_rate,
                "pass_rate_delta": t.pass_rate_delta, "baseline_score": None, "current_score": None,
                "p_value": t.p_value, "adjusted_p": t.adjusted_p, "ci_low": t.ci_low, "ci_high": t.ci_high,
                "detail": _json({"cases_compared": t.cases_compared, "mcnemar_b": t.mcnemar_b,
                                 "mcnemar_c": t.mcnemar_c, "mcnemar_p": t.mcnemar_p,
                                 "score_delta": t.score_delta, "drivers": t.drivers,
                                 "alpha": policy.alpha, "min_effect": policy.min_effect}),
            })
        summary[baseline.comparison] = {
            "baseline": f"{baseline.partition.skill_version} ({baseline.partition.eval_date})",
            "regressed": result.regressed,
            "targets": [t.__dict__ for t in result.targets],
            "flips": {change: [f"{c.test_id} [{c.target}]" for c in result.cases if c.change == change]
                      for change in ("regressed", "improved", "flaky", "new", "removed")},
        }
    return pd.DataFrame(rows), summary

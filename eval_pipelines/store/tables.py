"""Row codecs: typed values <-> the rows of each table (schema.sql), in one place.

Every stage hands typed values (``Suite``, ``ModelOutput``, ``Grade``,
``CaseScore``, ``TrialResult``) to an ``encode`` here and gets them back from a
``decode`` here; no other module knows a column name. Every row carries the
partition columns (:func:`partition_columns`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping

import pandas as pd
from pydantic import TypeAdapter

from eval_pipelines.analysis.metrics import TrialResult
from eval_pipelines.grading.base import Grade, OutputKey
from eval_pipelines.grading.dispatch import GRADE_COLUMNS
from eval_pipelines.grading.scoring import CaseScore
from eval_pipelines.run.targets.base import ModelOutput
from eval_pipelines.run.targets.config import TargetConfig
from eval_pipelines.run.tracing.spans import OutputTrace, spans_from_json, spans_to_json
from eval_pipelines.suite.models import WITH_SKILL, Suite, TestCase
from eval_pipelines.store.connection import none_if_missing as val
from eval_pipelines.store.partition import Partition

if TYPE_CHECKING:
    from eval_pipelines.analysis.regression import Comparison, RegressionPolicy
    from eval_pipelines.formats.loader import LoadedSkill

_TARGETS = TypeAdapter(list[TargetConfig])


def now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def records(frame: pd.DataFrame, batch: int = 5000) -> Iterator[dict[str, Any]]:
    """``frame.to_dict("records")`` one batch at a time: the same dicts, but a 100,000-row table
    never has a dict per row all at once (~1 KB each for a model_outputs or test_results row)."""
    for start in range(0, len(frame), batch):
        yield from frame.iloc[start:start + batch].to_dict("records")


def partition_columns(partition: Partition, run_id: str | None, suite: str) -> dict[str, Any]:
    return {"eval_date": partition.eval_date, "skill_version": partition.skill_version,
            "skill": partition.skill, "version": partition.version, "run_id": run_id, "suite": suite}


def _frame(rows: list[dict[str, Any]], partition: Partition, run_id: str | None, suite: str,
           columns: list[str]) -> pd.DataFrame:
    base = partition_columns(partition, run_id, suite)
    if not rows:
        return pd.DataFrame(columns=[*base, *columns])
    return pd.DataFrame(rows, columns=columns).assign(**base)[[*base, *columns]]


# ---- suites ------------------------------------------------------------------------

@dataclass(frozen=True)
class StoredSuite:
    """The partition's suite as every later stage sees it; treat it as read-only."""

    suite: Suite
    targets: dict[str, TargetConfig]
    package_root: Path


def encode_suite(loaded: "LoadedSkill", partition: Partition, run_id: str | None) -> pd.DataFrame:
    suite = loaded.suite
    used = sorted({n for case in suite.tests for n in suite.targets_for(case)} | ({suite.judge} - {None}))
    row = partition_columns(partition, run_id, suite.name) | {
        "format": suite.format, "source_file": suite.source_file, "profile": suite.profile,
        "package_hash": loaded.package.content_hash, "package_root": str(loaded.package.root),
        "n_tests": len(suite.tests),
        # Target settings hold environment variable *names*, never secrets.
        "targets": to_json([loaded.targets[n].model_dump() for n in used]),
        "trials": suite.execution.trials.count, "thresholds": to_json(suite.thresholds),
        "warnings": to_json(loaded.warnings), "spec": suite.model_dump_json(), "loaded_at": now(),
    }
    return pd.DataFrame([row])


_PARSED_SUITES: dict[tuple, StoredSuite] = {}


def decode_suite(rows: pd.DataFrame) -> StoredSuite | None:
    """The stored suite, or None when the partition has none.

    Parsing a 100,000-case spec takes seconds, so the parsed suite is kept per
    stored row (partition, run, load time, package hash): the stages of one run
    that each read it back parse it once.
    """
    if rows.empty:
        return None
    row = rows.iloc[0]
    key = (row["eval_date"], row["skill_version"], row["run_id"], str(row["loaded_at"]), row["package_hash"],
           len(row["spec"]))
    cached = _PARSED_SUITES.get(key)
    if cached is None:
        targets = {t.name: t for t in _TARGETS.validate_json(row["targets"])}
        cached = StoredSuite(Suite.model_validate_json(row["spec"]), targets, Path(row["package_root"]))
        _PARSED_SUITES.clear()  # one partition at a time per process is the common case
        _PARSED_SUITES[key] = cached
    return cached


# ---- datasets and test cases --------------------------------------------------------

def encode_datasets(suite: Suite, partition: Partition, run_id: str | None) -> pd.DataFrame:
    """One row per external file the suite's cases came from (not the suite file), with its hash."""
    counts: dict[str, int] = {}
    for case in suite.tests:
        if case.source_file and case.source_file != suite.source_file:
            counts[case.source_file] = counts.get(case.source_file, 0) + 1
    rows = []
    for path, n in sorted(counts.items()):
        file = Path(path)
        data = file.read_bytes() if file.is_file() else b""
        rows.append({"path": path, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data),
                     "test_cases": n})
    return _frame(rows, partition, run_id, suite.name, ["path", "sha256", "bytes", "test_cases"])


def encode_test_cases(suite: Suite, partition: Partition, run_id: str | None) -> pd.DataFrame:
    return _test_case_frame(suite.tests, partition, run_id, suite.name)


def encode_test_case_batches(suite: Suite, partition: Partition, run_id: str | None,
                             size: int = 10_000) -> Iterator[pd.DataFrame]:
    """The rows of :func:`encode_test_cases`, ``size`` cases at a time: a 100,000-case suite's
    rows (each case's messages, assertions and metadata as JSON) are never all in memory at once."""
    for start in range(0, max(len(suite.tests), 1), size):
        yield _test_case_frame(suite.tests[start:start + size], partition, run_id, suite.name)


def _test_case_frame(cases: list[TestCase], partition: Partition, run_id: str | None, suite: str) -> pd.DataFrame:
    rows = [{
        "test_id": case.id, "name": case.name, "category": case.category, "input": case.user_text,
        "messages": to_json([m.model_dump() for m in case.input]),
        "expected": None if case.expected_output is None else to_json(case.expected_output),
        "criteria": case.criteria, "assertions": to_json([a.model_dump() for a in case.assertions]),
        "tags": to_json(case.tags), "metadata": to_json(case.metadata),
        "source_file": case.source_file, "source_line": case.source_line,
    } for case in cases]
    return _frame(rows, partition, run_id, suite,
                  ["test_id", "name", "category", "input", "messages", "expected", "criteria", "assertions",
                   "tags", "metadata", "source_file", "source_line"])


# ---- model outputs -------------------------------------------------------------------

OUTPUT_COLUMNS = ["test_id", "target", "trial", "output", "error", "latency_ms", "prompt_tokens",
                  "completion_tokens", "cost_usd", "cached", "attempts", "llm_calls", "tool_calls", "trace",
                  "created_at", "finish_reason", "logprobs", "trace_id", "spans", "trace_error",
                  "files", "transcript", "run_metrics", "limits", "configuration"]


def _json_or_none(value: Any) -> Any:
    text = val(value)
    return json.loads(text) if isinstance(text, str) else None


def encode_outputs(outputs: Iterable[ModelOutput], partition: Partition, run_id: str | None,
                   suite: str) -> pd.DataFrame:
    created = now()
    rows = [{
        "test_id": o.test_id, "target": o.target, "trial": o.trial, "output": o.output, "error": o.error,
        "latency_ms": o.latency_ms, "prompt_tokens": o.prompt_tokens, "completion_tokens": o.completion_tokens,
        "cost_usd": o.cost_usd, "cached": o.cached, "attempts": o.attempts, "llm_calls": o.llm_calls,
        "tool_calls": o.tool_calls, "trace": to_json(o.trace), "created_at": created,
        "finish_reason": o.finish_reason, "logprobs": None if o.logprobs is None else to_json(o.logprobs),
        "trace_id": o.otel.trace_id if o.otel else None, "spans": spans_to_json(o.otel.spans) if o.otel else None,
        "trace_error": o.otel.error if o.otel else None,
        # Agent runs only (run/targets/agent/): NULL for every other target.
        "files": to_json(o.files) if o.files else None, "transcript": to_json(o.transcript) if o.transcript else None,
        "run_metrics": None if o.run_metrics is None else to_json(o.run_metrics),
        "limits": None if o.limits is None else to_json(o.limits),
        "configuration": o.configuration,
    } for o in outputs]
    return _frame(rows, partition, run_id, suite, OUTPUT_COLUMNS)


def _int_or_none(value: Any) -> int | None:
    value = val(value)
    return None if value is None else int(value)


def decode_outputs(rows: pd.DataFrame) -> list[ModelOutput]:
    return [ModelOutput(
        test_id=r["test_id"], target=r["target"], trial=int(r["trial"]),
        output=val(r["output"]), error=val(r["error"]), latency_ms=val(r["latency_ms"]),
        prompt_tokens=_int_or_none(r["prompt_tokens"]), completion_tokens=_int_or_none(r["completion_tokens"]),
        cost_usd=val(r["cost_usd"]), cached=bool(r["cached"]), attempts=int(r["attempts"]),
        llm_calls=int(r["llm_calls"]), tool_calls=int(r["tool_calls"]),
        trace=json.loads(r["trace"]) if r["trace"] else [],
        finish_reason=val(r.get("finish_reason")),
        logprobs=json.loads(r["logprobs"]) if isinstance(val(r.get("logprobs")), str) else None,
        otel=_otel(r),
        files=_json_or_none(r.get("files")) or [], transcript=_json_or_none(r.get("transcript")) or [],
        run_metrics=_json_or_none(r.get("run_metrics")), limits=_json_or_none(r.get("limits")),
        configuration=val(r.get("configuration")) or WITH_SKILL,
    ) for r in records(rows)]


def _otel(row: dict[str, Any]) -> OutputTrace | None:
    trace_id = val(row.get("trace_id"))
    if not isinstance(trace_id, str):
        return None
    spans = val(row.get("spans"))
    return OutputTrace(trace_id, spans_from_json(spans) if isinstance(spans, str) else (),
                       val(row.get("trace_error")))


# ---- grades --------------------------------------------------------------------------

def encode_grades(graded: pd.DataFrame, partition: Partition, run_id: str | None, suite: str,
                  configuration: str = WITH_SKILL) -> pd.DataFrame:
    """``graded`` has ``dispatch.GRADE_COLUMNS`` (batch grading builds columns, not ``Grade``s)."""
    base = partition_columns(partition, run_id, suite)
    return graded.assign(**base, configuration=configuration)[[*base, *GRADE_COLUMNS, "configuration"]]


def decode_grades(rows: pd.DataFrame) -> dict[OutputKey, list[Grade]]:
    """Grades by output, in assertion order (details are left out: scoring does not read them)."""
    by_output: dict[OutputKey, list[Grade]] = {}
    for r in records(rows):
        by_output.setdefault((r["test_id"], r["target"], int(r["trial"])), []).append(Grade(
            assertion_index=int(r["assertion_index"]), assertion_type=r["assertion_type"],
            assertion_name=r["assertion_name"], score=float(r["score"]), passed=bool(r["passed"]),
            status=r["status"], reason=r["reason"], weight=float(r["weight"]),
            required=json.loads(r["required"]), details={},
            calibrated_score=None if (c := val(r.get("calibrated_score"))) is None else float(c),
        ))
    for grades in by_output.values():
        grades.sort(key=lambda g: g.assertion_index)
    return by_output


# ---- test results --------------------------------------------------------------------

RESULT_COLUMNS = ["test_id", "target", "trial", "category", "score", "verdict", "status", "reason", "configuration"]


def encode_results(scored: Iterable[tuple[OutputKey, str | None, CaseScore]], partition: Partition,
                   run_id: str | None, suite: str, configuration: str = WITH_SKILL) -> pd.DataFrame:
    """``scored``: ((test_id, target, trial), category, score) per output."""
    rows = [{"test_id": key[0], "target": key[1], "trial": key[2], "category": category,
             "score": s.score, "verdict": s.verdict, "status": s.status, "reason": s.reason,
             "configuration": configuration}
            for key, category, s in scored]
    return _frame(rows, partition, run_id, suite, RESULT_COLUMNS)


def decode_trials(results: pd.DataFrame, outputs: Iterable[ModelOutput] = ()) -> list[TrialResult]:
    """Each stored result as a ``TrialResult``, with the measurements of its output when given."""
    measured = {(o.test_id, o.target, o.trial): o for o in outputs}
    trials = []
    for r in records(results):
        o = measured.get((r["test_id"], r["target"], int(r["trial"])))
        score = val(r["score"])
        trials.append(TrialResult(
            test_id=r["test_id"], target=r["target"], trial=int(r["trial"]), status=r["status"],
            verdict=r["verdict"] if isinstance(r["verdict"], str) else None,
            score=None if score is None else float(score),
            latency_ms=o.latency_ms if o else None, cost_usd=o.cost_usd if o else None,
            prompt_tokens=o.prompt_tokens if o else None,
            completion_tokens=o.completion_tokens if o else None,
        ))
    return trials


# ---- metrics -------------------------------------------------------------------------

def encode_metrics(values: Mapping[str, Mapping[str, float]], partition: Partition, run_id: str | None,
                   suite: str, configuration: str = WITH_SKILL) -> pd.DataFrame:
    """``values``: target ('*' = all) -> metric -> value."""
    rows = [{"target": target, "metric": metric, "value": float(value), "configuration": configuration}
            for target, metrics_ in sorted(values.items()) for metric, value in sorted(metrics_.items())]
    return _frame(rows, partition, run_id, suite, ["target", "metric", "value", "configuration"])


def decode_metrics(rows: pd.DataFrame, target: str = "*", configuration: str | None = None) -> dict[str, float]:
    """One target's metrics; of one configuration (default: the first stored, with_skill when there)."""
    if configuration is None and "configuration" in rows.columns and len(rows):
        stored = set(rows["configuration"].fillna(WITH_SKILL))
        configuration = WITH_SKILL if WITH_SKILL in stored else sorted(stored)[0]
    return {r["metric"]: r["value"] for r in rows.to_dict("records")
            if r["target"] == target and (configuration is None or (val(r.get("configuration")) or WITH_SKILL)
                                          == configuration)}


def encode_case_metrics(per_case: Mapping[tuple[str, str], Mapping[str, float]], partition: Partition,
                        run_id: str | None, suite: str, configuration: str = WITH_SKILL) -> pd.DataFrame:
    """``per_case``: (target, test_id) -> metric -> value. Built as columns: some
    eight rows per case, and a dict per row held hundreds of MB at 100,000 cases."""
    base = partition_columns(partition, run_id, suite)
    test_ids, targets, names, values = [], [], [], []
    for (target, test_id), metrics_ in sorted(per_case.items()):
        for metric, value in sorted(metrics_.items()):
            test_ids.append(test_id)
            targets.append(target)
            names.append(metric)
            values.append(float(value))
    columns = [*base, "test_id", "target", "metric", "value", "configuration"]
    if not values:
        return pd.DataFrame(columns=columns)
    frame = pd.DataFrame({"test_id": test_ids, "target": targets, "metric": names, "value": values})
    return frame.assign(**base, configuration=configuration)[columns]


# ---- regressions ---------------------------------------------------------------------

def encode_regressions(comparisons: Iterable[tuple[str, Partition, "Comparison"]], policy: "RegressionPolicy",
                       partition: Partition, run_id: str | None, suite: str,
                       configuration: str = WITH_SKILL) -> pd.DataFrame:
    """``comparisons``: (comparison name, baseline partition, result) per baseline."""
    rows: list[dict[str, Any]] = []
    empty = {"baseline_score": None, "current_score": None, "ci_low": None, "ci_high": None, "q_value": None,
             "significant": None, "large_enough": None, "verdict": None}
    policy_detail = {"alpha": policy.alpha, "min_effect": policy.min_effect, "effect_rule": policy.effect_rule,
                     "case_fdr": policy.case_fdr, "case_labels": policy.case_labels, "case_alpha": policy.case_alpha}
    for comparison, baseline, result in comparisons:
        common = {"comparison": comparison, "baseline_skill_version": baseline.skill_version,
                  "baseline_eval_date": baseline.eval_date}
        for case in result.cases:
            rows.append(common | empty | {
                "level": "case", "target": case.target, "test_id": case.test_id, "change": case.change,
                "baseline_pass_rate": case.baseline.pass_rate if case.baseline else None,
                "current_pass_rate": case.current.pass_rate if case.current else None,
                "pass_rate_delta": case.pass_rate_delta,
                "baseline_score": case.baseline.mean_score if case.baseline else None,
                "current_score": case.current.mean_score if case.current else None,
                "p_value": case.p_value, "adjusted_p": case.q_value, "q_value": case.q_value,
                "detail": to_json({"baseline_trials": case.baseline.trials if case.baseline else 0,
                                   "current_trials": case.current.trials if case.current else 0,
                                   "drop_p": case.drop_p}),
            })
        for t in result.targets:
            rows.append(common | empty | {
                "level": "target", "target": t.target, "test_id": None, "change": t.verdict,
                "baseline_pass_rate": t.baseline_pass_rate, "current_pass_rate": t.current_pass_rate,
                "pass_rate_delta": t.pass_rate_delta,
                "p_value": t.p_value, "adjusted_p": t.adjusted_p, "ci_low": t.ci_low, "ci_high": t.ci_high,
                "significant": t.significant, "large_enough": t.large_enough, "verdict": t.wording,
                "detail": to_json({"cases_compared": t.cases_compared, "mcnemar_b": t.mcnemar_b,
                                   "mcnemar_c": t.mcnemar_c, "mcnemar_p": t.mcnemar_p,
                                   "score_delta": t.score_delta, "drivers": t.drivers,
                                   "regressed": t.regressed, "interval_level": policy.interval_level}
                                  | policy_detail),
            })
        for b in result.breakage:
            rows.append(common | empty | {
                "level": "breakage", "target": b.target, "test_id": None,
                "change": "broken" if b.broken else "within_chance",
                "baseline_pass_rate": None, "current_pass_rate": None, "pass_rate_delta": None,
                "p_value": b.p_value, "adjusted_p": b.adjusted_p, "significant": b.broken, "verdict": b.wording,
                "detail": to_json({"cases_compared": b.cases_compared, "significant_drops": b.significant_drops,
                                   "significant_rises": b.significant_rises, "labelled": b.labelled,
                                   "dropped": b.dropped} | policy_detail),
            })
    columns = ["comparison", "baseline_skill_version", "baseline_eval_date", "level", "target", "test_id",
               "change", "baseline_pass_rate", "current_pass_rate", "pass_rate_delta", "baseline_score",
               "current_score", "p_value", "adjusted_p", "ci_low", "ci_high", "detail", "q_value",
               "significant", "large_enough", "verdict", "configuration"]
    for row in rows:
        row["configuration"] = configuration
    return _frame(rows, partition, run_id, suite, columns)

"""skill-creator's ``benchmark.json`` from the store (``eval-pipelines export --format skill-creator``).

skill-creator's viewer (``eval-viewer/viewer.html``) reads the file's field names literally, so
they are those of ``references/schemas.md`` and ``scripts/aggregate_benchmark.py`` (see
``BENCHMARK_FIELDS``): ``metadata``; ``runs[]`` with ``eval_id``, ``eval_name``, ``configuration``,
``run_number``, ``result`` {``pass_rate``, ``passed``, ``failed``, ``total``, ``time_seconds``,
``tokens``, ``tool_calls``, ``errors``}, ``expectations[]`` {``text``, ``passed``, ``evidence``} and
``notes``; ``run_summary`` with each configuration's ``pass_rate``, ``time_seconds`` and ``tokens``
as {``mean``, ``stddev``, ``min``, ``max``} (all runs of all evals pooled, sample standard
deviation, rounded to 4 places, as ``calculate_stats``) and ``delta`` (first configuration minus
the second, in name order, as signed strings ``+0.50``, ``+1.2``, ``+120``); top-level ``notes``.

One benchmark per skill version, from its latest evaluation date. A run is a case × target ×
trial: ``run_number`` is the trial + 1 (skill-creator's ``run-1``...). Its ``result`` counts the
case's expectations (the ``expectations`` grade); a case graded otherwise counts as one
expectation, met when the case passed. ``configuration`` is the stored one (``with_skill`` /
``without_skill``, the ``configuration`` column), so ``run_summary`` holds both and ``delta`` is
with minus without; with several targets, each target's runs are a configuration of their own,
``<configuration>/<target>``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime, timezone
from typing import Any, Iterable

import duckdb

from eval_pipelines.analysis.configurations import stats

# The documented fields (schemas.md "benchmark.json"), as the viewer reads them: name -> JSON type.
BENCHMARK_FIELDS: dict[str, type | tuple[type, ...]] = {
    "metadata": dict, "metadata.skill_name": str, "metadata.skill_path": str,
    "metadata.executor_model": str, "metadata.analyzer_model": str, "metadata.timestamp": str,
    "metadata.evals_run": list, "metadata.runs_per_configuration": int,
    "runs": list, "runs[].eval_id": (int, str), "runs[].eval_name": str, "runs[].configuration": str,
    "runs[].run_number": int, "runs[].result": dict, "runs[].result.pass_rate": float,
    "runs[].result.passed": int, "runs[].result.failed": int, "runs[].result.total": int,
    "runs[].result.time_seconds": float, "runs[].result.tokens": int, "runs[].result.tool_calls": int,
    "runs[].result.errors": int, "runs[].expectations": list, "runs[].expectations[].text": str,
    "runs[].expectations[].passed": bool, "runs[].expectations[].evidence": str, "runs[].notes": list,
    "run_summary": dict, "run_summary.<configuration>.pass_rate": dict,
    "run_summary.<configuration>.time_seconds": dict, "run_summary.<configuration>.tokens": dict,
    "run_summary.<configuration>.<stat>.mean": float, "run_summary.<configuration>.<stat>.stddev": float,
    "run_summary.<configuration>.<stat>.min": float, "run_summary.<configuration>.<stat>.max": float,
    "run_summary.delta": dict, "run_summary.delta.pass_rate": str, "run_summary.delta.time_seconds": str,
    "run_summary.delta.tokens": str, "notes": list,
}
STATS = ("pass_rate", "time_seconds", "tokens")
DELTA_FORMATS = {"pass_rate": "{:+.2f}", "time_seconds": "{:+.1f}", "tokens": "{:+.0f}"}

RUNS_SQL = """
WITH latest AS (SELECT max(eval_date) AS eval_date FROM test_results WHERE skill_version = $sv)
SELECT r.test_id, c.name, r.target, r.configuration, r.trial, r.verdict, r.status, o.error, o.latency_ms,
       o.prompt_tokens, o.completion_tokens, o.tool_calls,
       (SELECT any_value(g.details) FROM grades g
         WHERE g.eval_date = r.eval_date AND g.skill_version = r.skill_version AND g.test_id = r.test_id
           AND g.target = r.target AND g.trial = r.trial AND g.configuration = r.configuration
           AND g.assertion_type = 'expectations') AS graded,
       (SELECT any_value(json_extract_string(g.details, '$.judge_model')) FROM grades g
         WHERE g.eval_date = r.eval_date AND g.skill_version = r.skill_version AND g.test_id = r.test_id
           AND g.target = r.target AND g.trial = r.trial AND g.configuration = r.configuration) AS judge_model
FROM test_results r, latest
LEFT JOIN test_cases c ON c.eval_date = r.eval_date AND c.skill_version = r.skill_version AND c.test_id = r.test_id
LEFT JOIN model_outputs o ON o.eval_date = r.eval_date AND o.skill_version = r.skill_version
      AND o.test_id = r.test_id AND o.target = r.target AND o.trial = r.trial AND o.configuration = r.configuration
WHERE r.skill_version = $sv AND r.eval_date = latest.eval_date
ORDER BY r.test_id, r.target, r.configuration, r.trial
"""


def skill_versions(con: duckdb.DuckDBPyConnection, skills: Iterable[str] = ()) -> list[str]:
    """Skill versions with results, limited to ``skills`` (a name or ``name@version``) when given."""
    rows = [r[0] for r in con.execute("SELECT DISTINCT skill_version FROM test_results ORDER BY 1").fetchall()]
    wanted = list(skills)
    return [sv for sv in rows if not wanted or any(sv == w or sv.split("@", 1)[0] == w for w in wanted)]


def load_benchmark(con: duckdb.DuckDBPyConnection, skill_version: str) -> dict[str, Any]:
    suite = con.execute("SELECT skill, package_root, targets, loaded_at FROM suites WHERE skill_version = ? "
                        "ORDER BY eval_date DESC, loaded_at DESC LIMIT 1", [skill_version]).fetchone()
    skill, root, targets_json, loaded_at = suite if suite else (skill_version.split("@")[0], "", "[]", None)
    targets = {t["name"]: t for t in json.loads(targets_json or "[]")}
    cursor = con.execute(RUNS_SQL, {"sv": skill_version})
    columns = [d[0] for d in cursor.description]
    rows = [dict(zip(columns, r)) for r in cursor.fetchall()]
    stamp = loaded_at.replace(tzinfo=timezone.utc).isoformat() if isinstance(loaded_at, datetime) else ""
    return build_benchmark(rows, targets, skill_name=skill, skill_path=root, timestamp=stamp)


def configuration(row: dict[str, Any], several_targets: bool) -> str:
    stored = row.get("configuration") or "with_skill"
    return f"{stored}/{row['target']}" if several_targets else stored


def _eval_id(test_id: str) -> int | str:
    return int(test_id) if test_id.isdigit() else test_id


def _run(row: dict[str, Any], several_targets: bool) -> dict[str, Any]:
    graded = json.loads(row["graded"]) if isinstance(row["graded"], str) else row["graded"]
    if graded and graded.get("expectations"):
        expectations = [{"text": str(e.get("text")), "passed": bool(e.get("passed")),
                         "evidence": str(e.get("evidence") or "")} for e in graded["expectations"]]
    else:  # judged on expected_output (or errored): one expectation, the case's verdict
        expectations = [{"text": "the case passes", "passed": row["verdict"] == "pass",
                         "evidence": row["error"] or f"verdict {row['verdict'] or row['status']}"}]
    passed = sum(e["passed"] for e in expectations)
    total = len(expectations)
    tokens = (row["prompt_tokens"] or 0) + (row["completion_tokens"] or 0)
    return {
        "eval_id": _eval_id(str(row["test_id"])), "eval_name": row["name"] or f"Eval {row['test_id']}",
        "configuration": configuration(row, several_targets), "run_number": int(row["trial"]) + 1,
        "result": {"pass_rate": round(passed / total, 4), "passed": passed, "failed": total - passed,
                   "total": total, "time_seconds": round((row["latency_ms"] or 0.0) / 1000, 3),
                   "tokens": int(tokens), "tool_calls": int(row["tool_calls"] or 0),
                   "errors": 1 if row["error"] else 0},
        "expectations": expectations,
        "notes": [f"error: {row['error']}"] if row["error"] else [],
    }




def build_benchmark(rows: list[dict[str, Any]], targets: dict[str, dict[str, Any]], *, skill_name: str,
                    skill_path: str, timestamp: str) -> dict[str, Any]:
    several = len({r["target"] for r in rows}) > 1
    runs = [_run(row, several) for row in rows]
    by_config: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for run in runs:
        by_config[run["configuration"]].append(run)
    summary: dict[str, Any] = {
        config: {name: stats([float(r["result"][name]) for r in items]) for name in STATS}
        for config, items in sorted(by_config.items())}
    configs = list(summary)
    primary = summary[configs[0]] if configs else {}
    baseline = summary[configs[1]] if len(configs) > 1 else {}
    summary["delta"] = {name: DELTA_FORMATS[name].format(
        (primary.get(name, {}).get("mean", 0.0)) - (baseline.get(name, {}).get("mean", 0.0))) for name in STATS}
    executor = sorted({str((targets.get(r["target"]) or {}).get("model") or r["target"]) for r in rows})
    judges = sorted({str(r["judge_model"]) for r in rows if r["judge_model"]})
    per_config = {config: max((r["run_number"] for r in items), default=0) for config, items in by_config.items()}
    return {
        "metadata": {"skill_name": skill_name, "skill_path": skill_path,
                     "executor_model": ", ".join(executor), "analyzer_model": ", ".join(judges),
                     "timestamp": timestamp,
                     "evals_run": sorted({r["eval_id"] for r in runs}, key=lambda i: (isinstance(i, str), i)),
                     "runs_per_configuration": max(per_config.values(), default=0)},
        "runs": runs,
        "run_summary": summary,
        "notes": [],
    }

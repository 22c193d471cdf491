"""A run's metadata for a report: suite, run ids, timing, thresholds and the
environment it ran in.

The environment never carries secrets: target settings in the store hold the
*names* of environment variables only, and of those only a whitelist of
descriptive keys is copied (name, type, model, base URL without credentials,
command, recording path, temperature).
"""

from __future__ import annotations

import platform
import sys
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from eval_pipelines.reports.loading import as_float, as_int, dict_rows, first_row, from_json
from eval_pipelines.reports.records import RunInfo

SAFE_TARGET_KEYS = ("name", "type", "model", "base_url", "command", "path", "temperature")


def safe_url(url: Any) -> Any:
    if not isinstance(url, str):
        return url
    parts = urlsplit(url)
    if parts.username or parts.password:
        host = parts.hostname or ""
        if parts.port:
            host += f":{parts.port}"
        parts = parts._replace(netloc=host)
    # Query strings can carry tokens (?key=...): drop them.
    return urlunsplit(parts._replace(query="", fragment=""))


def safe_target(config: dict[str, Any]) -> dict[str, Any]:
    """The descriptive settings of a target, never a credential."""
    out = {k: config[k] for k in SAFE_TARGET_KEYS if config.get(k) is not None}
    if "base_url" in out:
        out["base_url"] = safe_url(out["base_url"])
    return out


def load_run_info(con, skill: str, version: str, eval_date: str) -> RunInfo:  # noqa: ANN001
    key = f"{skill}@{version}"
    # The suite's ``spec`` holds every case (some 60 MB of JSON for 100,000 cases): the report
    # reads one field of it, so the database extracts that field instead of Python parsing it all.
    suites = dict_rows(con, "SELECT suite, format, package_hash, targets, trials, thresholds, warnings, n_tests, "
                            "loaded_at, json_extract_string(spec, '$.reporting') AS reporting "
                            "FROM suites WHERE skill_version = ? AND eval_date = ? ORDER BY loaded_at",
                       [key, eval_date])
    suite = suites[0] if suites else {}
    run_ids: list[str] = []
    for table in ("test_results", "grades", "model_outputs", "test_cases", "suites"):
        for (run_id,) in con.execute(
                f"SELECT DISTINCT run_id FROM {table} WHERE skill_version = ? AND eval_date = ? "
                "AND run_id IS NOT NULL ORDER BY run_id", [key, eval_date]).fetchall():
            if run_id not in run_ids:
                run_ids.append(run_id)
    timing = first_row(
        con, "SELECT max(created_at), sum(latency_ms), list(DISTINCT target ORDER BY target) FROM model_outputs "
        "WHERE skill_version = ? AND eval_date = ?", [key, eval_date])
    last_output, latency_sum, used_targets = timing
    result_targets = [r[0] for r in con.execute(
        "SELECT DISTINCT target FROM test_results WHERE skill_version = ? AND eval_date = ? ORDER BY target",
        [key, eval_date]).fetchall()]
    used = set(used_targets or []) | set(result_targets)
    loaded_at = suite.get("loaded_at")
    duration, basis = None, "unknown"
    if loaded_at is not None and last_output is not None and (last_output - loaded_at).total_seconds() > 0:
        duration, basis = (last_output - loaded_at).total_seconds(), "suite loaded to last output written"
    elif latency_sum is not None:
        duration, basis = float(latency_sum) / 1000.0, "sum of call latencies"
    configs = [c for c in from_json(suite.get("targets"), []) if isinstance(c, dict)]
    targets = [safe_target(c) for c in configs if c.get("name") in used]
    known = {t["name"] for t in targets}
    targets += [{"name": name} for name in sorted(used - known)]
    reporting = from_json(suite.get("reporting"))
    environment = {
        "model": ", ".join(t.get("model") or t["name"] for t in targets) or None,
        "version": version,
        "targets": targets,
        "trials": as_int(suite.get("trials")),
        "package_hash": suite.get("package_hash"),
        "python": platform.python_version(),
        "duckdb": module_version("duckdb"),
        "eval_pipelines": module_version("eval-pipelines"),
        "platform": f"{platform.system()} {platform.machine()}".strip(),
    }
    thresholds = {k: float(v) for k, v in (from_json(suite.get("thresholds"), {}) or {}).items()
                  if as_float(v) is not None}
    results_run = first_row(con, "SELECT max(run_id) FROM test_results WHERE skill_version = ? AND eval_date = ?",
                            [key, eval_date])[0]
    return RunInfo(
        skill=skill, version=version, skill_version=key, eval_date=eval_date,
        suite=suite.get("suite") or skill, suite_format=suite.get("format"),
        run_id=results_run or (run_ids[0] if run_ids else None), run_ids=run_ids,
        timestamp=loaded_at or last_output, duration_seconds=duration, duration_basis=basis,
        environment=environment, thresholds=thresholds, trials=as_int(suite.get("trials")),
        n_tests=as_int(suite.get("n_tests")), reporting=reporting if isinstance(reporting, dict) else None,
        warnings=[str(w) for w in from_json(suite.get("warnings"), []) or []],
    )


def module_version(name: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:  # noqa: BLE001 - not installed (source checkout)
        module = sys.modules.get(name)
        return getattr(module, "__version__", None)

"""Everything a report shows, loaded from DuckDB into typed dataclasses.

``load_report(db, skill)`` picks the latest version (semantic-version order)
and its latest evaluation date unless told otherwise, and compares it with a
baseline: the suite's pinned ``baseline`` or the previous version with results
(``baselines.choose_baseline``), or an explicit ``against`` version
(``"none"`` for a run report without comparison).

The environment never carries secrets: target settings in the store hold the
*names* of environment variables only, and of those only a whitelist of
descriptive keys is copied (name, type, model, base URL without credentials,
command, recording path, temperature).
"""

from __future__ import annotations

import json
import platform
import sys
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from eval_pipelines.analysis.versions import version_sort_key
from eval_pipelines.grading.registry import get_grader
from eval_pipelines.store.connection import connect
from eval_pipelines.store.partition import Partition
from eval_pipelines.store.queries import previous_version

NO_BASELINE = "none"
UNCATEGORISED = "uncategorised"
COUNTED = ("graded", "error")  # statuses that count in pass rates (seed 002)
SAFE_TARGET_KEYS = ("name", "type", "model", "base_url", "command", "path", "temperature")


class ReportError(ValueError):
    """An expected problem (unknown skill, version or date): one line for the user."""


def grader_family(assertion_type: str) -> str:
    """code, model or human: the grader's own metadata (``Grader.family``), not a list kept here."""
    grader = get_grader(assertion_type)
    return grader.grader_family() if grader is not None else "code"


@dataclass(frozen=True)
class Grade:
    index: int
    type: str
    name: str
    family: str  # code | model | human
    weight: float
    required: Any
    score: float
    passed: bool
    status: str
    reason: str
    details: dict[str, Any]

    @property
    def failing(self) -> bool:
        return not self.passed and self.status in COUNTED


@dataclass(frozen=True)
class BaselineCase:
    version: str
    eval_date: str
    output: str | None
    error: str | None
    verdict: str | None
    status: str
    score: float | None
    reason: str

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"


@dataclass
class CaseResult:
    test_id: str
    name: str | None
    category: str
    target: str
    trial: int
    input: str
    expected: Any
    criteria: str | None
    output: str | None
    error: str | None
    verdict: str | None
    status: str
    score: float | None
    reason: str
    latency_ms: float | None = None
    cost_usd: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached: bool = False
    grades: list[Grade] = field(default_factory=list)
    baseline: BaselineCase | None = None
    change: str | None = None  # regressed | fixed | changed | same | new (comparisons only)
    flaky: bool = False

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    @property
    def counted(self) -> bool:
        """Counts in pass rates: graded or error (not-evaluated and pending are left out)."""
        return self.status in COUNTED

    @property
    def failed(self) -> bool:
        return self.counted and not self.passed

    @property
    def outcome(self) -> str:
        """One word for filters: pass, borderline, fail, error, not_evaluated, pending_human."""
        if self.status in ("error", "not_evaluated", "pending_human"):
            return self.status
        return self.verdict or self.status

    @property
    def failing_grades(self) -> list[Grade]:
        return [g for g in self.grades if g.failing]


@dataclass(frozen=True)
class RunInfo:
    skill: str
    version: str
    skill_version: str
    eval_date: str
    suite: str
    suite_format: str | None
    run_id: str | None
    run_ids: list[str]
    timestamp: datetime | None
    duration_seconds: float | None
    duration_basis: str
    environment: dict[str, Any]
    thresholds: dict[str, float]
    trials: int | None
    n_tests: int | None
    reporting: dict[str, Any] | None = None


@dataclass(frozen=True)
class HistoryPoint:
    version: str
    eval_date: str
    pass_rate: float | None
    mean_score: float | None
    passed: int
    counted: int
    is_current: bool = False
    is_baseline: bool = False


@dataclass
class ReportData:
    run: RunInfo
    cases: list[CaseResult]
    metrics: dict[str, dict[str, float]]  # target ('*' = all) -> metric -> value
    baseline: RunInfo | None = None
    baseline_metrics: dict[str, float] = field(default_factory=dict)  # target '*'
    version_history: list[HistoryPoint] = field(default_factory=list)  # one point per version
    date_history: list[HistoryPoint] = field(default_factory=list)  # the version, per eval date
    removed: list[str] = field(default_factory=list)  # baseline case ids this run no longer has
    # The pipeline's statistical verdicts against this baseline (regressions table, level 'target'):
    # [{target, pass_rate_delta, ci_low, ci_high, p_value, adjusted_p, change}]
    significance: list[dict[str, Any]] = field(default_factory=list)

    @property
    def overall(self) -> dict[str, float]:
        return self.metrics.get("*", {})

    @property
    def compared(self) -> bool:
        return self.baseline is not None

    def changed(self, *kinds: str) -> list[CaseResult]:
        return [c for c in self.cases if c.change in kinds]

    def label_shape(self) -> tuple[bool, bool]:
        """(several targets?, several trials?): whether case labels name them.

        Computed once per report: asked for every case, recomputing it made
        rendering quadratic (123 s of a 10,000-case run, docs/benchmarks.md)."""
        key = (id(self.cases), len(self.cases))
        if getattr(self, "_label_shape_key", None) != key:
            self._label_shape = (len({c.target for c in self.cases}) > 1, len({c.trial for c in self.cases}) > 1)
            self._label_shape_key = key
        return self._label_shape


# ---- loading ------------------------------------------------------------------

def _json(value: Any, default: Any = None) -> Any:
    if value is None:
        return default
    if isinstance(value, (dict, list)):
        return value
    try:
        return json.loads(value)
    except (TypeError, ValueError):
        return value


def _num(value: Any) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if number != number else number  # NaN -> None


def _int(value: Any) -> int | None:
    number = _num(value)
    return None if number is None else int(number)


def _safe_url(url: Any) -> Any:
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
        out["base_url"] = _safe_url(out["base_url"])
    return out


def _first(con, sql: str, params: list[Any]) -> tuple | None:  # noqa: ANN001
    """The first row, fetching the whole result (DuckDB keeps a half-read result open on the connection)."""
    rows = con.execute(sql, params).fetchall()
    return rows[0] if rows else None


def _rows(con, sql: str, params: list[Any]) -> list[dict[str, Any]]:  # noqa: ANN001
    cursor = con.execute(sql, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def _versions(con, skill: str) -> list[str]:  # noqa: ANN001
    found = [r[0] for r in con.execute(
        "SELECT DISTINCT version FROM test_results WHERE skill = ?", [skill]).fetchall()]
    return sorted(found, key=version_sort_key)


def _resolve_version(skill: str, requested: str | None, versions: list[str], what: str = "version") -> str:
    if requested is None:
        return versions[-1]
    candidates = [requested, requested.partition("@")[2] if "@" in requested else requested]
    candidates += [c[1:] for c in candidates if c[:1] in ("v", "V")]
    for candidate in candidates:
        if candidate in versions:
            return candidate
    raise ReportError(f"no results for {what} {requested!r} of skill {skill!r} "
                      f"(versions with results: {', '.join(versions)})")


def _eval_dates(con, skill_version: str) -> list[str]:  # noqa: ANN001
    return [r[0] for r in con.execute(
        "SELECT DISTINCT eval_date FROM test_results WHERE skill_version = ? ORDER BY eval_date",
        [skill_version]).fetchall()]


def _run_info(con, skill: str, version: str, eval_date: str) -> RunInfo:  # noqa: ANN001
    key = f"{skill}@{version}"
    suites = _rows(con, "SELECT * FROM suites WHERE skill_version = ? AND eval_date = ? ORDER BY loaded_at",
                   [key, eval_date])
    suite = suites[0] if suites else {}
    run_ids: list[str] = []
    for table in ("test_results", "grades", "model_outputs", "test_cases", "suites"):
        for (run_id,) in con.execute(
                f"SELECT DISTINCT run_id FROM {table} WHERE skill_version = ? AND eval_date = ? "
                "AND run_id IS NOT NULL ORDER BY run_id", [key, eval_date]).fetchall():
            if run_id not in run_ids:
                run_ids.append(run_id)
    timing = _first(
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
    configs = [c for c in _json(suite.get("targets"), []) if isinstance(c, dict)]
    targets = [safe_target(c) for c in configs if c.get("name") in used]
    known = {t["name"] for t in targets}
    targets += [{"name": name} for name in sorted(used - known)]
    spec = _json(suite.get("spec"), {}) or {}
    environment = {
        "model": ", ".join(t.get("model") or t["name"] for t in targets) or None,
        "version": version,
        "targets": targets,
        "trials": _int(suite.get("trials")),
        "package_hash": suite.get("package_hash"),
        "python": platform.python_version(),
        "duckdb": _module_version("duckdb"),
        "eval_pipelines": _module_version("eval-pipelines"),
        "platform": f"{platform.system()} {platform.machine()}".strip(),
    }
    thresholds = {k: float(v) for k, v in (_json(suite.get("thresholds"), {}) or {}).items()
                  if _num(v) is not None}
    results_run = _first(con, "SELECT max(run_id) FROM test_results WHERE skill_version = ? AND eval_date = ?",
                         [key, eval_date])[0]
    return RunInfo(
        skill=skill, version=version, skill_version=key, eval_date=eval_date,
        suite=suite.get("suite") or skill, suite_format=suite.get("format"),
        run_id=results_run or (run_ids[0] if run_ids else None), run_ids=run_ids,
        timestamp=loaded_at or last_output, duration_seconds=duration, duration_basis=basis,
        environment=environment, thresholds=thresholds, trials=_int(suite.get("trials")),
        n_tests=_int(suite.get("n_tests")), reporting=spec.get("reporting") if isinstance(spec, dict) else None,
    )


def _module_version(name: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:  # noqa: BLE001 - not installed (source checkout)
        module = sys.modules.get(name)
        return getattr(module, "__version__", None)


_CASES_SQL = """
SELECT r.test_id, c.name, r.category AS result_category, c.category AS case_category,
       json_extract_string(c.metadata, '$.eval_type') AS eval_type,
       r.target, r.trial, c.input, c.expected, c.criteria,
       o.output, o.error, r.verdict, r.status, r.score, r.reason,
       o.latency_ms, o.cost_usd, o.prompt_tokens, o.completion_tokens, o.cached
FROM test_results r
LEFT JOIN test_cases c
       ON c.eval_date = r.eval_date AND c.skill_version = r.skill_version AND c.test_id = r.test_id
LEFT JOIN model_outputs o
       ON o.eval_date = r.eval_date AND o.skill_version = r.skill_version AND o.test_id = r.test_id
      AND o.target = r.target AND o.trial = r.trial
WHERE r.skill_version = ? AND r.eval_date = ?
ORDER BY c.rowid NULLS LAST, r.test_id, r.target, r.trial
"""


def _cases(con, skill_version: str, eval_date: str) -> list[CaseResult]:  # noqa: ANN001
    grades: dict[tuple[str, str, int], list[Grade]] = {}
    for g in _rows(con, "SELECT * FROM grades WHERE skill_version = ? AND eval_date = ? "
                        "ORDER BY test_id, target, trial, assertion_index", [skill_version, eval_date]):
        grades.setdefault((g["test_id"], g["target"], int(g["trial"])), []).append(Grade(
            index=int(g["assertion_index"]), type=g["assertion_type"], name=g["assertion_name"],
            family=grader_family(g["assertion_type"]), weight=float(g["weight"]),
            required=_json(g["required"], False), score=float(g["score"]), passed=bool(g["passed"]),
            status=g["status"], reason=g["reason"], details=_json(g["details"], {}) or {},
        ))
    flaky = {(t, g) for t, g in con.execute(
        "SELECT test_id, target FROM case_metrics WHERE skill_version = ? AND eval_date = ? "
        "AND metric = 'flaky' AND value = 1", [skill_version, eval_date]).fetchall()}
    cases = []
    for r in _rows(con, _CASES_SQL, [skill_version, eval_date]):
        key = (r["test_id"], r["target"], int(r["trial"]))
        cases.append(CaseResult(
            test_id=r["test_id"], name=r["name"],
            category=r["result_category"] or r["case_category"] or r["eval_type"] or UNCATEGORISED,
            target=r["target"], trial=int(r["trial"]), input=r["input"] or "",
            expected=_json(r["expected"]), criteria=r["criteria"], output=r["output"], error=r["error"],
            verdict=r["verdict"], status=r["status"], score=_num(r["score"]), reason=r["reason"] or "",
            latency_ms=_num(r["latency_ms"]), cost_usd=_num(r["cost_usd"]),
            prompt_tokens=_int(r["prompt_tokens"]), completion_tokens=_int(r["completion_tokens"]),
            cached=bool(r["cached"]), grades=grades.get(key, []),
            flaky=(r["test_id"], r["target"]) in flaky,
        ))
    return cases


def _metrics(con, skill_version: str, eval_date: str) -> dict[str, dict[str, float]]:  # noqa: ANN001
    out: dict[str, dict[str, float]] = {}
    for target, metric, value in con.execute(
            "SELECT target, metric, value FROM metrics WHERE skill_version = ? AND eval_date = ? "
            "ORDER BY target, metric", [skill_version, eval_date]).fetchall():
        out.setdefault(target, {})[metric] = float(value)
    return out


def _classify(case: CaseResult, base: BaselineCase | None) -> str:
    if base is None:
        return "new"
    if base.passed and case.counted and not case.passed:
        return "regressed"
    if case.passed and base.status in COUNTED and not base.passed:
        return "fixed"
    if case.verdict != base.verdict or case.status != base.status:
        return "changed"
    return "same"


def _attach_baseline(con, cases: list[CaseResult], skill: str, version: str,  # noqa: ANN001
                     eval_date: str) -> list[str]:
    """Set each case's baseline and change; returns the baseline's case ids missing from ``cases``."""
    key = f"{skill}@{version}"
    rows = _rows(con, """
        SELECT r.test_id, r.target, r.trial, r.verdict, r.status, r.score, r.reason, o.output, o.error
        FROM test_results r
        LEFT JOIN model_outputs o
               ON o.eval_date = r.eval_date AND o.skill_version = r.skill_version AND o.test_id = r.test_id
              AND o.target = r.target AND o.trial = r.trial
        WHERE r.skill_version = ? AND r.eval_date = ?""", [key, eval_date])
    exact = {(r["test_id"], r["target"], int(r["trial"])): r for r in rows}
    loose: dict[tuple[str, int], dict[str, Any]] = {}
    for r in rows:
        loose.setdefault((r["test_id"], int(r["trial"])), r)
    for case in cases:
        row = exact.get((case.test_id, case.target, case.trial)) or loose.get((case.test_id, case.trial))
        if row is not None:
            case.baseline = BaselineCase(
                version=version, eval_date=eval_date, output=row["output"], error=row["error"],
                verdict=row["verdict"], status=row["status"], score=_num(row["score"]), reason=row["reason"] or "")
        case.change = _classify(case, case.baseline)
    present = {c.test_id for c in cases}
    return sorted({r["test_id"] for r in rows} - present)


def _history(con, skill: str, versions: list[str], current: RunInfo,  # noqa: ANN001
             baseline: RunInfo | None) -> tuple[list[HistoryPoint], list[HistoryPoint]]:
    rows = _rows(con, """
        SELECT version, eval_date,
               max(value) FILTER (WHERE metric = 'pass_rate') AS pass_rate,
               max(value) FILTER (WHERE metric = 'mean_score') AS mean_score,
               max(value) FILTER (WHERE metric = 'passed') AS passed,
               max(value) FILTER (WHERE metric = 'graded') + coalesce(max(value) FILTER (WHERE metric = 'errors'), 0)
                   AS counted
        FROM metrics WHERE skill = ? AND target = '*'
        GROUP BY version, eval_date ORDER BY eval_date""", [skill])

    def point(r: dict[str, Any]) -> HistoryPoint:
        return HistoryPoint(
            version=r["version"], eval_date=r["eval_date"], pass_rate=_num(r["pass_rate"]),
            mean_score=_num(r["mean_score"]), passed=_int(r["passed"]) or 0, counted=_int(r["counted"]) or 0,
            is_current=(r["version"], r["eval_date"]) == (current.version, current.eval_date),
            is_baseline=baseline is not None and (r["version"], r["eval_date"]) == (baseline.version,
                                                                                     baseline.eval_date),
        )

    by_version: list[HistoryPoint] = []
    for version in versions:
        mine = [r for r in rows if r["version"] == version]
        if not mine:
            continue
        # The report's own run for the current (and baseline) version, else the version's latest night.
        chosen = next((r for r in mine if version == current.version and r["eval_date"] == current.eval_date),
                      None)
        if chosen is None and baseline is not None and version == baseline.version:
            chosen = next((r for r in mine if r["eval_date"] == baseline.eval_date), None)
        by_version.append(point(chosen or mine[-1]))
    by_date = [point(r) for r in rows if r["version"] == current.version]
    return by_version, by_date


def load_report(db_path: str | Path, skill: str, version: str | None = None, eval_date: str | None = None,
                against: str | None = None) -> ReportData:
    """The report data of ``skill`` (``version`` default: latest by semver; ``eval_date`` default:
    its latest) compared with ``against`` (default: the baseline the pipeline uses; ``"none"``: no
    comparison). Raises ``ReportError`` for an unknown skill, version or date."""
    target = str(db_path)
    if not target.startswith("md:") and target != ":memory:" and not Path(target).is_file():
        raise ReportError(f"no results database at {target} (run `eval-pipelines demo` or "
                          f"`eval-pipelines run` first, or pass --db)")
    with connect(target) as con:
        versions = _versions(con, skill)
        if not versions:
            skills = [r[0] for r in con.execute(
                "SELECT DISTINCT skill FROM test_results ORDER BY skill").fetchall()]
            raise ReportError(f"no results for skill {skill!r} in {target} "
                              f"(skills with results: {', '.join(skills) or 'none'})")
        version = _resolve_version(skill, version, versions)
        key = f"{skill}@{version}"
        dates = _eval_dates(con, key)
        if eval_date is None:
            eval_date = dates[-1]
        elif eval_date not in dates:
            raise ReportError(f"no results for {key} on {eval_date} (evaluation dates: {', '.join(dates)})")
        run = _run_info(con, skill, version, eval_date)
        cases = _cases(con, key, eval_date)
        metrics = _metrics(con, key, eval_date)

        baseline_info: RunInfo | None = None
        baseline_metrics: dict[str, float] = {}
        removed: list[str] = []
        if against is None or against.strip().lower() != NO_BASELINE:
            if against is None:
                row = _first(con, "SELECT spec FROM suites WHERE skill_version = ? AND eval_date = ?",
                             [key, eval_date])
                spec = _json(row[0], {}) if row else {}
                pinned = spec.get("baseline") if isinstance(spec, dict) else None
                # The pipeline's own rule: a pinned baseline without results means no comparison.
                chosen = previous_version(con, Partition(eval_date, key), pinned)
                base_version = chosen.version if chosen is not None else None
            else:
                base_version = _resolve_version(skill, against, versions, what="baseline version")
            if base_version is not None:
                base_dates = _eval_dates(con, f"{skill}@{base_version}")
                if base_version == version:  # the same version on an earlier night
                    base_dates = [d for d in base_dates if d < eval_date]
                    if not base_dates:
                        raise ReportError(f"no earlier evaluation of {key} than {eval_date} to compare with")
                base_date = base_dates[-1]
                baseline_info = _run_info(con, skill, base_version, base_date)
                baseline_metrics = _metrics(con, f"{skill}@{base_version}", base_date).get("*", {})
                removed = _attach_baseline(con, cases, skill, base_version, base_date)
        by_version, by_date = _history(con, skill, versions, run, baseline_info)
        significance = []
        if baseline_info is not None:
            significance = [dict(zip(("target", "pass_rate_delta", "ci_low", "ci_high", "p_value",
                                      "adjusted_p", "change"), row)) for row in con.execute(
                """
                SELECT target, pass_rate_delta, ci_low, ci_high, p_value, adjusted_p, change
                FROM regressions
                WHERE level = 'target' AND skill_version = ? AND eval_date = ?
                  AND baseline_skill_version = ? AND baseline_eval_date = ?
                ORDER BY target
                """, [key, eval_date, baseline_info.skill_version, baseline_info.eval_date]).fetchall()]
    return ReportData(run=run, cases=cases, metrics=metrics, baseline=baseline_info,
                      baseline_metrics=baseline_metrics, version_history=by_version, date_history=by_date,
                      removed=removed, significance=significance)


def skills_with_results(db_path: str | Path) -> dict[str, list[str]]:
    """{skill: versions with results, in semver order}."""
    with connect(str(db_path)) as con:
        pairs = con.execute("SELECT DISTINCT skill, version FROM test_results").fetchall()
    out: dict[str, list[str]] = {}
    for skill, version in pairs:
        out.setdefault(skill, []).append(version)
    return {s: sorted(v, key=version_sort_key) for s, v in sorted(out.items())}

"""Suite metrics: pass rate, mean score, pass@k, pass^k, latency, cost.

A trial "passes" when its verdict is ``pass`` (borderline is not a pass).
Errors count as non-passes; ``not_evaluated`` and ``pending_human`` trials are
left out of every rate, as seed 002 asks.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from math import comb
from statistics import median
from typing import Iterable

from eval_pipelines.suite.models import PASS_THRESHOLD


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k estimator (seed 003): 1 - C(n-c, k) / C(n, k)."""
    if n <= 0 or k <= 0 or k > n:
        raise ValueError(f"pass@k needs 0 < k <= n (n={n}, k={k})")
    if not 0 <= c <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n (n={n}, c={c})")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k: the chance that k independent trials all pass, C(c, k) / C(n, k).

    The plug-in (c/n)^k overstates it (4 passes of 5 give 0.33 for pass^5 where
    the estimate is 0: no 5 trials drawn without replacement all passed). Like
    pass@k it needs 0 < k <= n: with fewer trials than k there is nothing to
    estimate, and the metric is left out rather than extrapolated.
    """
    if n <= 0 or k <= 0 or k > n:
        raise ValueError(f"pass^k needs 0 < k <= n (n={n}, k={k})")
    if not 0 <= c <= n:
        raise ValueError(f"pass^k needs 0 <= c <= n (n={n}, c={c})")
    return comb(c, k) / comb(n, k)


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile, q in [0, 100]."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(frozen=True)
class TrialResult:
    test_id: str
    target: str
    trial: int
    status: str
    verdict: str | None
    score: float | None
    latency_ms: float | None
    cost_usd: float | None
    prompt_tokens: int | None
    completion_tokens: int | None


def suite_metrics(results: Iterable[TrialResult]) -> dict[str, dict[str, float]]:
    """Metrics per target plus ``*`` for all targets together: {target: {metric: value}}."""
    by_target: dict[str, list[TrialResult]] = defaultdict(list)
    for r in results:
        by_target[r.target].append(r)
        by_target["*"].append(r)
    return {target: _metrics(rows) for target, rows in by_target.items()}


def _metrics(rows: list[TrialResult]) -> dict[str, float]:
    counted = [r for r in rows if r.status in ("graded", "error")]
    passed = [r for r in counted if r.verdict == "pass"]
    out: dict[str, float] = {
        "trials": float(len(rows)),
        "cases": float(len({(r.target, r.test_id) for r in rows})),
        "graded": float(sum(r.status == "graded" for r in rows)),
        "errors": float(sum(r.status == "error" for r in rows)),
        "not_evaluated": float(sum(r.status == "not_evaluated" for r in rows)),
        "pending_human": float(sum(r.status == "pending_human" for r in rows)),
        "passed": float(len(passed)),
        "borderline": float(sum(r.verdict == "borderline" for r in counted)),
        "failed": float(sum(r.verdict == "fail" for r in counted)),
    }
    if counted:
        out["pass_rate"] = len(passed) / len(counted)
        out["mean_score"] = sum(r.score or 0.0 for r in counted) / len(counted)
    latencies = [r.latency_ms for r in rows if r.latency_ms is not None]
    if latencies:
        out["latency_p50_ms"] = median(latencies)
        out["latency_p95_ms"] = percentile(latencies, 95)
    costs = [r.cost_usd for r in rows if r.cost_usd is not None]
    if costs:
        out["cost_usd"] = sum(costs)
    tokens = [(r.prompt_tokens or 0) + (r.completion_tokens or 0) for r in rows
              if r.prompt_tokens is not None or r.completion_tokens is not None]
    if tokens:
        out["total_tokens"] = float(sum(tokens))
    out.update(_pass_k(counted))
    return out


def _pass_k(counted: list[TrialResult]) -> dict[str, float]:
    """pass@k and pass^k averaged over cases, for every k up to the fewest trials of a case
    (a k beyond that has no unbiased estimate for some case: the metric is absent, and a
    gate on it reports it missing)."""
    per_case: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for r in counted:
        per_case[(r.target, r.test_id)].append(r.verdict == "pass")
    if not per_case:
        return {}
    max_k = min(len(v) for v in per_case.values())
    out: dict[str, float] = {}
    for k in range(1, max_k + 1):
        out[f"pass_at_{k}"] = sum(pass_at_k(len(v), sum(v), k) for v in per_case.values()) / len(per_case)
        out[f"pass_hat_{k}"] = sum(pass_hat_k(len(v), sum(v), k) for v in per_case.values()) / len(per_case)
    return out


def _t_quantile_975(df: int) -> float:
    """Two-sided 95% Student t quantile (table for small df, normal beyond)."""
    table = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
             9: 2.262, 10: 2.228, 15: 2.131, 20: 2.086, 30: 2.042}
    if df in table:
        return table[df]
    for limit in sorted(table):
        if df < limit:
            return table[limit]
    return 1.96


def case_metrics(results: Iterable[TrialResult], strategy: str = "pass_at_k") -> dict[tuple[str, str], dict[str, float]]:
    """Per (target, case) over its trials: counts, pass@k and pass^k for every k,
    mean score with a 95% interval, and the case verdict under the trial strategy.

    Strategies (seed 001 ``trials.strategy``): ``pass_at_k`` - the case passes
    when any trial passes; ``all`` - when every trial passes; ``mean`` - when
    the mean score reaches 0.8; ``confidence_interval`` - when the lower end
    of the 95% interval of the mean score reaches 0.8 (stricter, for noisy
    judges). ``case_passed`` is 1 or 0; errors count as failed trials and
    not-evaluated trials are left out.
    """
    grouped: dict[tuple[str, str], list[TrialResult]] = defaultdict(list)
    for r in results:
        if r.status in ("graded", "error"):
            grouped[(r.target, r.test_id)].append(r)
    out: dict[tuple[str, str], dict[str, float]] = {}
    for key, rows in grouped.items():
        n = len(rows)
        c = sum(r.verdict == "pass" for r in rows)
        scores = [r.score or 0.0 for r in rows]
        mean = sum(scores) / n
        values: dict[str, float] = {"trials": n, "passes": c, "pass_rate": c / n, "mean_score": mean}
        if n > 1:
            var = sum((x - mean) ** 2 for x in scores) / (n - 1)
            half = _t_quantile_975(n - 1) * (var / n) ** 0.5
        else:
            half = 0.0
        values["mean_score_ci_low"] = max(0.0, mean - half)
        values["mean_score_ci_high"] = min(1.0, mean + half)
        for k in range(1, n + 1):
            values[f"pass_at_{k}"] = pass_at_k(n, c, k)
            values[f"pass_hat_{k}"] = pass_hat_k(n, c, k)
        values["flaky"] = float(0 < c < n)
        passed = {
            "pass_at_k": c > 0,
            "all": c == n,
            "mean": mean >= PASS_THRESHOLD,
            "confidence_interval": values["mean_score_ci_low"] >= PASS_THRESHOLD,
        }[strategy]
        values["case_passed"] = float(passed)
        out[key] = values
    return out


def expectation_metrics(graded: Iterable[tuple[str, list[bool]]]) -> dict[str, dict[str, float]]:
    """skill-creator's ``pass_rate`` over expectations: ``graded`` holds (target, each expectation's
    passed) per graded ``expectations`` grade; per target and ``*``: passed / total, with the counts."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for target, passed in graded:
        for key in (target, "*"):
            counts[key][0] += sum(passed)
            counts[key][1] += len(passed)
    return {target: {"expectation_pass_rate": p / n, "expectations_passed": float(p), "expectations_total": float(n)}
            for target, (p, n) in counts.items() if n}

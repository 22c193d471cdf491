"""Per configuration (``with_skill`` / ``without_skill``): each run's value, skill-creator's
run summary, and the values the skill's uplift (``uplift.py``) pairs by case.

A run is one case × target × trial. Its value is skill-creator's ``pass_rate`` of that run: the
share of the case's expectations met (the ``expectations`` grade), or 1/0 for a case graded
otherwise (its verdict ``pass`` or not). Runs stored ``not_evaluated`` or ``pending_human`` have
no value and are left out, as in every rate (``metrics.py``); an errored run is worth 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import mean, stdev
from typing import Iterable, Mapping, Sequence

from eval_pipelines.analysis.policy import RegressionPolicy
from eval_pipelines.analysis.uplift import Uplift, skill_uplift

# skill-creator's run_summary statistics, stored as metrics named run_<stat>_<summary>.
RUN_STATS = ("pass_rate", "time_seconds", "tokens")
SUMMARIES = ("mean", "stddev", "min", "max")
COUNTED = ("graded", "error")


@dataclass(frozen=True)
class Run:
    configuration: str
    target: str
    test_id: str
    trial: int
    status: str
    verdict: str | None
    expectations: Sequence[bool] | None  # each expectation's passed, when the case has them
    latency_ms: float | None
    tokens: int | None

    @property
    def value(self) -> float | None:
        if self.status not in COUNTED:
            return None
        if self.expectations:
            return sum(self.expectations) / len(self.expectations)
        return 1.0 if self.verdict == "pass" else 0.0


def stats(values: Sequence[float]) -> dict[str, float]:
    """skill-creator's ``calculate_stats``: mean, sample stddev (0 for one value), min, max; 4 places."""
    if not values:
        return {"mean": 0.0, "stddev": 0.0, "min": 0.0, "max": 0.0}
    spread = stdev(values) if len(values) > 1 else 0.0
    return {"mean": round(mean(values), 4), "stddev": round(spread, 4),
            "min": round(min(values), 4), "max": round(max(values), 4)}


def run_summary(runs: Iterable[Run]) -> dict[str, dict[str, float]]:
    """Per target and ``*``: ``run_pass_rate_mean`` ... ``run_tokens_max`` over the runs given
    (one configuration's), as metrics rows."""
    by_target: dict[str, list[Run]] = {}
    for run in runs:
        if run.value is None:
            continue
        for key in (run.target, "*"):
            by_target.setdefault(key, []).append(run)
    out: dict[str, dict[str, float]] = {}
    for target, items in by_target.items():
        columns = {"pass_rate": [r.value for r in items],
                   "time_seconds": [(r.latency_ms or 0.0) / 1000 for r in items],
                   "tokens": [float(r.tokens or 0) for r in items]}
        out[target] = {f"run_{name}_{summary}": value for name in RUN_STATS
                       for summary, value in stats([float(v) for v in columns[name]]).items()}
    return out


def uplift_values(runs: Iterable[Run]) -> dict[str, dict[str, dict[str, list[float]]]]:
    """target ('*' = all) -> configuration -> case -> [value per trial]; under '*' a case is
    (target, test id), so each target's run of a case is paired with the same target's."""
    out: dict[str, dict[str, dict[str, list[float]]]] = {}
    for run in runs:
        value = run.value
        if value is None:
            continue
        for key, case in ((run.target, run.test_id), ("*", f"{run.target}\x1f{run.test_id}")):
            out.setdefault(key, {}).setdefault(run.configuration, {}).setdefault(case, []).append(value)
    return out


def skill_uplifts(runs: Iterable[Run], policy: RegressionPolicy = RegressionPolicy(),
                  with_skill: str = "with_skill", without_skill: str = "without_skill") -> list[Uplift]:
    """The uplift per target and over all targets ('*'), where both configurations ran."""
    values = uplift_values(runs)
    found = []
    for target in sorted(values, key=lambda t: (t != "*", t)):
        by_config: Mapping[str, dict[str, list[float]]] = values[target]
        result = skill_uplift(by_config.get(with_skill, {}), by_config.get(without_skill, {}), target, policy)
        if result is not None:
            found.append(result)
    return found

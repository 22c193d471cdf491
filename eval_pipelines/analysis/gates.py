"""Suite thresholds as gates: which declared minimums a run's metrics miss."""

from __future__ import annotations

import re
from typing import Mapping

# Threshold names as the seeds spell them -> metric names, in one place.
from eval_pipelines.analysis.threshold_names import THRESHOLD_METRICS, metric_for_threshold  # noqa: F401


def failed_thresholds(
    thresholds: Mapping[str, float], metrics: Mapping[str, float]
) -> list[tuple[str, float | None, float]]:
    """(threshold, value or None when the metric is missing, minimum) for every miss."""
    misses = []
    for name, minimum in sorted(thresholds.items()):
        value = metrics.get(metric_for_threshold(name))
        if value is None or value < minimum:
            misses.append((name, value, minimum))
    return misses


def missing_reason(name: str, metrics: Mapping[str, float]) -> str:
    """Why a threshold's metric is absent: pass@k and pass^k need k trials of every case
    (the unbiased estimators are undefined for fewer; they are not extrapolated)."""
    metric = metric_for_threshold(name)
    found = re.fullmatch(r"pass_(at|hat)_(\d+)", metric)
    if found:
        computed = [int(m.rsplit("_", 1)[1]) for m in metrics if re.fullmatch(r"pass_at_\d+", m)]
        most = max(computed) if computed else 0
        return (f"missing: {name} needs at least {found.group(2)} graded trials of every case "
                f"(this run has {most} for its case with the fewest)")
    return "missing"

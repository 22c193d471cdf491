"""Suite thresholds as gates: which declared minimums a run's metrics miss."""

from __future__ import annotations

from typing import Mapping

# Threshold names as the seeds spell them -> metric names in the metrics table.
THRESHOLD_METRICS = {"required_pass_rate": "pass_rate", "pass_rate": "pass_rate", "mean_score": "mean_score"}


def metric_for_threshold(name: str) -> str:
    if name in THRESHOLD_METRICS:
        return THRESHOLD_METRICS[name]
    return name.replace("pass@", "pass_at_").replace("pass^", "pass_hat_")


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

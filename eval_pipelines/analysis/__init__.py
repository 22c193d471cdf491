"""Pure functions over results: metrics, statistics, regression verdicts, gates, baselines."""

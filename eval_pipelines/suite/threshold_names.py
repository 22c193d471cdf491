"""Which names a suite may gate on (``thresholds``), checked when the suite loads.

A threshold names a metric of the ``metrics`` table (or a seed's spelling of one:
``required_pass_rate``, ``pass@3``, ``pass^3``). A misspelt name used to validate and
then fail every run as "missing": it is refused at load time, with the closest name.
"""

from __future__ import annotations

import re

from eval_pipelines.suite.errors import closest_key

# Metrics a minimum makes sense for (rates and counts that should be high), under the
# names the metrics table stores and the seeds' aliases (analysis/gates.py maps them).
THRESHOLD_NAMES = ("required_pass_rate", "pass_rate", "mean_score", "case_pass_rate", "passed", "graded",
                   "cases", "trials")
K_THRESHOLD = re.compile(r"^(?:pass_(?:at|hat)_|pass@|pass\^)([1-9]\d{0,3})$")
# What a suggestion is drawn from: the fixed names and the pass@k / pass^k spellings for small k.
_SUGGESTIONS = (*THRESHOLD_NAMES, *(f"{p}{k}" for p in ("pass_at_", "pass_hat_", "pass@", "pass^")
                                    for k in range(1, 11)))


def threshold_name_problem(name: object) -> str | None:
    """Why ``name`` is no threshold name (with a "did you mean"), or None when it is one."""
    if isinstance(name, str) and (name in THRESHOLD_NAMES or K_THRESHOLD.fullmatch(name)):
        return None
    guess = closest_key(str(name), _SUGGESTIONS)
    return f"unknown threshold {name!r}" + (f"; did you mean {guess!r}?" if guess else "")


EXPECTED_THRESHOLD = ("a metric name: " + ", ".join(THRESHOLD_NAMES)
                      + ", pass_at_<k>, pass_hat_<k>, pass@<k> or pass^<k>")

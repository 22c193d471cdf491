"""Threshold names as the seeds and docs spell them, normalised in one place (pure: the
loaders and the gates both read it).

Seed 003 writes ``pass@1``, ``pass^3`` in its tables and ``pass_at_1``, ``pass_hat_3``
in its YAML; the docs accept both (docs/evaluation-guide.md, "Common thresholds").
Every loader stores the metric spelling (``pass_at_k``, ``pass_hat_k``), so the trials a
gate needs, the gate itself and the stored ``suites.thresholds`` read one name.
``required_pass_rate`` (seed 003) is kept as written: it is the gate on ``pass_rate``.
A name that is none of these (``required_passrate``, ``pass_rte``) used to validate and then fail
every run as "missing": ``threshold_name_problem`` refuses it at load time, with the closest name.
"""

from __future__ import annotations

import difflib
import re

# Threshold names that gate another metric of the metrics table.
THRESHOLD_METRICS = {"required_pass_rate": "pass_rate", "pass_rate": "pass_rate", "mean_score": "mean_score"}
# pass@k / pass^k / pass_at_k / pass_hat_k, case and spaces as written ("pass @ 3", "Pass^3").
_K_SPELLING = re.compile(r"^pass\s*(?:(@|_at_)|(\^|_hat_))\s*(\d+)$", re.IGNORECASE)
K_METRIC = re.compile(r"^pass_(?:at|hat)_(\d+)$")


def canonical_threshold(name: str) -> str:
    """The stored spelling of a threshold name: ``pass@3`` -> ``pass_at_3``,
    ``pass^3`` -> ``pass_hat_3``; any other name as written (stripped)."""
    text = str(name).strip()
    found = _K_SPELLING.match(text)
    if found is None:
        return text
    return f"pass_{'at' if found.group(1) else 'hat'}_{int(found.group(3))}"


def canonical_thresholds(thresholds: dict) -> dict:
    """``thresholds`` with canonical names (the values untouched)."""
    return {canonical_threshold(k): v for k, v in thresholds.items()}


def threshold_k(name: str) -> int | None:
    """k of a pass@k / pass^k threshold in any accepted spelling, else None."""
    found = K_METRIC.match(canonical_threshold(name))
    return int(found.group(1)) if found else None


def metric_for_threshold(name: str) -> str:
    """The metric a threshold gates (``required_pass_rate`` -> ``pass_rate``)."""
    canonical = canonical_threshold(name)
    return THRESHOLD_METRICS.get(canonical, canonical)


# Metrics a minimum makes sense for (rates and counts that should be high), as the metrics table
# stores them, and seed 003's alias; pass_at_<k> / pass_hat_<k> in any spelling besides.
THRESHOLD_NAMES = ("required_pass_rate", "pass_rate", "mean_score", "case_pass_rate", "expectation_pass_rate",
                   "passed", "graded", "cases", "trials")
# What a suggestion is drawn from: the fixed names and the pass@k / pass^k spellings for small k.
_SUGGESTIONS = (*THRESHOLD_NAMES, *(f"{p}{k}" for p in ("pass_at_", "pass_hat_", "pass@", "pass^")
                                    for k in range(1, 11)))
EXPECTED_THRESHOLD = ("a metric name: " + ", ".join(THRESHOLD_NAMES)
                      + ", pass_at_<k>, pass_hat_<k>, pass@<k> or pass^<k>")


def threshold_name_problem(name: object) -> str | None:
    """Why ``name`` is no threshold name (with a "did you mean"), or None when it is one."""
    if isinstance(name, str):
        canonical = canonical_threshold(name)
        if canonical in THRESHOLD_NAMES or (K_METRIC.match(canonical) and int(canonical.rsplit("_", 1)[1]) > 0):
            return None
    guess = difflib.get_close_matches(str(name), list(_SUGGESTIONS), n=1, cutoff=0.6)
    return f"unknown threshold {name!r}" + (f"; did you mean {guess[0]!r}?" if guess else "")

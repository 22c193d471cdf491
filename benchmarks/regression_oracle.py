"""A probe, not part of the pipeline: can *any* calibrated per-case test label 70% of the broken cases in
the Beta(2, 2) cancel-out at 200 x 5 when trials within a run are correlated (rho = 0.1)?

It gives the discrete BH (``eval_pipelines.analysis.stats.discrete_bh``, step-up at FDR 10%) per-case
p-values from the simulation's *own* null model with the *true* rho - an oracle no real suite has: under
no change a case's two runs are independent beta-binomial draws, so given its total passes s the
current run's passes have the law P(x | s) proportional to BB(x) BB(s - x) (p taken as s / 2n), and the
drop p-value is its lower tail. With rho = 0 this is Fisher's test. Same simulated runs as
``benchmarks.regression_power`` (same seeds).

    python -m benchmarks.regression_oracle [--runs 1000] [--rho 0.1]
"""

from __future__ import annotations

import argparse
from functools import lru_cache
from math import comb, lgamma, log

import numpy as np

from benchmarks.regression_power import RHO, Scenario, _rng, cancel_out, pass_counts, true_rates
from eval_pipelines.analysis.stats import discrete_bh


def _log_beta(a: float, b: float) -> float:
    return lgamma(a) + lgamma(b) - lgamma(a + b)


@lru_cache(maxsize=None)
def conditional_cdf(n: int, total: int, rho: float) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """(x values, P(current passes <= x | total passes)) under no change, n trials a side."""
    xs = tuple(range(max(0, total - n), min(total, n) + 1))
    if rho <= 0:
        logs = [log(comb(n, x) * comb(n, total - x)) for x in xs]
    else:
        p = min(max(total / (2 * n), 1e-6), 1 - 1e-6)
        phi = 1 / rho - 1
        a, b = p * phi, (1 - p) * phi
        logs = [log(comb(n, x) * comb(n, total - x)) + _log_beta(x + a, n - x + b)
                + _log_beta(total - x + a, n - total + x + b) for x in xs]
    top = max(logs)
    weights = np.exp(np.array(logs) - top)
    cdf = np.cumsum(weights / weights.sum())
    cdf[-1] = 1.0
    return xs, tuple(float(c) for c in cdf)


def probe(mix: str, pattern: str, rho: float, runs: int, trials: int = 5, cases: int = 200,
          fdr: float = 0.10) -> tuple[float, float]:
    """(share of runs with a false label, share of broken cases labelled)."""
    scenario = Scenario(mix, cases, trials, pattern=pattern, rho=rho)
    false_runs, broken_total, broken_labelled = 0, 0, 0
    for run in range(runs):
        rng = _rng(0, scenario, run)
        p = true_rates(mix, cases, rng)
        q, broken = (cancel_out(p, rng) if pattern == "cancel" else (p, np.zeros(cases, dtype=bool)))
        before = pass_counts(p, trials, rho, rng).tolist()
        after = pass_counts(q, trials, rho, rng).tolist()
        p_values, supports = [], []
        for b, a in zip(before, after):
            xs, cdf = conditional_cdf(trials, b + a, rho)
            p_values.append(cdf[xs.index(a)])
            supports.append(tuple(sorted(set(cdf))))
        q_values = discrete_bh(p_values, supports, fdr)
        labelled = np.array([qv <= fdr and a < b for qv, b, a in zip(q_values, before, after)])
        false_runs += bool((labelled & ~(q < p - 1e-12)).any())
        broken_total += int(broken.sum())
        broken_labelled += int((labelled & broken).sum())
    return false_runs / runs, (broken_labelled / broken_total if broken_total else float("nan"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--rho", type=float, default=RHO)
    args = parser.parse_args()
    for mix in ("beta-0.5", "beta-2"):
        for pattern, name in (("diffuse", "no change"), ("cancel", "cancel-out")):
            false_rate, share = probe(mix, pattern, args.rho, args.runs)
            print(f"{mix} {name}, 200 x 5, rho {args.rho:g}, oracle null + DBH: runs with a false label "
                  f"{false_rate:.1%}, broken cases labelled {share:.1%} ({args.runs} runs)")


if __name__ == "__main__":
    main()

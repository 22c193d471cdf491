"""Small, exact statistics for regression verdicts (no SciPy needed).

* McNemar's exact test on paired binary verdicts (binomial on the discordant pairs).
* Fisher's exact test, one-sided, for one case's trials on two sides.
* A sign-flip permutation test and a paired bootstrap interval for mean
  score differences (seeded: the same data gives the same verdict).
* Holm's step-down correction for several targets at once.
"""

from __future__ import annotations

import random
from math import comb
from typing import Sequence


def binomial_cdf(k: int, n: int, p: float = 0.5) -> float:
    """P(X <= k) for X ~ Binomial(n, p)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


def mcnemar_exact(b: int, c: int) -> tuple[float, float]:
    """(two-sided p, one-sided p for "more b than c") of McNemar's exact test.

    ``b`` counts pairs that went pass -> fail, ``c`` fail -> pass. Under no
    change each discordant pair is a fair coin.
    """
    n = b + c
    if n == 0:
        return 1.0, 1.0
    one_sided = 1.0 - binomial_cdf(b - 1, n)  # P(X >= b)
    two_sided = min(1.0, 2 * binomial_cdf(min(b, c), n))
    return two_sided, one_sided


def fisher_one_sided(passes_before: int, n_before: int, passes_after: int, n_after: int) -> float:
    """P-value that the after-side pass rate is lower than before (hypergeometric tail)."""
    total_pass = passes_before + passes_after
    total = n_before + n_after
    if n_before == 0 or n_after == 0 or total_pass in (0, total):
        return 1.0
    denominator = comb(total, n_after)
    # Tables as or more extreme: `after` has at most `passes_after` passes.
    low = max(0, total_pass - n_before)
    return sum(comb(total_pass, k) * comb(total - total_pass, n_after - k)
               for k in range(low, passes_after + 1)) / denominator


def sign_flip_p(differences: Sequence[float], *, seed: int = 0, rounds: int = 10_000) -> float:
    """One-sided p-value that the mean difference is below zero (a drop).

    Exact enumeration for up to 16 non-zero differences, Monte Carlo beyond.
    """
    diffs = [d for d in differences if d != 0]
    if not diffs:
        return 1.0
    observed = sum(diffs)
    n = len(diffs)
    if n <= 16:
        as_low = 0
        for mask in range(1 << n):
            total = sum(-d if mask >> i & 1 else d for i, d in enumerate(diffs))
            as_low += total <= observed + 1e-12
        return as_low / (1 << n)
    rng = random.Random(seed)
    as_low = sum(
        sum(d if rng.random() < 0.5 else -d for d in diffs) <= observed + 1e-12 for _ in range(rounds)
    )
    return (as_low + 1) / (rounds + 1)


def bootstrap_ci(differences: Sequence[float], *, level: float = 0.95, seed: int = 0,
                 rounds: int = 2_000) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean of paired differences."""
    n = len(differences)
    if n == 0:
        return 0.0, 0.0
    rng = random.Random(seed)
    means = sorted(sum(differences[rng.randrange(n)] for _ in range(n)) / n for _ in range(rounds))
    alpha = (1 - level) / 2
    return means[int(alpha * (rounds - 1))], means[int((1 - alpha) * (rounds - 1))]


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values (controls the family-wise error rate)."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [0.0] * len(p_values)
    running = 0.0
    m = len(p_values)
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted

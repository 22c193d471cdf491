"""Small, exact statistics for regression verdicts (no SciPy needed; NumPy only).

* McNemar's exact test on paired binary verdicts (binomial on the discordant pairs).
* Fisher's exact test, one-sided, for one case's trials on two sides.
* A sign-flip permutation test and a paired bootstrap interval for mean
  score differences (seeded: the same data gives the same verdict). The
  sign-flip test is exact whenever the differences lie on a common grid -
  always so for pass-rate differences, which are multiples of 1/trials - by
  convolving the null distribution of the sum; other differences (mean
  scores) are enumerated exactly up to 16 non-zero values and sampled with
  ``rounds`` Monte Carlo sign flips beyond.
* Holm's step-down correction (family-wise error) for the suite-level tests of
  one check, and false-discovery q-values for its per-case labels:
  Benjamini-Hochberg, or its discrete version (DBH) that uses each Fisher
  test's own attainable p-values.
* A Student-t interval for the mean of paired differences, and the exact sign
  test on counts used by the breakage signal.
"""

from __future__ import annotations

from fractions import Fraction
from bisect import bisect_right
from collections import Counter
from functools import lru_cache
from math import comb, exp, inf, lcm, lgamma, log, log1p, pi, sqrt, tan
from statistics import NormalDist
from typing import Sequence

import numpy as np

# Largest grid the exact sign-flip convolution will build (cells x differences).
_MAX_GRID_WORK = 50_000_000


def binomial_cdf(k: int, n: int, p: float = 0.5) -> float:
    """P(X <= k) for X ~ Binomial(n, p), accurate for large n (no overflow)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if p == 0.5:  # exact integer arithmetic; int / int rounds correctly however large
        return sum(comb(n, i) for i in range(k + 1)) / (1 << n)
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    log_p, log_q = log(p), log1p(-p)
    logs = [lgamma(n + 1) - lgamma(i + 1) - lgamma(n - i + 1) + i * log_p + (n - i) * log_q
            for i in range(k + 1)]
    top = max(logs)
    return min(1.0, exp(top) * sum(exp(v - top) for v in logs))


def _binomial_sf_half(b: int, n: int) -> float:
    """P(X >= b) for X ~ Binomial(n, 1/2), summed directly (no 1 - cdf cancellation)."""
    if b <= 0:
        return 1.0
    if b > n:
        return 0.0
    return sum(comb(n, i) for i in range(b, n + 1)) / (1 << n)


def mcnemar_exact(b: int, c: int) -> tuple[float, float]:
    """(two-sided p, one-sided p for "more b than c") of McNemar's exact test.

    ``b`` counts pairs that went pass -> fail, ``c`` fail -> pass. Under no
    change each discordant pair is a fair coin.
    """
    n = b + c
    if n == 0:
        return 1.0, 1.0
    one_sided = _binomial_sf_half(b, n)  # P(X >= b)
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


@lru_cache(maxsize=4_096)
def fisher_support(n_before: int, n_after: int, total_pass: int) -> tuple[float, ...]:
    """Every p-value ``fisher_one_sided`` can give for these margins, increasing (the last is 1).

    Fisher's test conditions on the margins, so under no change (independent trials) the
    after-side passes are hypergeometric and the p-value is exactly calibrated on this
    support: P(p <= a) = a for each attainable a. A case with 5 trials a side and 4 passes
    in all can never go below 5/210 (4/5 -> 0/5), one with 0 or 10 passes never below 1."""
    low, high = max(0, total_pass - n_before), min(total_pass, n_after)
    values = {fisher_one_sided(total_pass - x, n_before, x, n_after) for x in range(low, high + 1)}
    return tuple(sorted(values | {1.0}))


def _null_cdf(support: tuple[float, ...], t: float) -> float:
    """F(t) = P(p <= t) of a calibrated discrete p-value: the largest attainable value <= t."""
    index = bisect_right(support, t * (1 + 1e-12))  # the same p computed twice may differ in the last bit
    return support[index - 1] if index else 0.0


def _sum_ratio(groups: Counter, t: float, at: float | None = None) -> float:
    """sum_i F_i(t) / (1 - F_i(at)) over the tests (``at`` defaults to ``t``); inf where some F_i(at) = 1."""
    total = 0.0
    for support, count in groups.items():
        f_at = _null_cdf(support, t if at is None else at)
        if f_at >= 1.0:
            return inf
        total += count * _null_cdf(support, t) / (1.0 - f_at)
    return total


def discrete_bh(p_values: Sequence[float], supports: Sequence[tuple[float, ...]],
                level: float | None = None) -> list[float]:
    """q-values of the discrete Benjamini-Hochberg procedure (step-up at ``level``, or step-down).

    Doehler, Durand and Roquain (2018), "New FDR bounds for discrete and heterogeneous
    tests", Electronic Journal of Statistics, doi:10.1214/18-EJS1441 (R package DiscreteFDR,
    ``DBH``): their [HSU] and [HSD] procedures, proven to control the FDR at alpha for
    independent discrete p-values with known null CDFs F_i (F_i(t) <= t). BH's m t becomes
    a sum over the tests of F_i(t) / (1 - F_i(.)), so a test whose smallest attainable
    p-value is above t adds nothing (a case with 4 passes in 10 trials cannot be a false
    drop at t = 0.01, so it costs nothing there):

    * step-down ([HSD], ``level`` None): tau_k = max{t attainable: sum_i F_i(t)/(1 - F_i(t))
      <= k alpha}; its adjusted p-values are cummax_k min(y_(k) / k, 1) with y_(k) that sum
      at the k-th smallest p-value (DiscreteFDR's ``Adjusted``), free of alpha.
    * step-up ([HSU], ``level`` = alpha): first tau_m = max{t attainable: sum_i F_i(t)/(1 -
      F_i(t)) <= m alpha}, then tau_k = max{t <= tau_m attainable: sum_i F_i(t)/(1 -
      F_i(tau_m)) <= k alpha}, and the k-hat = max{k: p_(k) <= tau_k} smallest p-values are
      rejected. The q-value returned is min over k >= rank, p_(k) <= tau_m of
      y'_(k) / k (y' the step-up sum), BH-style; tau_m depends on alpha, so these q-values
      belong to ``level``: a test is rejected at ``level`` iff its q-value is <= ``level``.

    For continuous uniform p-values (F_i(t) = t) the step-up is BH at alpha / (1 + alpha)
    and the step-down has critical values k alpha / (m + k alpha). ``supports[i]`` is test
    i's attainable p-values, increasing, ending with 1 (``fisher_support``).
    """
    m = len(p_values)
    if m == 0:
        return []
    groups = Counter(supports)  # few distinct margins: sum over groups, not over tests
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    if level is None:
        sums: dict[float, float] = {}
        running = 0.0
        for rank, i in enumerate(order, start=1):
            t = p_values[i]
            if t not in sums:
                sums[t] = _sum_ratio(groups, t)
            running = max(running, min(1.0, sums[t] / rank))
            adjusted[i] = running
        return adjusted
    attainable = sorted({a for support in groups for a in support})
    tau_m = None
    for t in attainable:  # the sum increases with t: stop at the first that exceeds m alpha
        if _sum_ratio(groups, t) > m * level:
            break
        tau_m = t
    if tau_m is None:
        return adjusted
    running = 1.0
    sums = {}
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        t = p_values[i]
        if t <= tau_m * (1 + 1e-12):
            if t not in sums:
                sums[t] = _sum_ratio(groups, t, at=tau_m)
            running = min(running, sums[t] / rank)
        adjusted[i] = min(1.0, running)
    return adjusted


def _on_grid(diffs: Sequence[float], max_denominator: int = 1_000) -> list[int] | None:
    """The differences as integers on a common grid 1/D, or None when they are not."""
    fractions = {}
    for d in set(diffs):  # pass-rate differences take few distinct values
        f = Fraction(d).limit_denominator(max_denominator)
        if abs(float(f) - d) > 1e-9:
            return None
        fractions[d] = f
    denominator = 1
    for f in fractions.values():
        denominator = lcm(denominator, f.denominator)
    scaled_values = {d: int(f * denominator) for d, f in fractions.items()}
    scaled = [scaled_values[d] for d in diffs]
    if 2 * sum(abs(v) for v in scaled) * len(scaled) > _MAX_GRID_WORK:
        return None
    return scaled


def _half_binomial_pmf(m: int) -> np.ndarray:
    """P(K = k) for K ~ Binomial(m, 1/2), k = 0..m, without overflow."""
    logs = np.array([lgamma(m + 1) - lgamma(k + 1) - lgamma(m - k + 1) for k in range(m + 1)]) - m * log(2)
    return np.exp(logs)


def _sign_flip_exact_grid(values: list[int]) -> float:
    """P(sum of +-|v| <= sum(v)) under independent fair signs, by convolution.

    Equal magnitudes are grouped: m values of size a contribute a * (2K - m) with
    K ~ Binomial(m, 1/2), one convolution per distinct magnitude.
    """
    magnitudes: dict[int, int] = {}
    for v in values:
        if v:
            magnitudes[abs(v)] = magnitudes.get(abs(v), 0) + 1
    total = sum(a * m for a, m in magnitudes.items())
    dist = np.ones(1)
    for a, m in sorted(magnitudes.items()):
        kernel = np.zeros(2 * a * m + 1)
        kernel[::2 * a] = _half_binomial_pmf(m)  # offsets a * (2k - m), k = 0..m
        dist = np.convolve(dist, kernel)
    # dist[i] is P(sum = i - total).
    return float(min(1.0, dist[: sum(values) + total + 1].sum()))


def sign_flip_p(differences: Sequence[float], *, seed: int = 0, rounds: int = 10_000) -> float:
    """One-sided p-value that the mean difference is below zero (a drop).

    Exact when the differences share a grid (pass-rate differences always
    do), exact enumeration for up to 16 other non-zero differences, seeded
    Monte Carlo with ``rounds`` sign flips beyond.
    """
    diffs = [float(d) for d in differences if d != 0]
    if not diffs:
        return 1.0
    grid = _on_grid(diffs)
    if grid is not None:
        return _sign_flip_exact_grid(grid)
    values = np.asarray(diffs)
    observed = values.sum()
    tolerance = 1e-9 * (1.0 + np.abs(values).sum())
    n = len(values)
    if n <= 16:
        masks = np.arange(1 << n)[:, None] >> np.arange(n) & 1
        totals = (np.where(masks == 1, -values, values)).sum(axis=1)
        return float((totals <= observed + tolerance).mean())
    rng = np.random.default_rng(seed)
    as_low = 0
    chunk = max(1, 2_000_000 // n)
    for start in range(0, rounds, chunk):
        size = min(chunk, rounds - start)
        signs = np.where(rng.random((size, n)) < 0.5, 1.0, -1.0)
        as_low += int(((signs * values).sum(axis=1) <= observed + tolerance).sum())
    return (as_low + 1) / (rounds + 1)


def bootstrap_ci(differences: Sequence[float], *, level: float = 0.95, seed: int = 0,
                 rounds: int = 2_000) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean of paired differences (seeded)."""
    n = len(differences)
    if n == 0:
        return 0.0, 0.0
    values = np.asarray(differences, dtype=float)
    rng = np.random.default_rng(seed)
    means = np.empty(rounds)
    chunk = max(1, 2_000_000 // n)
    for start in range(0, rounds, chunk):
        size = min(chunk, rounds - start)
        means[start:start + size] = values[rng.integers(0, n, size=(size, n))].mean(axis=1)
    means.sort()
    alpha = (1 - level) / 2
    return float(means[int(alpha * (rounds - 1))]), float(means[int((1 - alpha) * (rounds - 1))])


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


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg q-values: the smallest false-discovery rate at which each
    hypothesis would be rejected (step-up, made monotone, capped at 1). Labelling
    every hypothesis with q <= level controls the FDR at ``level`` for independent
    or positively dependent p-values."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, p_values[i] * m / rank)
        adjusted[i] = min(1.0, running)
    return adjusted


def mirror_q_values(p_values: Sequence[float], signs: Sequence[int]) -> list[float]:
    """False-discovery q-values for the hypotheses with sign -1, using those with sign +1 as
    their mirror (the knockoff+ / SeqStep estimate of Barber and Candes, 2015).

    Each hypothesis has a one-sided p-value in the direction it moved (sign -1: a drop,
    +1: a rise, 0: no move). When a null hypothesis is equally likely to move either way
    at the same strength - true of a case whose two runs are exchangeable, however
    correlated its trials - the number of rises with p <= t estimates the number of false
    drops with p <= t. The q-value of a drop is the smallest estimated FDR, (1 + rises) /
    drops, over thresholds t at or above its p. Labelling the drops with q <= level
    controls the FDR at ``level`` in finite samples without trusting the p-values' own
    calibration; the price is the +1: fewer than 1 / level clear drops are never labelled.
    """
    values, sign = np.asarray(p_values, dtype=float), np.asarray(signs)
    if not (sign < 0).any():
        return [1.0] * len(values)
    levels = np.unique(values[sign != 0])
    drops = np.searchsorted(np.sort(values[sign < 0]), levels, side="right")
    rises = np.searchsorted(np.sort(values[sign > 0]), levels, side="right")
    estimate = (1.0 + rises) / np.maximum(drops, 1)
    best_from = np.minimum.accumulate(estimate[::-1])[::-1]  # min over thresholds at or above each level
    q = best_from[np.minimum(np.searchsorted(levels, values), len(levels) - 1)]  # unmoved entries get 1 below
    return [min(1.0, float(qi)) if si < 0 else 1.0 for qi, si in zip(q, sign)]


def sign_test_p(successes: int, trials: int) -> float:
    """One-sided exact sign test: P(X >= successes) for X ~ Binomial(trials, 1/2)."""
    return _binomial_sf_half(successes, trials)


def t_quantile(prob: float, df: int) -> float:
    """Quantile of Student's t distribution (closed forms for df 1 and 2, the
    Cornish-Fisher expansion beyond: within 1e-4 of the exact value for df >= 3 at
    the tail probabilities used here)."""
    if not 0 < prob < 1:
        raise ValueError(f"t_quantile needs 0 < prob < 1 (got {prob})")
    if df < 1:
        raise ValueError(f"t_quantile needs df >= 1 (got {df})")
    if df == 1:
        return tan(pi * (prob - 0.5))
    if df == 2:
        return (2 * prob - 1) / sqrt(2 * prob * (1 - prob))
    z = NormalDist().inv_cdf(prob)
    v = float(df)
    return (z + (z ** 3 + z) / (4 * v) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * v ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * v ** 3)
            + (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / (92160 * v ** 4))


def mean_interval(differences: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """Student-t interval for the mean of paired differences, clipped to [-1, 1].

    The variance gets one pseudo-observation of a full flip (a difference of 1
    about the mean): without it a handful of cases with identical results would
    give a zero-width interval and an "equivalent" verdict from, say, 3 cases.
    Its weight shrinks as 1/cases (at 200 cases it widens the interval by well
    under a tenth of a point for the usual spreads).
    """
    n = len(differences)
    if n < 2:
        return -1.0, 1.0
    values = np.asarray(differences, dtype=float)
    mean = float(values.mean())
    variance = (float(((values - mean) ** 2).sum()) + 1.0) / (n - 1)
    half = t_quantile(1 - (1 - level) / 2, n - 1) * sqrt(variance / n)
    return max(-1.0, mean - half), min(1.0, mean + half)

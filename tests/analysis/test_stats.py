"""The statistics behind regression verdicts, against values worked out by hand."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

import numpy as np

from eval_pipelines.analysis.stats import (benjamini_hochberg, binomial_cdf, bootstrap_ci, discrete_bh, fisher_one_sided,
                                           fisher_support, holm,
                                           mcnemar_exact, mean_interval, mirror_q_values, sign_flip_p, sign_test_p,
                                           t_quantile)


# ---- binomial and McNemar ---------------------------------------------------------------

def test_binomial_cdf_known_values() -> None:
    # P(X <= 1), X ~ Bin(10, 1/2) = (1 + 10) / 1024
    assert binomial_cdf(1, 10) == 11 / 1024
    # P(X <= 3), X ~ Bin(10, 0.3), summed by hand from the pmf
    by_hand = sum(math.comb(10, i) * 0.3**i * 0.7 ** (10 - i) for i in range(4))
    assert binomial_cdf(3, 10, 0.3) == pytest.approx(by_hand, rel=1e-12)
    assert binomial_cdf(3, 10, 0.3) == pytest.approx(0.6496107184, abs=1e-10)
    assert binomial_cdf(-1, 5) == 0.0 and binomial_cdf(5, 5) == 1.0 and binomial_cdf(7, 5) == 1.0


def test_binomial_cdf_does_not_overflow_for_large_n() -> None:
    # Symmetry: P(X <= n/2 - 1) = (1 - P(X = n/2)) / 2 for even n, p = 1/2.
    n = 3000
    middle = Fraction(math.comb(n, n // 2), 2**n)
    assert binomial_cdf(n // 2 - 1, n) == pytest.approx(float((1 - middle) / 2), rel=1e-12)
    assert binomial_cdf(900, 3000, 0.3) == pytest.approx(0.5, abs=0.02)  # the median of Bin(3000, 0.3)


def test_mcnemar_exact_on_a_textbook_table() -> None:
    # b = 1 pass->fail, c = 9 fail->pass: n = 10 discordant pairs.
    two_sided, more_b = mcnemar_exact(1, 9)
    assert two_sided == pytest.approx(2 * 11 / 1024) and round(two_sided, 4) == 0.0215
    assert more_b == pytest.approx(1 - 1 / 1024)  # P(X >= 1)
    two_sided, more_b = mcnemar_exact(9, 1)
    assert two_sided == pytest.approx(0.021484375) and more_b == pytest.approx(11 / 1024)  # P(X >= 9)


def test_mcnemar_exact_edge_cases() -> None:
    assert mcnemar_exact(0, 0) == (1.0, 1.0)
    assert mcnemar_exact(5, 5)[0] == 1.0
    assert mcnemar_exact(3, 3)[1] == pytest.approx(sum(math.comb(6, i) for i in range(3, 7)) / 64)
    # One-sided tail summed directly: no 1 - cdf cancellation for tiny p-values.
    assert mcnemar_exact(60, 0)[1] == pytest.approx(2.0**-60, rel=1e-12)
    # Many discordant pairs: no overflow.
    two_sided, one_sided = mcnemar_exact(1500, 1400)
    assert 0 < one_sided < 0.05 < two_sided < 0.1 and two_sided == pytest.approx(2 * one_sided, rel=0.05)


# ---- Fisher -----------------------------------------------------------------------------

def _hypergeometric_lower_tail(passes_before: int, n_before: int, passes_after: int, n_after: int) -> float:
    """P(after has <= passes_after passes) with the margins fixed, by brute force over tables."""
    total_pass = passes_before + passes_after
    tables = {k: math.comb(n_after, k) * math.comb(n_before, total_pass - k)
              for k in range(0, n_after + 1) if 0 <= total_pass - k <= n_before}
    return sum(v for k, v in tables.items() if k <= passes_after) / sum(tables.values())


def test_fisher_one_sided_tea_tasting() -> None:
    # 3 of 4 before, 1 of 4 after: (C(4,0)C(4,4) + C(4,1)C(4,3)) / C(8,4) = 17/70.
    assert fisher_one_sided(3, 4, 1, 4) == pytest.approx(17 / 70)
    assert round(fisher_one_sided(3, 4, 1, 4), 4) == 0.2429


@pytest.mark.parametrize("table", [(5, 5, 0, 5), (5, 5, 2, 5), (4, 5, 1, 5), (2, 5, 2, 5), (10, 12, 3, 9), (1, 1, 0, 5)])
def test_fisher_one_sided_matches_brute_force(table: tuple[int, int, int, int]) -> None:
    assert fisher_one_sided(*table) == pytest.approx(_hypergeometric_lower_tail(*table), rel=1e-12)


def test_fisher_one_sided_known_values_and_edges() -> None:
    assert fisher_one_sided(5, 5, 0, 5) == pytest.approx(1 / 252)  # 5/5 -> 0/5
    assert fisher_one_sided(2, 2, 0, 2) == pytest.approx(1 / 6)  # too few trials to be significant
    assert fisher_one_sided(0, 5, 5, 5) == 1.0  # a rise is not a drop
    assert fisher_one_sided(5, 5, 5, 5) == 1.0 and fisher_one_sided(0, 5, 0, 5) == 1.0
    assert fisher_one_sided(3, 5, 2, 0) == 1.0  # no trials on one side


# ---- sign-flip permutation test ---------------------------------------------------------

@pytest.mark.parametrize("n", [1, 3, 5, 12, 20, 40])
def test_sign_flip_all_negative_is_one_over_two_to_the_n(n: int) -> None:
    assert sign_flip_p([-1.0] * n) == pytest.approx(0.5**n)  # pass-rate grid: exact for any n
    assert sign_flip_p([-0.4] * n + [0.0] * 7) == pytest.approx(0.5**n)  # zeros are dropped


@pytest.mark.parametrize("n", [1, 5, 12, 16])
def test_sign_flip_exact_enumeration_for_off_grid_values(n: int) -> None:
    value = -math.sqrt(2) / 10  # not a fraction with a small denominator: enumeration path
    assert sign_flip_p([value] * n) == pytest.approx(0.5**n)


def test_sign_flip_small_vector_by_hand() -> None:
    # Signs of (1, 2, 3) -> sums 6, 4, 2, 0, 0, -2, -4, -6; observed -1 - 2 + 3 = 0: 5 of 8 are <= 0.
    assert sign_flip_p([-1, -2, 3]) == pytest.approx(5 / 8)
    scale = math.sqrt(2) / 7  # the same on an irrational scale (enumeration instead of the grid)
    assert sign_flip_p([-1 * scale, -2 * scale, 3 * scale]) == pytest.approx(5 / 8)
    assert sign_flip_p([]) == 1.0 and sign_flip_p([0, 0]) == 1.0
    assert sign_flip_p([0.2, 0.4]) == 1.0  # only rises: no evidence of a drop


def test_sign_flip_on_binary_differences_is_mcnemar() -> None:
    # One trial per case: differences -1 (pass -> fail), +1 (fail -> pass), 0.
    b, c = 30, 12
    diffs = [-1] * b + [1] * c + [0] * 100
    assert sign_flip_p(diffs) == pytest.approx(mcnemar_exact(b, c)[1], rel=1e-9)


def test_sign_flip_on_pass_rate_grid_matches_brute_force() -> None:
    diffs = [-0.2, -0.4, 0.2, -1.0, -0.6, 0.4, -0.2, 0.8, -0.2, -0.4, 0.2, -0.6]  # fifths: the grid path
    n, observed = len(diffs), sum(diffs)
    count = sum(sum(-d if mask >> i & 1 else d for i, d in enumerate(diffs)) <= observed + 1e-12
                for mask in range(1 << n))
    assert sign_flip_p(diffs) == pytest.approx(count / (1 << n))


def test_sign_flip_monte_carlo_agrees_with_exact_and_is_seeded() -> None:
    grid = [(-1) ** i * (i % 5) / 5 - 0.2 * (i % 3 == 0) for i in range(40)]
    exact = sign_flip_p(grid)
    off_grid = [d + 1e-7 * math.sqrt(2) for d in grid]  # nudged off the grid: Monte Carlo path
    first = sign_flip_p(off_grid, seed=7)
    assert first == sign_flip_p(off_grid, seed=7)  # same seed, same p-value
    assert first == pytest.approx(exact, abs=0.01)
    assert sign_flip_p(off_grid, seed=8) == pytest.approx(exact, abs=0.01)
    # Monte Carlo p-values never reach 0: (hits + 1) / (rounds + 1).
    assert sign_flip_p([-math.sqrt(2)] * 40, rounds=999) == pytest.approx(1 / 1000)


# ---- bootstrap interval -----------------------------------------------------------------

def test_bootstrap_ci_contains_the_mean_and_is_seeded() -> None:
    diffs = [-1.0] * 30 + [0.0] * 150 + [1.0] * 20  # mean -0.05
    low, high = bootstrap_ci(diffs)
    assert low < -0.05 < high and low < 0
    assert bootstrap_ci(diffs, seed=3) == bootstrap_ci(diffs, seed=3)
    spread = [math.sin(i) for i in range(200)]  # distinct values: another seed moves the ends
    assert bootstrap_ci(spread, seed=3) == bootstrap_ci(spread, seed=3)
    assert bootstrap_ci(spread, seed=3) != bootstrap_ci(spread, seed=4)
    assert bootstrap_ci([0.1] * 10) == pytest.approx((0.1, 0.1))
    assert bootstrap_ci([]) == (0.0, 0.0)


def test_bootstrap_ci_shrinks_with_n_like_the_standard_error() -> None:
    pattern = [-1.0, -1.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0]  # mean -0.1, sd ~0.7
    widths = {}
    for repeats in (5, 20, 80):
        low, high = bootstrap_ci(pattern * repeats)
        assert low < -0.1 < high
        widths[repeats] = high - low
    assert widths[5] > widths[20] > widths[80]
    # Width ~ 2 * 1.96 * sd / sqrt(n): quadrupling n about halves it.
    assert widths[20] / widths[80] == pytest.approx(2, rel=0.2)
    sd = math.sqrt(sum((x + 0.1) ** 2 for x in pattern) / len(pattern))
    assert widths[80] == pytest.approx(2 * 1.96 * sd / math.sqrt(800), rel=0.15)


def test_bootstrap_ci_level() -> None:
    diffs = [float(i % 7 - 3) for i in range(70)]
    low90, high90 = bootstrap_ci(diffs, level=0.90)
    low99, high99 = bootstrap_ci(diffs, level=0.99)
    assert low99 <= low90 and high90 <= high99


# ---- Holm -------------------------------------------------------------------------------

def test_holm_on_a_known_set() -> None:
    # Sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> max(0.06, 0.04) = 0.06.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_edges() -> None:
    assert holm([]) == []
    assert holm([0.2]) == [0.2]
    assert holm([0.5, 0.6, 0.9]) == pytest.approx([1.0, 1.0, 1.0])  # capped at 1
    adjusted = holm([0.001, 0.2, 0.01, 0.04])
    assert all(a >= p for a, p in zip(adjusted, [0.001, 0.2, 0.01, 0.04]))
    # Order of the adjusted values follows the order of the raw ones.
    assert sorted(range(4), key=lambda i: adjusted[i]) == sorted(range(4), key=lambda i: [0.001, 0.2, 0.01, 0.04][i])


# ---- Benjamini-Hochberg, the t interval, the sign test -------------------------------------

def test_benjamini_hochberg_matches_the_step_up_definition() -> None:
    # R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "BH") -> 0.02 0.04 0.04 0.02
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert benjamini_hochberg([]) == [] and benjamini_hochberg([0.3]) == [0.3]
    rng = np.random.default_rng(3)
    for _ in range(200):
        p = rng.random(int(rng.integers(1, 30))) ** 2
        q = benjamini_hochberg(list(p))
        m = len(p)
        for level in (0.05, 0.1, 0.2):
            # Rejected by q <= level  <=>  p <= level * k / m for the largest such rank k (step-up).
            ordered = np.sort(p)
            passing = [k for k in range(1, m + 1) if ordered[k - 1] <= level * k / m]
            cutoff = ordered[max(passing) - 1] if passing else -1.0
            assert [qi <= level + 1e-12 for qi in q] == [pi <= cutoff for pi in p]
        assert all(qi >= pi - 1e-15 for qi, pi in zip(q, p)) and max(q) <= 1.0


def test_t_quantile_against_the_table() -> None:
    table = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 10: 2.228, 30: 2.042, 120: 1.980}
    for df, value in table.items():
        assert t_quantile(0.975, df) == pytest.approx(value, abs=5e-3)
    assert t_quantile(0.95, 10) == pytest.approx(1.812, abs=2e-3) and t_quantile(0.025, 10) == pytest.approx(-2.228,
                                                                                                            abs=2e-3)
    with pytest.raises(ValueError):
        t_quantile(1.0, 5)


def test_mean_interval_widens_for_tiny_identical_suites() -> None:
    assert mean_interval([]) == (-1.0, 1.0) and mean_interval([0.2]) == (-1.0, 1.0)
    low, high = mean_interval([0.0] * 4)
    assert low < -0.3 and high > 0.3  # four identical cases do not make a zero-width interval
    low, high = mean_interval([0.0] * 400)
    assert -0.01 < low < 0 < high < 0.01
    values = list(np.random.default_rng(1).normal(0.1, 0.3, 500))
    low, high = mean_interval(values)
    squares = float(((np.asarray(values) - np.mean(values)) ** 2).sum())
    assert low < float(np.mean(values)) < high and high - low == pytest.approx(
        2 * t_quantile(0.975, 499) * np.sqrt((squares + 1) / 499 / 500), rel=1e-9)  # one pseudo-flip


def test_sign_test_p() -> None:
    assert sign_test_p(20, 20) == pytest.approx(0.5**20)
    assert sign_test_p(0, 0) == 1.0 and sign_test_p(0, 5) == 1.0
    assert sign_test_p(8, 10) == pytest.approx((45 + 10 + 1) / 1024)


def test_mirror_q_values_use_the_rises_as_the_estimate_of_false_drops() -> None:
    # 12 drops and 1 rise at p = 0.004, one weak drop, one unmoved case.
    p = [0.004] * 12 + [0.004, 0.5, 0.3]
    signs = [-1] * 12 + [1, -1, 0]
    q = mirror_q_values(p, signs)
    assert q[:12] == pytest.approx([2 / 13] * 12)  # best threshold 0.5: (1 + 1 rise) / 13 drops
    assert q[12] == 1.0 and q[14] == 1.0 and q[13] == pytest.approx(2 / 13)
    # The +1: fewer than 1 / level drops are never below the level, however small their p.
    assert mirror_q_values([1e-9] * 9, [-1] * 9) == pytest.approx([1 / 9] * 9)
    assert mirror_q_values([1e-9] * 10, [-1] * 10) == pytest.approx([0.1] * 10)
    assert mirror_q_values([0.2, 0.3], [1, 0]) == [1.0, 1.0]
    # Symmetric noise: as many rises as drops at every level, nothing is labelled.
    rng = np.random.default_rng(2)
    values = list(rng.random(400))
    assert min(mirror_q_values(values, [-1, 1] * 200)) > 0.5


# ---- discrete Benjamini-Hochberg (case_labels dbh) -----------------------------------------

def _naive_dbh_step_up(p_values: list[float], supports: list[tuple[float, ...]], alpha: float) -> set[int]:
    """DBH-SU straight from its definition (Doehler, Durand and Roquain 2018, [HSU]): critical values
    first, then the step-up. An independent check of ``discrete_bh``'s q-values."""
    def cdf(support, t):
        return max((a for a in support if a <= t * (1 + 1e-12)), default=0.0)

    m = len(p_values)
    attainable = sorted({a for s in supports for a in s})
    feasible = [t for t in attainable if all(cdf(s, t) < 1 for s in supports)
                and sum(cdf(s, t) / (1 - cdf(s, t)) for s in supports) <= m * alpha]
    if not feasible:
        return set()
    tau_m = max(feasible)
    critical = []
    for k in range(1, m + 1):
        fits = [t for t in attainable if t <= tau_m
                and sum(cdf(s, t) / (1 - cdf(s, tau_m)) for s in supports) <= k * alpha]
        critical.append(max(fits, default=-1.0))
    ordered = sorted(p_values)
    k_hat = max((k for k in range(1, m + 1) if ordered[k - 1] <= critical[k - 1]), default=0)
    return {i for i, p in enumerate(p_values) if k_hat and p <= ordered[k_hat - 1]}


def test_fisher_support_lists_every_attainable_p_value() -> None:
    # 5 trials a side, 5 passes in all: after-side passes 0..5 with hypergeometric weights 1, 25, 100, 100, 25, 1.
    assert fisher_support(5, 5, 5) == pytest.approx((1 / 252, 26 / 252, 126 / 252, 226 / 252, 251 / 252, 1.0))
    # 4 passes in all: 4/5 -> 0/5 is the best a case can do, p = 6/252 = 5/210.
    assert fisher_support(5, 5, 4)[0] == pytest.approx(5 / 210)
    assert fisher_support(5, 5, 0) == fisher_support(5, 5, 10) == (1.0,)  # never below 1
    for total in range(11):
        support = fisher_support(5, 5, total)
        observed = {fisher_one_sided(total - x, 5, x, 5) for x in range(max(0, total - 5), min(total, 5) + 1)}
        assert observed <= set(support) and support[-1] == 1.0 and list(support) == sorted(support)


def test_discrete_bh_by_hand() -> None:
    # Two 5/5 -> 0/5 drops (p = 1/252), one 4/5 -> 0/5 (p = 6/252), one case with no pass at all (p = 1).
    supports = [fisher_support(5, 5, 5)] * 2 + [fisher_support(5, 5, 4), fisher_support(5, 5, 0)]
    p = [1 / 252, 1 / 252, 6 / 252, 1.0]
    # Step-up at 0.1: sum F/(1-F) is 2/251 at 1/252, 2/251 + 6/246 at 6/252, 2 (26/226) + 6/246 = 0.25 at 26/252
    # and 0.58 > m alpha = 0.4 at 66/252, so tau_m = 26/252; then F_i(tau_m) = 26/252, 26/252, 6/252, 0.
    y_1, y_3 = 2 / 226, 2 / 226 + 6 / 246
    assert discrete_bh(p, supports, 0.1) == pytest.approx([y_1 / 2, y_1 / 2, y_3 / 3, 1.0])
    # Step-down: cummax of sum F/(1-F) at p_(k), over k; the case that cannot move gets 1.
    assert discrete_bh(p, supports) == pytest.approx([2 / 251, 2 / 251, (2 / 251 + 6 / 246) / 3, 1.0])
    # Plain BH on the same p-values counts all four tests at every threshold: larger q-values.
    assert benjamini_hochberg(p) == pytest.approx([2 / 252, 2 / 252, 8 / 252, 1.0])
    assert discrete_bh([], [], 0.1) == [] and discrete_bh([], []) == []


def test_discrete_bh_agrees_with_the_procedure_written_from_its_definition() -> None:
    rng = np.random.default_rng(3)
    for _ in range(60):
        m = int(rng.integers(1, 25))
        totals = rng.integers(0, 11, size=m)
        supports = [fisher_support(5, 5, int(s)) for s in totals]
        p = [float(s[rng.integers(0, min(len(s), 3))]) for s in supports]  # mostly small attainable values
        for alpha in (0.05, 0.1, 0.3):
            q = discrete_bh(p, supports, alpha)
            assert {i for i, qi in enumerate(q) if qi <= alpha} == _naive_dbh_step_up(p, supports, alpha)
            # Monotone: a smaller p-value never gets a larger q-value.
            ranked = sorted(zip(p, q))
            assert all(a[1] <= b[1] + 1e-15 for a, b in zip(ranked, ranked[1:]))
        down = discrete_bh(p, supports)
        ranked = sorted(zip(p, down))
        assert all(a[1] <= b[1] + 1e-15 for a, b in zip(ranked, ranked[1:]))


def test_discrete_bh_never_rejects_a_test_that_cannot_reach_the_critical_value() -> None:
    # 30 complete breaks (p = 1/252), one case at its most extreme with 3 passes in 10 trials (21/252 = 0.083)
    # and 169 unmoved cases with 4 passes in 10 (each could reach 6/252). Step-up at 0.1: the critical value
    # at rank 31 is the largest t with sum F_i(t) / (1 - F_i(tau_m)) <= 3.1; the 169 cases put 169 x 6/246
    # = 4.1 into that sum from t = 6/252 on, so tau_31 = 1/252 and the 3-pass case, whose smallest
    # attainable p-value is 21/252, is not labelled - while the 30 breaks are.
    supports = [fisher_support(5, 5, 5)] * 30 + [fisher_support(5, 5, 3)] + [fisher_support(5, 5, 4)] * 169
    p = [1 / 252] * 30 + [fisher_support(5, 5, 3)[0]] + [1.0] * 169
    q = discrete_bh(p, supports, 0.1)
    assert max(q[:30]) <= 0.1 < q[30] and q[31:] == [1.0] * 169
    assert {i for i, qi in enumerate(q) if qi <= 0.1} == _naive_dbh_step_up(p, supports, 0.1) == set(range(30))
    # When the 169 cases could never move (0 or 10 passes in 10 trials: p = 1 always) they cost nothing and
    # the same case is labelled; plain BH counts them all the same (200 x 21/252 / 31 = 0.54).
    never = supports[:31] + [fisher_support(5, 5, 10)] * 169
    assert discrete_bh(p, never, 0.1)[30] <= 0.1 < benjamini_hochberg(p)[30]


def test_discrete_bh_with_continuous_uniform_p_values_is_bh_at_alpha_over_1_plus_alpha() -> None:
    # F_i(t) = t (a fine grid of attainable values): the step-up is BH at alpha / (1 + alpha), and its
    # q-values are BH's times 1 + alpha (below tau_m); the step-down's are cummax m p / ((1 - p) k).
    grid = 100_000
    uniform = tuple(i / grid for i in range(1, grid + 1))
    rng = np.random.default_rng(7)
    p = sorted(float(v) for v in np.concatenate([rng.integers(1, 300, 12), rng.integers(1, grid, 28)]) / grid)
    alpha = 0.1
    q = discrete_bh(p, [uniform] * len(p), alpha)
    bh = benjamini_hochberg(p)
    assert [qi <= alpha for qi in q] == [b <= alpha / (1 + alpha) for b in bh]
    tau_m = alpha / (1 + alpha)
    for pi, qi, bi in zip(p, q, bh):
        if pi <= tau_m:
            assert qi == pytest.approx(min(1.0, bi * (1 + alpha)), rel=1e-4)
    m = len(p)
    expected, running = [], 0.0
    for k, pi in enumerate(p, start=1):
        running = max(running, min(1.0, m * pi / ((1 - pi) * k)))
        expected.append(running)
    assert discrete_bh(p, [uniform] * m) == pytest.approx(expected)

"""The prose of docs/regression-detection.md that does not depend on the simulated figures."""

METHOD = """## Method

One regression check compares the current run with up to two baselines: the previous
version's latest run and the previous night of this version. Everything it concludes is
error-controlled **jointly over those comparisons and over the suite's targets**.

### The suite-level verdict (`no_significant_regression`)

* **Unit: the case.** The estimate is the mean over cases of the per-case pass-rate
  difference (current minus baseline), i.e. the change of the suite pass rate with cases
  weighted equally. A flaky case that passes 2 of 5 on both sides contributes exactly 0.
* **Test:** an exact one-sided **sign-flip permutation test** of "the mean difference is
  below 0". With no change, the two runs of a case are exchangeable, so each case's
  difference is symmetric about 0 - whatever the case's pass probability and however
  correlated its trials are within a run. Pass-rate differences are multiples of
  1/trials, so the null distribution is computed exactly by convolution. With one trial
  per case the test *is* McNemar's exact test (also reported on its own).
* **Joint control:** the p-values of every (baseline, target) pair of the check are
  adjusted with **Holm's** step-down method: the chance that the check fails with no
  change anywhere is at most `alpha` (0.05), however many comparisons it makes.
* **Interval:** a 95% Student-t interval for the mean difference, with one
  pseudo-observation of a full flip added to the variance so a handful of identical cases
  cannot produce a zero-width interval.
* **Practical significance - the policy** (`regression:` in the suite; `analysis/policy.py`):

  | setting | default | meaning |
  |---|---|---|
  | `alpha` | 0.05 | family-wise level of the check's suite-level tests (Holm) |
  | `min_effect` | 0.05 | the margin: the smallest drop in pass rate worth failing for (5 points) |
  | `effect_rule` | `plausible` | how "large enough" is judged against the margin (below) |
  | `case_fdr` | 0.10 | false-discovery rate of the per-case "regressed" labels |
  | `case_labels` | `auto` | how the labels' q-values are computed: `bh`, `dbh`, `mirror`, `auto` (below) |

  `effect_rule`: **`plausible`** - a drop of the margin or more lies inside the 95%
  interval (the data do not rule it out); **`estimate`** - the estimated drop itself is at
  least the margin (a true drop of exactly the margin is then a coin flip); **`certain`** -
  the whole interval is a drop of at least the margin (fewest failures).

  The check **fails only when the drop is both significant and large enough**, and the
  report shows both answers (`significant`, `large_enough` columns of `regressions`; the
  Markdown and HTML reports and the check's metadata). The verdicts are:

  | verdict | when | the check |
  |---|---|---|
  | `regressed` | significant and large enough | fails |
  | `small_drop` | significant, but the interval shows it is smaller than the margin | passes, says so |
  | `improved` | the interval is above 0 | passes |
  | `no_regression` | not significant and the interval excludes a drop of the margin: "no drop of 5 pts or more" (an equivalence statement: the one-sided 97.5% bound is above -margin) | passes |
  | `inconclusive` | not significant, but a drop of the margin is not ruled out: too few cases x trials | passes, says so |

  Comparisons with the margin tolerate floating-point error: a drop of exactly 5 points
  computed as 0.049999999999999996 is a drop of 5 points.

### Per-case labels

* For each case, one-sided **Fisher exact tests** on the case's own trials (drop and rise);
  the unit is the case, and a case's trials are never pooled with other cases'.
* **False-discovery control** over every case test of the check (all baselines and targets);
  a case is labelled *regressed* (or *improved*) only when its q-value is at most `case_fdr`
  (10%). The q-value is stored (`regressions.q_value`) and shown next to the case's name.
  How the q-values are computed (`case_labels`):
  - **`bh`: Benjamini-Hochberg** on the Fisher p-values. Its guarantee needs calibrated
    p-values; trials of one case in one run are correlated in practice, which makes Fisher's
    p-values overconfident, the more so the more trials (at 10 trials a side a complete flip
    has p = 5e-6). Up to 5 trials a side the smallest Fisher p (1/252) is too large for this
    to matter (see the false-label tables); with 10 it is not (the "200 x 10, bh" rows below).
  - **`dbh`: the discrete Benjamini-Hochberg step-up** of Doehler, Durand and Roquain
    (2018, "New FDR bounds for discrete and heterogeneous tests", Electronic Journal of
    Statistics, doi:10.1214/18-EJS1441; the `DBH` procedure of the R package DiscreteFDR,
    whose source was read for the formulas). BH treats every test as able to reach any
    p-value; Fisher's tests are discrete: a case with s passes in its 10 trials (5 a side)
    never goes below 1/252 (s = 5), 5/210 (s = 4 or 6), 21/252 (s = 3 or 7), and a case that
    passed all or none of its trials never below 1. DBH replaces BH's m t by each test's own
    null CDF F_i (the hypergeometric law of its Fisher test given its margins:
    F_i(t) is the largest attainable p-value <= t): tau_m = the largest attainable t with
    sum_i F_i(t) / (1 - F_i(t)) <= m alpha; tau_k = the largest attainable t <= tau_m with
    sum_i F_i(t) / (1 - F_i(tau_m)) <= k alpha; the k-hat = max{k: p_(k) <= tau_k} smallest
    p-values are labelled. A case that cannot reach a threshold adds nothing to the sum.
    The stored q-value of a case is the smallest of sum_i F_i(p_(k)) / (1 - F_i(tau_m)) / k over
    the ranks k at or above its own with p_(k) <= tau_m (1 when its p-value is above tau_m), so
    it is labelled iff q <= `case_fdr`; tau_m is computed at `case_fdr`, so the q-values belong
    to that level. Proven to control the FDR for independent tests with exact null CDFs -
    that is, independent trials. For continuous p-values it is BH at alpha / (1 + alpha).
  - **`mirror`: the rises estimate the false drops** (the knockoff+ estimate of Barber and
    Candes): with no change a case is as likely to rise as to drop at the same strength,
    however correlated its trials, so the q-value of a drop is the smallest (1 + rises at
    least as strong) / (drops at least as strong). Exact FDR control without trusting the
    p-values; the price is that fewer than 1 / `case_fdr` (10) clear drops are never labelled,
    and improving cases make it cautious (the "cancel-out, mirror" rows).
  - **`auto`** (default): `bh` up to 5 trials a side, `mirror` beyond. Not `dbh`: with
    correlated trials (the simulation's rho = 0.1) Fisher's p-values are too small - for a
    case at p = 0.5, 5/5 -> 0/5 by chance has probability about 0.022 given its 5 passes, not
    1/252 - and `dbh`, which spends the error rate only where a case can reach it, then labels
    chance flips in a quarter of the no-change runs (the "Per-case labels: BH and the discrete
    BH" table). Plain BH's slack over the cases that cannot move hides the miscalibration. With
    independent trials `dbh` keeps its promise and labels far more broken cases; choose it
    when a case's trials are independent calls (no shared cache, seed or sampled context).
* Other cases whose pass rate moved are *flaky* (a side's trials disagree) or *changed* (a
  clean flip with too few trials to tell - one trial a side can never be labelled).
* The check's description names the labelled cases; when the target regressed, the cases
  whose pass rate fell follow (a thin drop over many cases can be significant while no
  single case is).
* Fisher rather than an unconditional test (Boschloo's): Boschloo's test is more powerful
  with independent trials, but an early probe of this simulation with it (BH, 200 x 5, 200
  runs per cell) labelled falsely in 3.5-10.5% of no-change runs at rho = 0.1 and 60-86% at
  rho = 0.3, and weakened the breakage signal; Fisher's conservatism keeps the labels honest.

### Breakage the mean hides (`no_hidden_breakage`)

When some cases break completely while the others improve a little, the mean does not
move and the suite-level test passes. The second check counts, per baseline and target,
the cases whose own trials dropped significantly (Fisher p <= 0.02, unadjusted) and those
that rose significantly by the same test. With no change each case is as likely to show
one as the other, so given how many moved either way the number of drops is Binomial(moved,
1/2): the exact one-sided **sign test** gives the p-value (valid for any case mix and any
within-run correlation, since it only needs the two runs to be exchangeable). The p-values
of all baselines x targets are Holm-adjusted; the check fails when the adjusted p < `alpha`,
and names the cases labelled regressed. It needs 4 or more trials a side (a single
case cannot reach p <= 0.02 with fewer) and says "not testable" otherwise.

The threshold 0.02 (`case_alpha`) was chosen for power, on the cancel-out scenario: with 5
trials a side only a complete flip (5/5 -> 0/5) counts, and that keeps out most of the
significant rises that the improving cases produce. A first run of this simulation with 0.05
flagged the Beta(2, 2) cancel-out in 78% of runs; a probe of 200 runs measured 0.02 -> 96%,
0.05 -> 76%, 0.10 -> 19%. The test stays exact whatever the threshold, so the choice moves
power only, not the false-alarm rate.

### pass@k and pass^k

Both are the unbiased estimators: pass@k = 1 - C(n - c, k) / C(n, k) and pass^k =
C(c, k) / C(n, k) per case (averaged over cases), for k up to the trials of the case with
the fewest. With fewer trials than k they are not computed (a ValueError for n < k or n = 0
in `analysis.metrics`), and a gate on such a metric fails with "needs at least k graded
trials of every case". The plug-in (c/n)^k overstated pass^k (4 of 5 gave pass^5 = 0.33;
the unbiased estimate is 0).
"""

SETUP = """## Simulation

Each run draws a fresh suite, samples a baseline run and a current run, turns them into
`TrialResult`s (status `graded`, pass/fail, score 1/0) and passes them to `compare_all` with
the default `RegressionPolicy()` - the `regression_report` stage's code path.

* **Case mixes:** per-case pass probabilities p from **Beta(0.5, 0.5)** (U-shaped: most
  cases nearly always pass or nearly always fail) or **Beta(2, 2)** (hump-shaped: most
  cases are flaky). Both have a mean pass rate of 50%.
* **Correlated trials:** a case's trials in one run share that run's pass probability,
  drawn from Beta(p phi, (1 - p) phi) with phi = 1/rho - 1; rho = 0.1 by default (0 and
  0.3 in "Other scenarios"). The trial counts are beta-binomial: a case's pass rate varies
  between runs more than independent trials would say.
* **No change:** both runs use the same p.
* **Diffuse drop of d points** (the grid): every case loses the same amount, clipped at 0,
  found by bisection so the mean falls by exactly d.
* **Concentrated drop:** random cases with p >= 0.5 break completely until the mean falls by d.
* **Cancel-out breakage:** the 10% of cases with the highest p (20 of 200) break completely
  (p -> 0) while all the others improve by the same amount (clipped at 1) so the mean
  pass rate does not move at all.

A *detection* is a run where the check fails; a *false alarm* a no-change run where it
fails; a *false label* a case labelled regressed whose true p did not fall.
"""

LIMITS = """## Limits

* **Per-case labels and correlated trials.** No test on one case's trials can know how much
  that case varies between runs. Benjamini-Hochberg on Fisher p-values is kept to 5 trials a
  side or fewer, where the simulation shows no false labels at rho = 0.1 (the discrete BH does
  not have that margin: see the next point); with strongly
  correlated trials (rho = 0.3) false labels appear in cancel-out runs (see the table). The
  mirror estimate does not have this problem, but it cannot label fewer than 10 cases and is
  cautious when other cases improve. The suite-level test and the breakage signal only need
  the two runs to be exchangeable.
* **Labels need trials, and honest labels need independent trials.** With 5 trials a side the
  smallest Fisher p-value is 1/252, and a case that passed 4 of 5 before cannot go below 5/210.
  Plain BH (the default up to 5 trials) counts every case at every threshold, so in the Beta(2, 2)
  cancel-out, where the broken cases passed only about 85% of the time and many had 4 of 5
  before, it labels only about half of them: the goal "70% of broken cases labelled" is **not
  met** by the default in that mix. The discrete BH (`case_labels: dbh`) meets it, and with
  independent trials (rho = 0) it also keeps false labels rare - both label goals met; but with
  the simulation's correlated trials (rho = 0.1) Fisher's p-values are too small and dbh labels
  chance flips in about a quarter of the no-change runs, which breaks the goal "<= 10% of
  no-change runs with a false label" (the "Per-case labels" table and the lines under the Goals
  table). That is why `auto` keeps BH.
  At rho = 0.1 the two goals conflict at 200 x 5 in this mix for a calibrated per-case test of
  this kind, not only for Fisher's: a probe (`python -m benchmarks.regression_oracle`, same simulated runs, 1000 per
  cell) gave the discrete BH p-values from the simulation's own null model *with the true rho*
  (a case's current passes given its total, both runs beta-binomial) - an oracle no real suite
  has. It kept false labels at 0.0-0.1% of no-change runs but labelled 54.3% of the broken cases
  in the Beta(2, 2) cancel-out (96.5% in Beta(0.5, 0.5)): calibrated for the correlation, a
  5/5 -> 0/5 flip of a case at p = 0.5 has probability about 0.022 under no change (not 1/252)
  and a 4/5 -> 0/5 flip about 0.068, too weak to label among 200 cases at FDR 10%. Labelling 70%
  there needs trials closer to independent (at rho = 0 dbh labels about 80%); the breakage
  *check* fires either way.
* **Breakage and many trials.** The breakage count's threshold (Fisher p <= 0.02) admits more
  rises of improving cases at 10 trials a side, so its power on cancel-out breakage is lower
  there than at 5 (see "Other scenarios"); the threshold is a policy value (`case_alpha` in
  `RegressionPolicy`), not yet a suite setting.
* **Equal trials.** The sign symmetry that makes the tests exact needs the same number of
  trials per case on both sides; with unequal trials (3 now, 5 before) they are approximate.
* **Small drops in large suites.** With the default `plausible` rule a significant drop
  whose interval excludes the margin is reported as `small_drop` and passes; set
  `min_effect: 0` to fail on any significant drop, or a smaller margin.
* Categories are not tested separately (one test per target over all its cases).
"""

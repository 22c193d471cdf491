"""The regression policy: how sure (statistical significance) and how large (practical
significance) a drop must be before the regression check fails, and the words for it.

Two questions are answered separately and reported side by side:

* **significant** - the Holm-adjusted one-sided p-value of the suite-level test
  is below ``alpha`` (joint over the comparisons and targets of one check);
* **large enough** - the drop meets the margin ``min_effect`` under ``effect_rule``:

  - ``plausible`` (default): a drop of the margin or more lies inside the 95%
    interval - the data do not rule it out. With a large suite a 1-point drop
    is significant but its interval excludes 5 points: "significant, smaller
    than the margin", the check passes. A true drop of exactly the margin is
    caught as often as the test sees it (not a coin flip, as with ``estimate``);
  - ``estimate``: the estimated drop itself is at least the margin (a true drop
    of exactly the margin is then caught about half the time);
  - ``certain``: the whole interval lies beyond the margin (the drop is shown to
    be at least the margin; the strictest, fewest failures).

A target *regressed* when it is both. Where the interval excludes a drop of
the margin, "no regression" is said as an equivalence statement ("no drop of
5 points or more"); where it does not, the verdict is *inconclusive* and says
so. Comparisons with the margin allow for floating-point error (a drop of
exactly 5.0 points computed as 0.04999999999999998 is a drop of 5 points).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

EffectRule = Literal["plausible", "estimate", "certain"]
CaseLabels = Literal["auto", "dbh", "bh", "mirror"]
CASE_LABEL_METHODS = ("auto", "dbh", "bh", "mirror")
# Up to this many trials a side, Benjamini-Hochberg on Fisher p-values (the smallest is 1/252 at
# 5 a side) kept false labels at 0% with correlated trials in the simulation; beyond it the
# tiny p-values of many trials are not calibrated and the mirror estimate takes over ("auto").
# "auto" does not use the discrete BH ("dbh"): it is exact for independent trials, but with the
# simulation's correlated trials (rho 0.1) Fisher's p-values are too small and dbh, which spends
# the FDR only on the cases that can reach them, labelled falsely in 25-29% of no-change runs at
# 200 x 5 (docs/regression-detection.md); plain BH's slack over untestable cases hides that.
BH_MAX_TRIALS = 5
# Pass-rate differences are multiples of 1/trials; any mean of them that should equal
# the margin is within this of it after floating-point rounding.
MARGIN_TOLERANCE = 1e-9


@dataclass(frozen=True)
class RegressionPolicy:
    alpha: float = 0.05  # family-wise level of the suite-level verdicts of one check (Holm)
    min_effect: float = 0.05  # practical-significance margin: a drop of 5 points of pass rate
    effect_rule: EffectRule = "plausible"  # how "large enough" is judged against the margin
    case_fdr: float = 0.10  # false-discovery rate of the per-case "regressed" labels
    # How the labels' q-values are computed: "bh" - Benjamini-Hochberg on the cases' Fisher p-values;
    # "dbh" - the discrete BH step-up of Doehler, Durand and Roquain (2018) on them, which counts only the
    # tests that can reach a p-value (more labels; exact for independent trials, too many false labels
    # when trials within a run are correlated); "mirror" - the rises estimate the false drops (knockoff+),
    # robust to correlated trials but it never labels fewer than 1 / case_fdr cases;
    # "auto" - bh up to BH_MAX_TRIALS trials a side, else mirror.
    case_labels: CaseLabels = "auto"
    # A case "dropped significantly" for the breakage count (unadjusted Fisher p <= case_alpha). 0.02:
    # with 5 trials a side only a complete flip (5/5 -> 0/5, p = 1/252) counts, and the simulation found
    # the count far more powerful so (cancel-out breakage, Beta(2, 2) mix: 0.02 -> 96%, 0.05 -> 76%,
    # 0.10 -> 19%: looser thresholds let the improving cases' rises in). The test is exact for any value.
    case_alpha: float = 0.02
    interval_level: float = 0.95  # the interval reported and judged against the margin
    seed: int = 0

    def __post_init__(self) -> None:
        if self.case_labels not in CASE_LABEL_METHODS:
            raise ValueError(f"case_labels must be auto, dbh, bh or mirror (got {self.case_labels!r})")
        if self.effect_rule not in ("plausible", "estimate", "certain"):
            raise ValueError(f"effect_rule must be plausible, estimate or certain (got {self.effect_rule!r})")
        for name in ("alpha", "case_fdr", "case_alpha", "interval_level"):
            if not 0 < getattr(self, name) < 1:
                raise ValueError(f"{name} must be between 0 and 1 (got {getattr(self, name)!r})")
        if not 0 <= self.min_effect <= 1:
            raise ValueError(f"min_effect must be between 0 and 1 (got {self.min_effect!r})")


@dataclass(frozen=True)
class TargetCall:
    significant: bool
    large_enough: bool
    regressed: bool
    verdict: str  # regressed | small_drop | improved | no_regression | inconclusive
    wording: str


def _pts(value: float) -> str:
    return f"{value * 100:+.1f}"


def at_least(value: float, margin: float) -> bool:
    """``value >= margin`` with the floating-point tolerance (both as fractions of 1)."""
    return value >= margin - MARGIN_TOLERANCE


def judge_target(delta: float, ci_low: float, ci_high: float, adjusted_p: float,
                 policy: RegressionPolicy) -> TargetCall:
    """Significant? Large enough? The verdict and its sentence for one target of one comparison."""
    margin = policy.min_effect
    significant = adjusted_p < policy.alpha and delta < 0
    large_enough = {
        "plausible": at_least(-ci_low, margin),
        "estimate": at_least(-delta, margin),
        "certain": at_least(-ci_high, margin),
    }[policy.effect_rule]
    interval = f"{_pts(delta)} pts [{_pts(ci_low)}, {_pts(ci_high)}]"
    level = f"{policy.interval_level:.0%} interval"
    test = f"p = {adjusted_p:.3g} (Holm-adjusted; alpha {policy.alpha:g})"
    m = f"{margin * 100:g} pts"
    if significant and large_enough:
        rule = {"plausible": f"a drop of {m} or more is inside the {level}",
                "estimate": f"the estimated drop is at least {m}",
                "certain": f"the whole {level} is a drop of at least {m}"}[policy.effect_rule]
        return TargetCall(True, True, True, "regressed",
                          f"regressed: {interval}; significant, {test}, and large enough: {rule}")
    if significant:
        return TargetCall(True, False, False, "small_drop",
                          f"significant drop {interval}, {test}, but not large enough for the {m} margin "
                          f"({policy.effect_rule} rule): not a regression under the policy")
    if ci_low > 0:
        return TargetCall(False, False, False, "improved", f"improved: {interval}")
    if not at_least(-ci_low, margin):
        return TargetCall(False, False, False, "no_regression",
                          f"no regression: no drop of {m} or more (the {level} {interval} excludes it); {test}")
    return TargetCall(False, large_enough, False, "inconclusive",
                      f"inconclusive: no significant drop ({test}), but the {level} {interval} does not rule "
                      f"out a drop of {m} or more - too few cases x trials to tell")

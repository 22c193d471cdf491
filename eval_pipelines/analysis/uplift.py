"""Skill uplift: does the skill help? ``with_skill`` minus ``without_skill``, paired by case.

skill-creator's benchmark answers the question with a delta of means; a delta alone cannot tell
a real effect from the noise of a few runs. Here it goes through the same machinery as a
regression verdict (``regression``, ``policy``):

* the unit is the case: each case's mean value over its trials in each configuration (the value
  of a trial is its share of expectations met when the case has expectations, else 1/0 for
  pass/fail), and the estimate is the mean of the per-case differences;
* two exact one-sided sign-flip permutation tests (a rise, a drop), each at ``alpha / 2``, so
  that a skill with no effect is called "helps" (or "hurts") in at most ``alpha / 2`` of runs;
* a Student-t interval of the mean difference and the practical-significance margin of the
  policy (``min_effect``, judged by its ``effect_rule``), mirrored for a rise.

The verdict is ``helps`` (significant rise, large enough), ``hurts`` (significant drop, large
enough) or ``no_measurable_effect``; the wording says which part failed.
``benchmarks/uplift_power.py`` measures the false "helps" rate and the power.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Mapping, Sequence

from eval_pipelines.analysis.policy import RegressionPolicy, at_least
from eval_pipelines.analysis.stats import mean_interval, sign_flip_p

UpliftVerdict = Literal["helps", "no_measurable_effect", "hurts"]


@dataclass(frozen=True)
class Uplift:
    target: str
    cases_compared: int
    with_skill: float  # mean over cases of the case's mean value, the skill installed
    without_skill: float
    delta: float  # with - without
    ci_low: float
    ci_high: float
    p_rise: float  # one-sided: the skill raises the value
    p_drop: float  # one-sided: the skill lowers it
    significant: bool
    large_enough: bool
    verdict: UpliftVerdict
    wording: str


def _pts(value: float) -> str:
    return f"{value * 100:+.1f}"


def _large_enough(low: float, delta: float, high: float, margin: float, rule: str) -> bool:
    """The policy's margin rule for a rise (``low``..``high`` is the interval of the rise)."""
    return {"plausible": at_least(high, margin), "estimate": at_least(delta, margin),
            "certain": at_least(low, margin)}[rule]


def skill_uplift(with_skill: Mapping[str, Sequence[float]], without_skill: Mapping[str, Sequence[float]],
                 target: str = "*", policy: RegressionPolicy = RegressionPolicy()) -> Uplift | None:
    """The uplift over the cases both configurations ran (``{test_id: [value per trial]}``);
    None when no case ran in both."""
    cases = sorted(k for k in with_skill.keys() & without_skill.keys() if with_skill[k] and without_skill[k])
    if not cases:
        return None
    with_means = [sum(with_skill[k]) / len(with_skill[k]) for k in cases]
    without_means = [sum(without_skill[k]) / len(without_skill[k]) for k in cases]
    diffs = [w - o for w, o in zip(with_means, without_means)]
    delta = sum(diffs) / len(diffs)
    low, high = mean_interval(diffs, policy.interval_level) if len(diffs) > 1 else (delta, delta)
    p_drop = sign_flip_p(diffs, seed=policy.seed)
    p_rise = sign_flip_p([-d for d in diffs], seed=policy.seed)
    half = policy.alpha / 2
    margin, rule = policy.min_effect, policy.effect_rule
    interval = f"{_pts(delta)} pts [{_pts(low)}, {_pts(high)}] over {len(cases)} cases"
    m = f"{margin * 100:g} pts"
    if p_rise < half and delta > 0:
        large = _large_enough(low, delta, high, margin, rule)
        verdict: UpliftVerdict = "helps" if large else "no_measurable_effect"
        wording = (f"helps: {interval}; p = {p_rise:.3g} (one-sided, alpha/2 = {half:g})"
                   if large else f"a significant rise {interval}, but smaller than the {m} margin")
        significant = True
    elif p_drop < half and delta < 0:
        large = _large_enough(-high, -delta, -low, margin, rule)
        verdict = "hurts" if large else "no_measurable_effect"
        wording = (f"hurts: {interval}; p = {p_drop:.3g} (one-sided, alpha/2 = {half:g})"
                   if large else f"a significant drop {interval}, but smaller than the {m} margin")
        significant = True
    else:
        large, verdict, significant = False, "no_measurable_effect", False
        wording = (f"no measurable effect: {interval}; p = {min(p_rise, p_drop):.3g} "
                   f"(neither a rise nor a drop is significant at alpha/2 = {half:g})")
    return Uplift(target=target, cases_compared=len(cases), with_skill=sum(with_means) / len(cases),
                  without_skill=sum(without_means) / len(cases), delta=delta, ci_low=low, ci_high=high,
                  p_rise=p_rise, p_drop=p_drop, significant=significant, large_enough=large,
                  verdict=verdict, wording=wording)

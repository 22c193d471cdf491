"""Regression verdicts: a version (or a night) against its baseline.

Per case, over its trials: a single-trial case *regressed* when it went from
pass to fail; with several trials it regressed only when Fisher's exact test
says the drop in its pass rate is significant (``case_alpha``) and at least
``min_effect``; a case whose trials disagree without a significant change is
*flaky*, not a regression. A case whose trials all agree on each side but
flipped from all-pass to all-fail is *regressed* even when it has too few
trials for Fisher's test to be significant (2 or 3 per side), like a
single-trial flip.

Per target, over the cases present on both sides: the estimate is the mean of
per-case pass-rate differences (a flaky case that passes 2 of 5 on both sides
contributes exactly 0), tested with an exact sign-flip
permutation test (one-sided, for a drop), with a paired bootstrap 95%
interval. With one trial per case this test is McNemar's exact test, whose
discordant counts are reported too. Several targets are corrected with Holm's
method, so adding targets does not inflate false alarms. The suite regressed
when an adjusted p-value is below ``alpha`` and the drop is at least
``min_effect``. Its drivers are the individually regressed cases, then - for
a regressed target - the other cases whose pass rate fell, largest fall first
(a thin drop over many cases can be significant while no single case is).
``benchmarks/regression_power.py`` measures detection and false-alarm rates
(docs/regression-detection.md).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Literal

from eval_pipelines.analysis.metrics import TrialResult
from eval_pipelines.analysis.stats import bootstrap_ci, fisher_one_sided, holm, mcnemar_exact, sign_flip_p

Change = Literal["regressed", "improved", "unchanged", "flaky", "new", "removed"]


@dataclass(frozen=True)
class RegressionPolicy:
    alpha: float = 0.05
    min_effect: float = 0.05  # smallest pass-rate drop worth a failing check (5 points)
    case_alpha: float = 0.05
    seed: int = 0


@dataclass(frozen=True)
class Side:
    trials: int
    passes: int
    mean_score: float

    @property
    def pass_rate(self) -> float:
        return self.passes / self.trials if self.trials else 0.0

    @property
    def mixed(self) -> bool:
        return 0 < self.passes < self.trials


@dataclass(frozen=True)
class CaseChange:
    test_id: str
    target: str
    change: Change
    baseline: Side | None
    current: Side | None
    p_value: float | None = None

    @property
    def pass_rate_delta(self) -> float | None:
        if self.baseline is None or self.current is None:
            return None
        return self.current.pass_rate - self.baseline.pass_rate


@dataclass(frozen=True)
class TargetVerdict:
    target: str
    cases_compared: int
    baseline_pass_rate: float
    current_pass_rate: float
    pass_rate_delta: float
    ci_low: float
    ci_high: float
    p_value: float
    adjusted_p: float
    mcnemar_b: int  # pass -> fail among cases with stable baselines
    mcnemar_c: int  # fail -> pass
    mcnemar_p: float
    score_delta: float
    regressed: bool
    drivers: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Comparison:
    cases: list[CaseChange]
    targets: list[TargetVerdict]

    @property
    def regressed(self) -> bool:
        return any(t.regressed for t in self.targets)


def _sides(results: Iterable[TrialResult]) -> dict[tuple[str, str], Side]:
    grouped: dict[tuple[str, str], list[TrialResult]] = defaultdict(list)
    for r in results:
        if r.status in ("graded", "error"):
            grouped[(r.target, r.test_id)].append(r)
    return {key: Side(len(rows), sum(r.verdict == "pass" for r in rows),
                      sum(r.score or 0.0 for r in rows) / len(rows))
            for key, rows in grouped.items()}


def classify(base: Side | None, cur: Side | None, policy: RegressionPolicy) -> tuple[Change, float | None]:
    if base is None:
        return "new", None
    if cur is None:
        return "removed", None
    if base.trials == 1 and cur.trials == 1:
        if base.passes > cur.passes:
            return "regressed", None
        return ("improved" if cur.passes > base.passes else "unchanged"), None
    drop_p = fisher_one_sided(base.passes, base.trials, cur.passes, cur.trials)
    rise_p = fisher_one_sided(cur.passes, cur.trials, base.passes, base.trials)
    delta = cur.pass_rate - base.pass_rate
    if drop_p < policy.case_alpha and -delta >= policy.min_effect:
        return "regressed", drop_p
    if rise_p < policy.case_alpha and delta >= policy.min_effect:
        return "improved", rise_p
    if base.mixed or cur.mixed:
        return "flaky", min(drop_p, rise_p)
    # Neither side mixed: every trial agreed on each side. A full flip (all pass ->
    # all fail) with too few trials for Fisher to reach case_alpha (2 or 3 per
    # side: p >= 0.05) is as clear as a single-trial flip, not "unchanged".
    if delta < 0:
        return "regressed", drop_p
    if delta > 0:
        return "improved", rise_p
    return "unchanged", min(drop_p, rise_p)


def compare(current: Iterable[TrialResult], baseline: Iterable[TrialResult],
            policy: RegressionPolicy = RegressionPolicy()) -> Comparison:
    cur, base = _sides(current), _sides(baseline)
    cases = []
    for key in sorted(cur.keys() | base.keys()):
        change, p = classify(base.get(key), cur.get(key), policy)
        cases.append(CaseChange(key[1], key[0], change, base.get(key), cur.get(key), p))
    verdicts: list[TargetVerdict] = []
    targets = sorted({c.target for c in cases})
    raw = []
    for target in targets:
        paired = [c for c in cases if c.target == target and c.baseline and c.current]
        if not paired:
            continue
        diffs = [c.current.pass_rate - c.baseline.pass_rate for c in paired]
        stable = [c for c in paired if not c.baseline.mixed]
        b = sum(c.baseline.pass_rate >= 0.5 and c.current.pass_rate < 0.5 for c in stable)
        c_ = sum(c.baseline.pass_rate < 0.5 and c.current.pass_rate >= 0.5 for c in stable)
        low, high = bootstrap_ci(diffs, seed=policy.seed)
        raw.append((target, paired, diffs, b, c_, low, high, sign_flip_p(diffs, seed=policy.seed)))
    adjusted = holm([r[-1] for r in raw])
    for (target, paired, diffs, b, c_, low, high, p), adj in zip(raw, adjusted):
        delta = sum(diffs) / len(diffs)
        regressed = adj < policy.alpha and -delta >= policy.min_effect
        ranked = sorted(paired, key=lambda c: (c.pass_rate_delta or 0.0, c.test_id))
        drivers = [c.test_id for c in ranked if c.change == "regressed"]
        if regressed:
            # A drop spread thinly over many cases can be significant for the target
            # while no single case is: then the cases that fell, largest fall first.
            drivers += [c.test_id for c in ranked
                        if c.change != "regressed" and (c.pass_rate_delta or 0.0) < 0]
        verdicts.append(TargetVerdict(
            target=target, cases_compared=len(paired),
            baseline_pass_rate=sum(c.baseline.pass_rate for c in paired) / len(paired),
            current_pass_rate=sum(c.current.pass_rate for c in paired) / len(paired),
            pass_rate_delta=delta, ci_low=low, ci_high=high, p_value=p, adjusted_p=adj,
            mcnemar_b=b, mcnemar_c=c_, mcnemar_p=mcnemar_exact(b, c_)[1],
            score_delta=sum(c.current.mean_score - c.baseline.mean_score for c in paired) / len(paired),
            regressed=regressed, drivers=drivers,
        ))
    return Comparison(cases, verdicts)

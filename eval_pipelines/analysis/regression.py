"""Regression verdicts: a version (or a night) against its baselines.

One regression check compares the current run with up to two baselines (the
previous version and the previous night); everything it concludes is
error-controlled *jointly* over those comparisons and over the targets:

* **Suite level** (per comparison and target), over the cases present on both
  sides: the estimate is the mean of per-case pass-rate differences (the case
  is the unit; a flaky case that passes 2 of 5 on both sides contributes 0),
  tested with an exact one-sided sign-flip permutation test. The p-values of
  all comparisons x targets are Holm-adjusted: the chance of any false
  "significant" in one check is at most ``alpha``. Beside it, a 95% Student-t
  interval of the change and the practical-significance policy (``policy``):
  a target *regressed* when the drop is significant **and** large enough; a
  significant drop the interval shows to be smaller than the margin is
  reported as such and passes; "no regression" is said in equivalence terms
  when the interval excludes a drop of the margin.
* **Per case**: one-sided Fisher exact tests on the case's own trials (drop
  and rise), with false-discovery q-values over every case test of the check
  (Benjamini-Hochberg, its discrete version that knows each Fisher test's
  attainable p-values, or the mirror estimate for many trials: ``policy``); a
  case is labelled *regressed* (or *improved*) only when its q-value is at
  most ``case_fdr``. Other cases whose pass rate moved are *flaky* (a
  side's trials disagree) or *changed* (a clean flip with too few trials to
  tell, e.g. one trial each side).
* **Breakage** (``breakage``): a second signal for heterogeneous breakage that
  the mean can hide when other cases improve.

``benchmarks/regression_power.py`` measures all of it (docs/regression-detection.md).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable, Literal, Sequence

from eval_pipelines.analysis.breakage import BreakageVerdict, breakage_verdicts
from eval_pipelines.analysis.metrics import TrialResult
from eval_pipelines.analysis.policy import BH_MAX_TRIALS, RegressionPolicy, TargetCall, judge_target
from eval_pipelines.analysis.stats import (benjamini_hochberg, discrete_bh, fisher_one_sided, fisher_support, holm,
                                           mcnemar_exact, mean_interval, mirror_q_values, sign_flip_p)

__all__ = ["Change", "RegressionPolicy", "Side", "CaseChange", "TargetVerdict", "BreakageVerdict",
           "Comparison", "classify", "compare", "compare_all", "case_p_values"]

Change = Literal["regressed", "improved", "unchanged", "changed", "flaky", "new", "removed"]


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
    p_value: float | None = None  # one-sided Fisher p in the direction of the change (drop when none)
    q_value: float | None = None  # its false-discovery q-value over every case test of the check (policy.case_labels)
    drop_p: float | None = None  # one-sided Fisher p for a drop (the breakage count uses it)

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
    significant: bool = False  # the Holm-adjusted p is below alpha
    large_enough: bool = False  # the drop meets the practical-significance margin under the policy's rule
    verdict: str = "no_regression"  # regressed | small_drop | improved | no_regression | inconclusive
    wording: str = ""  # the verdict as a sentence, with the numbers


@dataclass(frozen=True)
class Comparison:
    cases: list[CaseChange]
    targets: list[TargetVerdict]
    breakage: list[BreakageVerdict] = field(default_factory=list)

    @property
    def regressed(self) -> bool:
        return any(t.regressed for t in self.targets)

    @property
    def broken(self) -> bool:
        return any(b.broken for b in self.breakage)


def _sides(results: Iterable[TrialResult]) -> dict[tuple[str, str], Side]:
    counts: dict[tuple[str, str], list] = {}
    for r in results:
        if r.status in ("graded", "error"):
            entry = counts.get((r.target, r.test_id))
            if entry is None:
                entry = counts[(r.target, r.test_id)] = [0, 0, 0.0]
            entry[0] += 1
            entry[1] += r.verdict == "pass"
            entry[2] += r.score or 0.0
    return {key: Side(n, passes, total / n) for key, (n, passes, total) in counts.items()}


@lru_cache(maxsize=65_536)
def case_p_values(base_passes: int, base_trials: int, cur_passes: int, cur_trials: int) -> tuple[float, float]:
    """(drop p, rise p): one-sided Fisher exact tests on one case's trials, before vs after.

    Fisher rather than an unconditional test (Boschloo's, more powerful with
    independent trials): trials of one case in one run are correlated in practice,
    and the conditional test's conservatism is what keeps false labels rare then
    (benchmarks/regression_power.py measured both)."""
    return (fisher_one_sided(base_passes, base_trials, cur_passes, cur_trials),
            fisher_one_sided(cur_passes, cur_trials, base_passes, base_trials))


def classify(base: Side | None, cur: Side | None, drop_q: float = 1.0, rise_q: float = 1.0,
             case_fdr: float = 0.10) -> Change:
    """A case's label from its q-values: only a change that survives the FDR is a regression."""
    if base is None:
        return "new"
    if cur is None:
        return "removed"
    if drop_q <= case_fdr and cur.pass_rate < base.pass_rate:
        return "regressed"
    if rise_q <= case_fdr and cur.pass_rate > base.pass_rate:
        return "improved"
    if base.mixed or cur.mixed:
        return "flaky"
    return "changed" if cur.passes * base.trials != base.passes * cur.trials else "unchanged"


def _label_cases(per_comparison: list[dict[tuple[str, str], tuple[Side | None, Side | None]]],
                 policy: RegressionPolicy) -> list[list[CaseChange]]:
    """Per comparison, every case with its p- and q-values (FDR over the whole check)."""
    tests: list[tuple[int, tuple[str, str], float, float]] = []
    drop_supports, rise_supports = [], []
    for index, pairs in enumerate(per_comparison):
        for key, (base, cur) in pairs.items():
            if base is not None and cur is not None:
                drop, rise = case_p_values(base.passes, base.trials, cur.passes, cur.trials)
                tests.append((index, key, drop, rise))
                total = base.passes + cur.passes
                drop_supports.append(fisher_support(base.trials, cur.trials, total))
                rise_supports.append(fisher_support(cur.trials, base.trials, total))
    method = policy.case_labels
    if method == "auto":
        most = max((max(b.trials, c.trials) for pairs in per_comparison for b, c in pairs.values()
                    if b is not None and c is not None), default=0)
        method = "bh" if most <= BH_MAX_TRIALS else "mirror"
    if method == "dbh":
        # The step-up at case_fdr, with each test's own null CDF (its attainable p-values, from its
        # margins) instead of BH's m t.
        drop_q = discrete_bh([t[2] for t in tests], drop_supports, policy.case_fdr)
        rise_q = discrete_bh([t[3] for t in tests], rise_supports, policy.case_fdr)
    elif method == "bh":
        drop_q = benjamini_hochberg([t[2] for t in tests])
        rise_q = benjamini_hochberg([t[3] for t in tests])
    else:
        # Each case's one-sided p in the direction it moved; rises are the mirror of drops.
        moved = [(-1 if cur.pass_rate < base.pass_rate else 1 if cur.pass_rate > base.pass_rate else 0, drop, rise)
                 for index, key, drop, rise in tests for base, cur in [per_comparison[index][key]]]
        directional = [drop if sign < 0 else rise for sign, drop, rise in moved]
        drop_q = mirror_q_values(directional, [sign for sign, _, _ in moved])
        rise_q = mirror_q_values(directional, [-sign for sign, _, _ in moved])
    found = {(t[0], t[1]): (t[2], t[3], dq, rq) for t, dq, rq in zip(tests, drop_q, rise_q)}
    out = []
    for index, pairs in enumerate(per_comparison):
        cases = []
        for key in sorted(pairs):
            base, cur = pairs[key]
            if (index, key) not in found:
                cases.append(CaseChange(key[1], key[0], classify(base, cur), base, cur))
                continue
            drop, rise, dq, rq = found[(index, key)]
            change = classify(base, cur, dq, rq, policy.case_fdr)
            rising = cur.pass_rate > base.pass_rate
            cases.append(CaseChange(key[1], key[0], change, base, cur, p_value=rise if rising else drop,
                                    q_value=rq if rising else dq, drop_p=drop))
        out.append(cases)
    return out


def _target_stats(cases: list[CaseChange], policy: RegressionPolicy) -> list[tuple]:
    raw = []
    for target in sorted({c.target for c in cases}):
        paired = [c for c in cases if c.target == target and c.baseline and c.current]
        if not paired:
            continue
        diffs = [c.current.pass_rate - c.baseline.pass_rate for c in paired]
        raw.append((target, paired, diffs, sign_flip_p(diffs, seed=policy.seed)))
    return raw


def _verdict(target: str, paired: list[CaseChange], diffs: list[float], p: float, adjusted: float,
             policy: RegressionPolicy) -> TargetVerdict:
    delta = sum(diffs) / len(diffs)
    low, high = mean_interval(diffs, policy.interval_level)
    call: TargetCall = judge_target(delta, low, high, adjusted, policy)
    stable = [c for c in paired if not c.baseline.mixed]
    b = sum(c.baseline.pass_rate >= 0.5 and c.current.pass_rate < 0.5 for c in stable)
    c_ = sum(c.baseline.pass_rate < 0.5 and c.current.pass_rate >= 0.5 for c in stable)
    ranked = sorted(paired, key=lambda c: (c.pass_rate_delta or 0.0, c.test_id))
    drivers = [c.test_id for c in ranked if c.change == "regressed"]
    if call.regressed:
        # A drop spread thinly over many cases can be significant for the target while
        # no single case is: then the cases that fell, largest fall first.
        drivers += [c.test_id for c in ranked if c.change != "regressed" and (c.pass_rate_delta or 0.0) < 0]
    return TargetVerdict(
        target=target, cases_compared=len(paired),
        baseline_pass_rate=sum(c.baseline.pass_rate for c in paired) / len(paired),
        current_pass_rate=sum(c.current.pass_rate for c in paired) / len(paired),
        pass_rate_delta=delta, ci_low=low, ci_high=high, p_value=p, adjusted_p=adjusted,
        mcnemar_b=b, mcnemar_c=c_, mcnemar_p=mcnemar_exact(b, c_)[1],
        score_delta=sum(c.current.mean_score - c.baseline.mean_score for c in paired) / len(paired),
        regressed=call.regressed, drivers=drivers, significant=call.significant,
        large_enough=call.large_enough, verdict=call.verdict, wording=call.wording)


def compare_all(current: Iterable[TrialResult], baselines: Sequence[Iterable[TrialResult]],
                policy: RegressionPolicy = RegressionPolicy()) -> list[Comparison]:
    """The current run against each baseline, with joint error control over all of them:
    Holm over every (baseline, target) suite-level test, FDR over every case test, Holm
    over every breakage test. One ``Comparison`` per baseline, in order."""
    cur = _sides(current)
    per_comparison = []
    for baseline in baselines:
        base = _sides(baseline)
        per_comparison.append({key: (base.get(key), cur.get(key)) for key in cur.keys() | base.keys()})
    labelled = _label_cases(per_comparison, policy)
    stats = [_target_stats(cases, policy) for cases in labelled]
    adjusted = iter(holm([row[-1] for rows in stats for row in rows]))
    breakage = breakage_verdicts(labelled, policy)
    out = []
    for cases, rows, broken in zip(labelled, stats, breakage):
        targets = [_verdict(target, paired, diffs, p, next(adjusted), policy)
                   for target, paired, diffs, p in rows]
        out.append(Comparison(cases, targets, broken))
    return out


def compare(current: Iterable[TrialResult], baseline: Iterable[TrialResult],
            policy: RegressionPolicy = RegressionPolicy()) -> Comparison:
    """One baseline: ``compare_all`` with a family of one comparison."""
    return compare_all(current, [baseline], policy)[0]

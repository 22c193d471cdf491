"""Breakage the mean can hide: more cases dropped significantly than chance allows.

When a few cases break completely while the others improve a little, the mean
pass rate does not move and the suite-level test passes. This signal looks at
the *count* of cases whose own trials dropped significantly (one-sided Fisher
p <= ``case_alpha``, unadjusted) against the count that rose significantly by
the same test. With no change the two sides of every case are exchangeable, so
a case is as likely to show a significant drop as a significant rise, and -
given how many cases moved significantly either way - the number of drops is
Binomial(moved, 1/2): the exact one-sided sign test gives the p-value. This
holds whatever the case mix, and also when the trials of a case are correlated
within a run (the test never assumes independent trials, only that the two
runs are exchangeable under no change). The p-values of all comparisons x
targets of one check are Holm-adjusted; *broken* means adjusted p < ``alpha``.

It needs cases with enough trials for a single case to reach ``case_alpha``
(default 0.02: 4 trials a side, where all pass -> all fail gives p = 1/70); with
fewer trials it never fires and says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from eval_pipelines.analysis.policy import RegressionPolicy
from eval_pipelines.analysis.stats import fisher_one_sided, holm, sign_test_p


class CaseChange(Protocol):
    """What this module reads of ``regression.CaseChange`` (no import: regression imports this)."""

    test_id: str
    target: str
    change: str
    baseline: Any
    current: Any
    p_value: float | None
    drop_p: float | None

    @property
    def pass_rate_delta(self) -> float | None: ...


@dataclass(frozen=True)
class BreakageVerdict:
    target: str
    cases_compared: int
    significant_drops: int  # cases whose own trials dropped with p <= case_alpha
    significant_rises: int  # ... rose with p <= case_alpha
    p_value: float  # exact one-sided sign test of drops vs rises
    adjusted_p: float  # Holm over the comparisons x targets of the check
    broken: bool
    labelled: list[str] = field(default_factory=list)  # cases labelled regressed (q <= case_fdr)
    dropped: list[str] = field(default_factory=list)  # cases with a significant drop, largest first
    wording: str = ""


def _rise_p(case: CaseChange) -> float:
    delta = case.pass_rate_delta or 0.0
    return case.p_value if delta > 0 and case.p_value is not None else 1.0


def breakage_verdicts(labelled: list[list[CaseChange]], policy: RegressionPolicy) -> list[list[BreakageVerdict]]:
    """Per comparison (in order), one verdict per target, Holm-adjusted over the whole check."""
    raw = []
    for index, cases in enumerate(labelled):
        for target in sorted({c.target for c in cases}):
            paired = [c for c in cases if c.target == target and c.drop_p is not None]
            if not paired:
                continue
            drops = sorted((c for c in paired if c.drop_p <= policy.case_alpha),
                           key=lambda c: (c.pass_rate_delta or 0.0, c.test_id))
            rises = sum(_rise_p(c) <= policy.case_alpha for c in paired)
            raw.append((index, target, paired, drops, rises, sign_test_p(len(drops), len(drops) + rises)))
    adjusted = holm([r[-1] for r in raw])
    out: list[list[BreakageVerdict]] = [[] for _ in labelled]
    for (index, target, paired, drops, rises, p), adj in zip(raw, adjusted):
        broken = adj < policy.alpha
        most = max(min(c.baseline.trials, c.current.trials) for c in paired)
        if not drops and not rises and fisher_one_sided(most, most, 0, most) > policy.case_alpha:
            wording = (f"not testable: with {most} trial{'s' if most > 1 else ''} a side no single case can drop "
                       f"with Fisher p <= {policy.case_alpha:g} (a complete flip gives "
                       f"{fisher_one_sided(most, most, 0, most):.3g})")
        else:
            wording = (f"{len(drops)} cases dropped significantly (Fisher p <= {policy.case_alpha:g}) vs "
                       f"{rises} that rose; sign test p = {p:.3g}, Holm-adjusted {adj:.3g} "
                       f"(alpha {policy.alpha:g}): " + ("broken beyond chance" if broken else "within chance"))
        out[index].append(BreakageVerdict(
            target=target, cases_compared=len(paired), significant_drops=len(drops), significant_rises=rises,
            p_value=p, adjusted_p=adj, broken=broken,
            labelled=[c.test_id for c in paired if c.change == "regressed"],
            dropped=[c.test_id for c in drops], wording=wording))
    return out

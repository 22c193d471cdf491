"""Power of the regression verdict: detection and false-alarm rates by simulation.

Generates synthetic suites whose cases have known true pass probabilities
(including flaky ones), samples a baseline and a current run with a number of
trials per case, and asks the production code path -
``eval_pipelines.analysis.regression.compare`` with the default ``RegressionPolicy``
(alpha 0.05, min_effect 0.05) - for its verdict. It reports how often a true
drop is flagged (detection) and how often no change is flagged (false alarm),
with Wilson 95% intervals.

    python -m benchmarks.regression_power               # full grid, prints tables
    python -m benchmarks.regression_power --write-docs  # ... and writes docs/regression-detection.md
    python -m benchmarks.regression_power --quick       # CI smoke run, a few seconds

Case mix of a simulated suite (drawn afresh for every run): 60% near-always-pass
cases (p uniform in [0.9, 1.0]), 25% near-always-fail (p in [0, 0.1]) and 15%
flaky (p in [0.3, 0.7]). A "drop" lowers the suite's true pass rate (the mean
of p over cases) by exactly the stated number of points:

* ``diffuse`` (the main grid): every case loses the same amount delta, clipped
  at 0 (cases that cannot fall further stop at 0); delta is found by bisection
  so that mean(min(p, delta)) equals the drop exactly.
* ``concentrated``: randomly chosen cases with p >= 0.5 break completely
  (p -> 0) until the drop is reached; the last one is lowered only partly.

"No change" samples both sides from the same probabilities.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from math import sqrt
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from eval_pipelines.analysis.metrics import TrialResult
from eval_pipelines.analysis.regression import RegressionPolicy, compare

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "regression-detection.md"

CASES = (50, 100, 200, 400)
TRIALS = (1, 3, 5)
DROPS = (0.05, 0.10, 0.20)
MIXTURE = ((0.60, 0.9, 1.0), (0.25, 0.0, 0.1), (0.15, 0.3, 0.7))  # (share, low p, high p)
GOAL_CASES, GOAL_TRIALS, GOAL_DROP = 200, 5, 0.10
GOAL_DETECTION, GOAL_FALSE_ALARM = 0.95, 0.05
PATTERNS = {"diffuse": 0, "concentrated": 1}


@dataclass(frozen=True)
class Scenario:
    cases: int
    trials: int
    drop: float = 0.0  # true drop in the suite pass rate of the dropped targets (0 = no change)
    pattern: str = "diffuse"
    targets: int = 1  # targets compared together (Holm across them)
    dropped: int = 1  # how many of the targets get the drop (the first ones)

    @property
    def label(self) -> str:
        change = "no change" if self.drop == 0 else f"-{self.drop * 100:.0f} pts {self.pattern}"
        extra = f", {self.targets} targets ({self.dropped if self.drop else 0} dropped)" if self.targets > 1 else ""
        return f"{self.cases} cases x {self.trials} trials, {change}{extra}"


@dataclass(frozen=True)
class TargetOutcome:
    dropped: bool  # this target had a true drop
    regressed: bool  # the verdict: Holm-adjusted p < alpha and drop >= min_effect
    significant: bool  # Holm-adjusted p < alpha alone
    raw_significant: bool  # unadjusted p < alpha
    estimate: float
    ci_low: float
    ci_high: float
    true_delta: float
    drivers: int  # cases named as drivers
    regressed_cases: int  # cases individually regressed (Fisher / single-trial flip)


@dataclass(frozen=True)
class CellResult:
    scenario: Scenario
    runs: int
    outcomes: tuple[tuple[TargetOutcome, ...], ...]  # one tuple of targets per run
    seconds: float

    def _rate(self, hits: int, n: int) -> tuple[float, float, float]:
        return (hits / n if n else float("nan"), *wilson(hits, n))

    def _dropped_targets(self) -> list[TargetOutcome]:
        return [t for run in self.outcomes for t in run if t.dropped]

    def detection(self) -> tuple[float, float, float]:
        """Share of dropped targets flagged regressed."""
        found = self._dropped_targets()
        return self._rate(sum(t.regressed for t in found), len(found))

    def false_alarm(self, key: str = "regressed") -> tuple[float, float, float]:
        """Share of runs where any unchanged target is flagged (family-wise)."""
        flagged = [any(getattr(t, key) for t in run if not t.dropped) for run in self.outcomes
                   if any(not t.dropped for t in run)]
        return self._rate(sum(flagged), len(flagged))

    def significance(self) -> tuple[float, float, float]:
        found = self._dropped_targets()
        return self._rate(sum(t.significant for t in found), len(found))

    def coverage(self) -> tuple[float, float, float]:
        """Share of targets whose 95% interval contains the true change of the expected pass rate."""
        every = [t for run in self.outcomes for t in run]
        return self._rate(sum(t.ci_low - 1e-12 <= t.true_delta <= t.ci_high + 1e-12 for t in every), len(every))

    def with_drivers(self, key: str = "drivers") -> tuple[float, float, float]:
        """Among regressed dropped targets, the share with at least one driving (``key``) case."""
        flagged = [t for t in self._dropped_targets() if t.regressed]
        return self._rate(sum(getattr(t, key) > 0 for t in flagged), len(flagged))

    def mean_estimate(self, dropped: bool = True) -> float:
        values = [t.estimate for run in self.outcomes for t in run if t.dropped == dropped]
        return sum(values) / len(values) if values else float("nan")


def wilson(hits: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score 95% interval for a binomial proportion."""
    if n == 0:
        return 0.0, 1.0
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


# ---- synthetic suites -------------------------------------------------------------------

def true_rates(cases: int, rng: np.random.Generator) -> np.ndarray:
    """True pass probability per case, drawn from the mixture."""
    shares = np.array([m[0] for m in MIXTURE])
    kind = rng.choice(len(MIXTURE), size=cases, p=shares / shares.sum())
    low = np.array([m[1] for m in MIXTURE])[kind]
    high = np.array([m[2] for m in MIXTURE])[kind]
    return low + (high - low) * rng.random(cases)


def lower_diffuse(p: np.ndarray, drop: float) -> np.ndarray:
    """Every case loses the same delta, clipped at 0, so that the mean falls by exactly ``drop``."""
    if drop <= 0:
        return p.copy()
    if p.mean() < drop - 1e-12:
        raise ValueError(f"cannot drop {drop:.3f} from a mean pass rate of {p.mean():.3f}")
    low, high = 0.0, 1.0
    for _ in range(100):  # mean(min(p, delta)) is increasing in delta
        mid = (low + high) / 2
        if np.minimum(p, mid).mean() < drop:
            low = mid
        else:
            high = mid
    return np.maximum(p - high, 0.0)


def lower_concentrated(p: np.ndarray, drop: float, rng: np.random.Generator) -> np.ndarray:
    """Random cases with p >= 0.5 break completely (p -> 0) until the mean falls by ``drop``."""
    out = p.copy()
    remaining = drop * len(p)
    for i in rng.permutation(np.flatnonzero(p >= 0.5)):
        if remaining <= 1e-12:
            break
        cut = min(out[i], remaining)
        out[i] -= cut
        remaining -= cut
    if remaining > 1e-9:
        raise ValueError(f"cannot drop {drop:.3f}: not enough passing cases")
    return out


def trial_results(p: np.ndarray, trials: int, target: str, rng: np.random.Generator) -> list[TrialResult]:
    """Independent trials of every case: graded, pass/fail, score 1/0."""
    passed = rng.random((len(p), trials)) < p[:, None]
    return [TrialResult(f"case-{i:04d}", target, j, "graded", "pass" if ok else "fail",
                        1.0 if ok else 0.0, None, None, None, None)
            for i, row in enumerate(passed.tolist()) for j, ok in enumerate(row)]


def _rng(seed: int, scenario: Scenario, run: int) -> np.random.Generator:
    """One generator per (seed, scenario, run): results do not depend on how runs are split."""
    key = [seed, scenario.cases, scenario.trials, round(scenario.drop * 10_000),
           PATTERNS[scenario.pattern], scenario.targets, scenario.dropped, run]
    return np.random.default_rng(key)


def run_once(scenario: Scenario, run: int, seed: int = 0,
             policy: RegressionPolicy = RegressionPolicy()) -> tuple[TargetOutcome, ...]:
    """Simulate one baseline/current pair and return the verdict for every target."""
    rng = _rng(seed, scenario, run)
    baseline: list[TrialResult] = []
    current: list[TrialResult] = []
    truth: dict[str, tuple[bool, float]] = {}
    for t in range(scenario.targets):
        target = f"target-{t}"
        p = true_rates(scenario.cases, rng)
        dropped = scenario.drop > 0 and t < scenario.dropped
        if not dropped:
            q = p
        elif scenario.pattern == "diffuse":
            q = lower_diffuse(p, scenario.drop)
        else:
            q = lower_concentrated(p, scenario.drop, rng)
        truth[target] = (dropped, float(q.mean() - p.mean()))
        baseline += trial_results(p, scenario.trials, target, rng)
        current += trial_results(q, scenario.trials, target, rng)
    result = compare(current, baseline, policy)
    regressed_cases = {v.target: 0 for v in result.targets}
    for case in result.cases:
        if case.change == "regressed" and case.target in regressed_cases:
            regressed_cases[case.target] += 1
    return tuple(
        TargetOutcome(dropped=truth[v.target][0], regressed=v.regressed,
                      significant=v.adjusted_p < policy.alpha, raw_significant=v.p_value < policy.alpha,
                      estimate=v.pass_rate_delta, ci_low=v.ci_low, ci_high=v.ci_high,
                      true_delta=truth[v.target][1], drivers=len(v.drivers),
                      regressed_cases=regressed_cases[v.target])
        for v in result.targets)


def _run_chunk(args: tuple[Scenario, int, int, int]) -> list[tuple[TargetOutcome, ...]]:
    scenario, start, stop, seed = args
    return [run_once(scenario, run, seed) for run in range(start, stop)]


def simulate(scenarios: Sequence[tuple[Scenario, int]], seed: int = 0, jobs: int = 1,
             progress: bool = False) -> list[CellResult]:
    """Run every (scenario, runs) cell; ``jobs`` > 1 spreads runs over processes."""
    chunks: list[tuple[Scenario, int, int, int]] = []
    for scenario, runs in scenarios:
        step = max(1, min(50, runs // max(1, jobs)))
        chunks += [(scenario, start, min(runs, start + step), seed) for start in range(0, runs, step)]
    started = {s: time.perf_counter() for s, _ in scenarios}
    done: dict[Scenario, list[tuple[int, list[tuple[TargetOutcome, ...]]]]] = {s: [] for s, _ in scenarios}
    finished: dict[Scenario, float] = {}
    if jobs <= 1:
        results: Iterable = map(_run_chunk, chunks)
        pool = None
    else:
        pool = ProcessPoolExecutor(max_workers=jobs)
        results = pool.map(_run_chunk, chunks)
    try:
        for chunk, outcome in zip(chunks, results):
            done[chunk[0]].append((chunk[1], outcome))
            finished[chunk[0]] = time.perf_counter()
            if progress:
                total = sum(len(o) for _, o in done[chunk[0]])
                print(f"\r{chunk[0].label}: {total} runs", end="", file=sys.stderr, flush=True)
    finally:
        if pool is not None:
            pool.shutdown()
    if progress:
        print(file=sys.stderr)
    cells = []
    for scenario, runs in scenarios:
        ordered = tuple(o for _, chunk in sorted(done[scenario], key=lambda x: x[0]) for o in chunk)
        cells.append(CellResult(scenario, runs, ordered, finished.get(scenario, 0.0) - started[scenario]))
    return cells


# ---- the plan ---------------------------------------------------------------------------

def plan(runs: int, goal_runs: int, quick: bool = False) -> list[tuple[Scenario, int]]:
    """The cells to simulate: the grid, the goal cell with more runs, and the extras."""
    if quick:
        return [(Scenario(GOAL_CASES, GOAL_TRIALS, 0.0), runs), (Scenario(GOAL_CASES, GOAL_TRIALS, GOAL_DROP), runs),
                (Scenario(50, 1, 0.0), runs), (Scenario(50, 1, GOAL_DROP), runs)]
    cells: list[tuple[Scenario, int]] = []
    for cases in CASES:
        for trials in TRIALS:
            goal = (cases, trials) == (GOAL_CASES, GOAL_TRIALS)
            for drop in (0.0, *DROPS):
                cells.append((Scenario(cases, trials, drop), goal_runs if goal else runs))
    cells += [(Scenario(cases, trials, GOAL_DROP, "concentrated"), runs)
              for cases, trials in ((50, 1), (200, 1), (200, 5))]
    cells += [(Scenario(50, 1, 0.0, targets=3), goal_runs), (Scenario(200, 5, 0.0, targets=3), runs),
              (Scenario(200, 5, GOAL_DROP, targets=3, dropped=1), runs)]
    return cells


# ---- reporting --------------------------------------------------------------------------

def _pct(rate: tuple[float, float, float]) -> str:
    value, low, high = rate
    return f"{value:.1%} [{low:.1%}, {high:.1%}]"


def _short(rate: tuple[float, float, float]) -> str:
    return f"{rate[0]:.1%}"


def _find(cells: list[CellResult], **match) -> CellResult | None:
    for cell in cells:
        if all(getattr(cell.scenario, k) == v for k, v in match.items()):
            return cell
    return None


def goal_status(cells: list[CellResult]) -> dict[str, object]:
    """The two goals of the issue, on the 200 cases x 5 trials cell."""
    drop = _find(cells, cases=GOAL_CASES, trials=GOAL_TRIALS, drop=GOAL_DROP, pattern="diffuse", targets=1)
    none = _find(cells, cases=GOAL_CASES, trials=GOAL_TRIALS, drop=0.0, targets=1)
    out: dict[str, object] = {}
    if drop:
        out["detection"] = drop.detection()
        out["detection_runs"] = drop.runs
        out["detection_met"] = drop.detection()[0] >= GOAL_DETECTION
    if none:
        out["false_alarm"] = none.false_alarm()
        out["false_alarm_runs"] = none.runs
        out["false_alarm_met"] = none.false_alarm()[0] <= GOAL_FALSE_ALARM
    return out


def tables(cells: list[CellResult]) -> str:
    """Markdown tables of the grid (rows: cases; columns: trials per case)."""
    lines: list[str] = []
    grid = [c for c in cells if c.scenario.targets == 1 and c.scenario.pattern == "diffuse"]
    trials = sorted({c.scenario.trials for c in grid})
    cases = sorted({c.scenario.cases for c in grid})
    header = "| cases | " + " | ".join(f"{t} trial{'s' if t > 1 else ''}" for t in trials) + " |"
    rule = "|---:|" + "---:|" * len(trials)

    def block(title: str, pick) -> None:
        rows = [[pick(n, t) for t in trials] for n in cases]
        if all(v is None for row in rows for v in row):
            return
        lines.extend([f"**{title}**", "", header, rule])
        for n, row in zip(cases, rows):
            lines.append(f"| {n} | " + " | ".join(v if v is not None else "-" for v in row) + " |")
        lines.append("")

    def rate(n: int, t: int, drop: float, what: str) -> str | None:
        cell = _find(grid, cases=n, trials=t, drop=drop)
        if cell is None:
            return None
        value = getattr(cell, what)()
        text = _pct(value) if (n, t) == (GOAL_CASES, GOAL_TRIALS) else _short(value)
        return text

    block("No change - false-alarm rate (verdict: regressed)", lambda n, t: rate(n, t, 0.0, "false_alarm"))
    block("No change - Holm-adjusted p < 0.05 alone (calibration of the test, ignoring min_effect)",
          lambda n, t: (lambda c: _short(c.false_alarm("significant")) if c else None)(
              _find(grid, cases=n, trials=t, drop=0.0)))
    for drop in DROPS:
        block(f"True drop of {drop * 100:.0f} points - detection rate",
              lambda n, t, d=drop: rate(n, t, d, "detection"))
    return "\n".join(lines)


def extras(cells: list[CellResult]) -> str:
    lines = ["| scenario | runs | detection | false alarm (verdict, any unchanged target) | "
             "Holm-adjusted p < 0.05 (any unchanged target) | unadjusted p < 0.05 (any unchanged target) "
             "| mean estimate |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for cell in cells:
        s = cell.scenario
        if s.targets == 1 and s.pattern == "diffuse":
            continue
        detection = _pct(cell.detection()) if s.drop else "-"
        unchanged = any(not t.dropped for run in cell.outcomes for t in run)
        alarm = _pct(cell.false_alarm()) if unchanged else "-"
        holm_ = _pct(cell.false_alarm("significant")) if unchanged else "-"
        raw = _pct(cell.false_alarm("raw_significant")) if unchanged else "-"
        estimate = cell.mean_estimate(dropped=bool(s.drop))
        lines.append(f"| {s.label} | {cell.runs} | {detection} | {alarm} | {holm_} | {raw} "
                     f"| {estimate * 100:+.1f} pts |")
    return "\n".join(lines)


def diagnostics(cells: list[CellResult]) -> str:
    """Interval coverage and drivers for the goal cells."""
    lines = ["| cell | runs | 95% interval contains the true change | mean estimate | "
             "regressed verdicts naming driving cases | ... with an individually regressed case |",
             "|---|---:|---:|---:|---:|---:|"]
    for cell in cells:
        s = cell.scenario
        if (s.cases, s.trials, s.targets) != (GOAL_CASES, GOAL_TRIALS, 1) and not (
                s.targets == 1 and s.trials == 1 and s.cases == 200 and s.pattern == "diffuse"
                and s.drop in (0.0, GOAL_DROP)):
            continue
        drivers = _pct(cell.with_drivers()) if s.drop else "-"
        single = _pct(cell.with_drivers("regressed_cases")) if s.drop else "-"
        estimate = cell.mean_estimate(dropped=bool(s.drop))
        lines.append(f"| {s.label} | {cell.runs} | {_pct(cell.coverage())} | {estimate * 100:+.1f} pts "
                     f"| {drivers} | {single} |")
    return "\n".join(lines)


def enough_for(cells: list[CellResult], drop: float, goal: float = GOAL_DETECTION) -> str:
    """The smallest case count per trial count that detects ``drop`` at least ``goal`` of the time."""
    parts = []
    grid = [c for c in cells if c.scenario.targets == 1 and c.scenario.pattern == "diffuse" and c.scenario.drop == drop]
    for trials in sorted({c.scenario.trials for c in grid}):
        row = sorted((c for c in grid if c.scenario.trials == trials), key=lambda c: c.scenario.cases)
        first = next((c for c in row if c.detection()[0] >= goal), None)
        parts.append(f"{trials} trial{'s' if trials > 1 else ''}: "
                     + (f"{first.scenario.cases} cases ({first.detection()[0]:.1%})" if first
                        else f"not reached with {row[-1].scenario.cases} cases ({row[-1].detection()[0]:.1%})"))
    return "; ".join(parts)


def summary(cells: list[CellResult]) -> str:
    goals = goal_status(cells)
    lines = []
    if "detection" in goals:
        lines.append(f"detection of a {GOAL_DROP * 100:.0f}-point drop, {GOAL_CASES} cases x {GOAL_TRIALS} trials: "
                     f"{_pct(goals['detection'])} over {goals['detection_runs']} runs "
                     f"(goal >= {GOAL_DETECTION:.0%}: {'met' if goals['detection_met'] else 'MISSED'})")
    if "false_alarm" in goals:
        lines.append(f"false alarms with no change, {GOAL_CASES} cases x {GOAL_TRIALS} trials: "
                     f"{_pct(goals['false_alarm'])} over {goals['false_alarm_runs']} runs "
                     f"(goal <= {GOAL_FALSE_ALARM:.0%}: {'met' if goals['false_alarm_met'] else 'MISSED'})")
    return "\n".join(lines)


# ---- the document -----------------------------------------------------------------------

def _machine() -> str:
    from benchmarks.machine import cpu_model

    return (f"{platform.system()} {platform.release()}, {cpu_model()}, {os.cpu_count()} CPUs, "
            f"Python {platform.python_version()}, NumPy {np.__version__}")


def render_docs(cells: list[CellResult], *, command: str, seconds: float, jobs: int, seed: int) -> str:
    goals = goal_status(cells)
    detection, alarm = goals.get("detection"), goals.get("false_alarm")
    both = goals.get("detection_met") and goals.get("false_alarm_met")
    grid_runs = sorted({c.runs for c in cells if c.scenario.targets == 1 and c.scenario.pattern == "diffuse"
                        and (c.scenario.cases, c.scenario.trials) != (GOAL_CASES, GOAL_TRIALS)})
    if both and detection[1] >= GOAL_DETECTION and alarm[2] <= GOAL_FALSE_ALARM:
        verdict = ("Both goals are met with margin: even the unfavourable end of each Wilson interval "
                   "is inside the goal.")
    elif both:
        verdict = ("Both goals are met by the point estimates, but an interval reaches past the goal: "
                   "more runs would be needed to be sure.")
    else:
        missed = []
        if not goals.get("detection_met"):
            missed.append(f"detection is {(GOAL_DETECTION - detection[0]) * 100:.1f} points below its goal")
        if not goals.get("false_alarm_met"):
            missed.append(f"false alarms are {(alarm[0] - GOAL_FALSE_ALARM) * 100:.1f} points above their goal")
        verdict = "The goals are NOT met: " + "; ".join(missed) + " (see \"How it scales\")."
    return f"""# Regression detection: method and measured power

<!-- Generated by `python -m benchmarks.regression_power --write-docs`; edit the script, not this file. -->

How `eval_pipelines.analysis.regression.compare` decides that a skill version (or a
night) regressed against its baseline, and how often it is right, measured by
simulation with [`benchmarks/regression_power.py`](../benchmarks/regression_power.py).
The `regression_report` asset stores its output in the `regressions` table and
the `no_significant_regression` asset check fails on it.

## Goals and result

| goal (200 cases x 5 trials, default policy) | measured | Wilson 95% interval | runs | met |
|---|---:|---:|---:|:---:|
| a true 10-point drop is detected >= 95% of the time | {detection[0]:.1%} | [{detection[1]:.1%}, {detection[2]:.1%}] | {goals.get('detection_runs')} | {'yes' if goals.get('detection_met') else 'NO'} |
| no change gives <= 5% false alarms | {alarm[0]:.1%} | [{alarm[1]:.1%}, {alarm[2]:.1%}] | {goals.get('false_alarm_runs')} | {'yes' if goals.get('false_alarm_met') else 'NO'} |

{verdict} The configured minimum effect (5 points), not the test, is what
limits the detection of small drops (see "How it scales").

## Method

**Per case** (a test case of one target, over its trials):

* one trial on each side: *regressed* when it went pass -> fail, *improved*
  when fail -> pass;
* several trials: Fisher's exact test, one-sided, on the 2x2 table
  (passes/fails before vs after). *Regressed* when p < `case_alpha` (0.05)
  and the pass rate fell by at least `min_effect`; *improved* likewise;
* otherwise *flaky* when either side's trials disagree (2 of 5 -> 2 of 5 is
  flaky, not a regression), *regressed*/*improved* when every trial agreed on
  each side but the outcome flipped (all pass -> all fail with 2 or 3 trials,
  where Fisher cannot reach 0.05), else *unchanged*;
* cases only in the current run are *new*, only in the baseline *removed*;
  they are listed but not part of the suite-level test.

**Per target** (the suite-level test, over the cases present on both sides):

* the estimate is the mean over cases of the per-case pass-rate difference
  (current minus baseline) - the change of the suite pass rate with cases
  weighted equally. A flaky case with the same count on both sides
  contributes exactly 0; a flaky case contributes noise, not bias;
* the p-value is a one-sided **paired sign-flip permutation test** of "the
  mean difference is below 0": under no change each case's difference is
  symmetric about 0, so flipping signs gives its null distribution. Pass-rate
  differences are multiples of 1/trials, so the null distribution of their
  sum is computed exactly by convolution (no Monte Carlo error, no floor on
  the p-value). With one trial per case the differences are -1/0/+1 and the
  test *is* McNemar's exact test on the discordant pairs (b = pass -> fail,
  c = fail -> pass; the unit tests check the equality);
* McNemar's exact test is also reported on its own (`mcnemar_b`,
  `mcnemar_c`, `mcnemar_p` in the row's detail) over the cases with a
  *stable* baseline (all trials agreed), a case counting as passing when at
  least half its trials pass: flaky baselines are excluded from it;
* the 95% interval of the change is a paired percentile bootstrap over cases
  (2,000 resamples, seeded: the same data gives the same interval);
* the mean-score change is reported alongside (`score_delta`).

**Several targets** in one comparison: the p-values are adjusted with
**Holm's step-down method**, which controls the family-wise error rate (the
chance of any false alarm among the targets) at `alpha` without assuming
independence; the previous-version and previous-night comparisons are
separate reports.

**Verdict**: a target regressed when its Holm-adjusted p < `alpha` (0.05)
**and** the estimated drop is at least `min_effect` (5 points). The check's
metadata gives, per comparison and target, the estimate, the interval, the raw
and adjusted p-values and the cases that drove it: the individually regressed
cases first, then - when the target regressed - the other cases whose pass
rate fell, largest fall first (a thin drop spread over many cases can be
significant while no single case is).

**Flaky cases** are handled by using per-case proportions rather than pooled
trials: their expected contribution with no change is 0 and their variance is
part of the permutation distribution, so they cost power but cannot cause
false alarms; they are never called *regressed* at the case level without a
significant Fisher test, are excluded from the McNemar counts, and are
listed as *flaky* in the report (and per night in the `flaky_cases` view).
They are not dropped from the suite-level estimate: a case that went from
5/5 to 2/5 is flaky on the current side, and dropping it would hide exactly
the regression to detect.

## Simulation

Each run draws a fresh suite: every case gets a true pass probability from a
mixture - 60% near-always-pass (uniform in [0.9, 1.0]), 25% near-always-fail
([0, 0.1]) and 15% flaky ([0.3, 0.7]); the suite's true pass rate is about
66%. The baseline and the current run are sampled independently, `trials`
Bernoulli trials per case, turned into `TrialResult`s (status `graded`,
verdict pass/fail, score 1/0) and passed to `compare` with the default
`RegressionPolicy()` - the code path of the pipeline.

* **no change**: the current run uses the same probabilities;
* **drop of d points** (*diffuse*, the main grid): every case loses the same
  amount delta, clipped at 0, with delta found by bisection so that the mean
  probability falls by exactly d (near-always-fail cases can only fall to 0,
  so delta is larger than d: about 0.12 for 10 points);
* **concentrated drop** (extra rows): random cases with p >= 0.5 break
  completely (p -> 0) until the mean falls by exactly d - about 22 of 200
  cases for 10 points.

A *detection* is a run where the dropped target's verdict is *regressed*; a
*false alarm* is a run where an unchanged target is flagged (with several
targets: any of them). Intervals are Wilson 95% intervals for the rate.

## Figures

Runs per cell: {goals.get('detection_runs')} for the 200 x 5 cell (shown with its interval),
{', '.join(map(str, grid_runs))} for the others; seed {seed}.

{tables(cells)}
### Other scenarios

{extras(cells)}

With three unchanged targets and no correction, the chance that at least one
shows p < 0.05 would be up to 1 - 0.95^3 = 14% (the unadjusted column);
Holm keeps the family-wise rate at or below 5% (the Holm column), and the
verdict also requires the 5-point minimum effect (the false-alarm column).

### Interval and drivers

{diagnostics(cells)}

The interval is a percentile bootstrap over cases: it resamples the cases'
observed differences, so its width includes both the trial noise and the
spread of the true per-case changes. Coverage is measured against the true
change of the suite's expected pass rate in that run (0 with no change); it
is close to the nominal 95%, a little under with one trial per case (few
distinct values to resample).

With a diffuse drop few cases are individually significant (a 5/5 -> 3/5
case is not), which is why a regressed target lists the cases whose pass
rate fell after the individually regressed ones: the last two columns show
how often a regressed verdict names some case at all, and how often one
that is significant on its own.

## How it scales

The test statistic is the mean of per-case differences; its standard error is
about sqrt(2 * v / (cases * trials)), where v ~ 0.075 is the mean Bernoulli
variance p(1 - p) of this case mix (nearly half of it from the 15% flaky
cases). Detection therefore depends mostly on the number of trial pairs,
**cases x trials** (50 x 5, 100 x 3 and 200 x 1 are close). At 200 x 5 the standard error is
about 1.2 points, so a 10-point drop is about 8 standard errors away and
always detected; with one trial it is about 2.8 points (a 10-point drop is
3.6 standard errors away: detected ~92% of the time), and at 50 cases x 1
trial (5.5 points) a 10-point drop is mostly missed.

Smallest suite in the grid that detects a 10-point drop at least 95% of the
time - {enough_for(cells, GOAL_DROP)}. For a 20-point drop - {enough_for(cells, 0.20)}.

Two effects cap the rates:

* **`min_effect` = 5 points**: a true drop of exactly 5 points gives an
  estimate below 5 points about half the time, so its detection rate tends to
  ~50% however many cases and trials - by design, since 5 points is the
  smallest drop the policy calls a regression. The same rule makes false
  alarms vanish once the standard error is well below 5 points (a no-change
  estimate of -5 points is then very unlikely), which is why the verdict's
  false-alarm rate is far below the test's own 5% for large suites.
* **The test's level**: ignoring `min_effect`, the sign-flip test is exact, so
  with no change "p < 0.05" happens at most 5% of the time - less with few
  discordant cases, because the null distribution is discrete; the second
  table shows it (its values above 5% are within the simulation's noise:
  +-2 points at 500 runs).

Flaky cases lower power (they contribute nearly half of v) but do not raise
the false-alarm rate; a suite with more flaky cases needs more cases x trials
for the same power. A drop concentrated in a few cases (table above) is
detected about as often as a diffuse one of the same size, a little less
often in small single-trial suites.

## Limits

* The per-case sign symmetry that makes the test exact needs the same number
  of trials per case on both sides. With unequal trials (say 3 now, 5 before)
  the test is approximate.
* Flakiness across nights (a case that alternates between nights) is shown in
  the `flaky_cases` view but does not change the weight of a case in the
  verdict; the previous-night comparison treats such a case like any other.
* Holm corrects across the targets of one comparison; categories are not
  tested separately (one test per target over all its cases).

## Reproduce

```bash
{command}
.venv/bin/python -m benchmarks.regression_power --quick   # CI smoke run, a few seconds
```

Machine: {_machine()}; {jobs} worker process{'es' if jobs > 1 else ''}; wall time
{seconds:.0f} s for {sum(c.runs for c in cells)} simulated comparisons.
Generated {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}.
"""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.regression_power", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few small cells, for CI smoke use (< 20 s)")
    parser.add_argument("--runs", type=int, default=None,
                        help="runs per cell (default 500; 100 with --quick)")
    parser.add_argument("--goal-runs", type=int, default=None,
                        help="runs for the 200 cases x 5 trials cells (default: max(2000, --runs))")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    parser.add_argument("--write-docs", action="store_true", help=f"write {DOCS.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    if args.quick and args.write_docs:
        parser.error("--write-docs needs the full simulation (drop --quick)")
    runs = args.runs or (100 if args.quick else 500)
    goal_runs = args.goal_runs or (runs if args.quick else max(2000, runs))
    cells_plan = plan(runs, goal_runs, quick=args.quick)
    started = time.perf_counter()
    cells = simulate(cells_plan, seed=args.seed, jobs=args.jobs, progress=not args.quick and sys.stderr.isatty())
    seconds = time.perf_counter() - started
    print(tables(cells))
    if not args.quick:
        print("### Other scenarios\n\n" + extras(cells) + "\n\n" + diagnostics(cells) + "\n")
    print(summary(cells) + (" [quick: too few runs to settle the goals]" if args.quick else ""))
    print(f"{sum(c.runs for c in cells)} comparisons in {seconds:.1f} s ({args.jobs} jobs)")
    if args.write_docs:
        command = ".venv/bin/python -m benchmarks.regression_power --write-docs" + (
            f" --runs {args.runs}" if args.runs else "") + (
            f" --goal-runs {args.goal_runs}" if args.goal_runs else "") + (
            f" --seed {args.seed}" if args.seed else "")
        DOCS.write_text(render_docs(cells, command=command, seconds=seconds, jobs=args.jobs, seed=args.seed))
        print(f"wrote {DOCS.relative_to(ROOT)}")
    goals = goal_status(cells)
    return 0 if goals.get("detection_met", True) and goals.get("false_alarm_met", True) else 1


if __name__ == "__main__":
    sys.exit(main())

"""Power and error rates of the regression verdicts, by simulation.

Simulated suites with realistic case mixes go through the pipeline's own code
path - ``eval_pipelines.analysis.regression.compare_all`` on ``TrialResult``s,
the way the ``regression_report`` stage calls it - and the verdicts are
scored against the truth:

* **case mixes**: per-case pass probabilities p from Beta(0.5, 0.5) (U-shaped:
  most cases nearly always pass or nearly always fail, some in between) or
  Beta(2, 2) (hump-shaped: most cases are flaky);
* **correlated trials**: the trials of one case in one run share that run's
  pass probability, drawn from Beta(p * phi, (1 - p) * phi) with
  phi = 1 / rho - 1 (intra-run correlation rho = 0.1 by default: runs of the
  same case differ more than independent trials would say);
* **changes**: *none*; a *diffuse drop* of d points (every case loses the same
  amount, clipped at 0, found by bisection so the mean falls by exactly d);
  a *concentrated* drop (random cases with p >= 0.5 break completely until the
  mean falls by d); *cancel-out* breakage (20 of 200 of the cases that pass
  most reliably - the 10% with the highest p - break completely (p -> 0) while
  all the others improve by the same amount, clipped at 1, so that the mean
  pass rate does not move).

    python -m benchmarks.regression_power --write-docs   # the full grid; writes docs/regression-detection.md
    python -m benchmarks.regression_power --quick        # smoke run for CI (a few cells, few runs)
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from math import sqrt
from pathlib import Path
from typing import Sequence

import numpy as np

from eval_pipelines.analysis.metrics import TrialResult
from eval_pipelines.analysis.regression import RegressionPolicy, compare_all

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "regression-detection.md"

MIXES = {"beta-0.5": (0.5, 0.5), "beta-2": (2.0, 2.0)}
RHO = 0.1
CASES = (50, 100, 200, 500, 1000)
TRIALS = (1, 3, 5, 10)
DROPS = (0.0, 0.05, 0.10, 0.20)
PATTERNS = ("diffuse", "concentrated", "cancel")
CANCEL_BROKEN_SHARE = 0.10  # cancel-out: 20 of 200 cases break


@dataclass(frozen=True)
class Scenario:
    mix: str
    cases: int
    trials: int
    drop: float = 0.0
    pattern: str = "diffuse"
    baselines: int = 1  # 2 = the previous version and the previous night, corrected together
    rho: float = RHO
    rule: str = "plausible"  # the policy's effect_rule
    labels: str = "auto"  # the policy's case_labels

    @property
    def label(self) -> str:
        change = ("cancel-out breakage" if self.pattern == "cancel" else
                  "no change" if self.drop == 0 else f"-{self.drop * 100:g} pts {self.pattern}")
        extra = f", {self.baselines} baselines" if self.baselines > 1 else ""
        return f"{self.mix} {self.cases}x{self.trials}, {change}{extra}, rho {self.rho:g}, {self.rule}, {self.labels}"


@dataclass(frozen=True)
class Outcome:
    """One simulated run, scored (the first baseline's comparison unless stated)."""

    regressed: bool  # the no_significant_regression check fails (any comparison)
    significant: bool
    large_enough: bool
    verdict: str
    broken: bool  # the no_hidden_breakage check fails (any comparison)
    estimate: float
    ci_low: float
    ci_high: float
    true_delta: float
    labels: int  # cases labelled regressed
    false_labels: int  # ... whose true pass probability did not fall
    broken_cases: int  # cases that truly broke (cancel-out)
    broken_labelled: int  # ... labelled regressed


# ---- synthetic suites ---------------------------------------------------------------------

def true_rates(mix: str, cases: int, rng: np.random.Generator) -> np.ndarray:
    a, b = MIXES[mix]
    return rng.beta(a, b, size=cases)


def lower_diffuse(p: np.ndarray, drop: float) -> np.ndarray:
    """Every case loses the same amount, clipped at 0, so that the mean falls by exactly ``drop``."""
    if drop <= 0:
        return p.copy()
    low, high = 0.0, 1.0
    for _ in range(60):  # mean(min(p, x)) increases with x
        mid = (low + high) / 2
        low, high = (mid, high) if np.minimum(p, mid).mean() < drop else (low, mid)
    return np.maximum(p - high, 0.0)


def lower_concentrated(p: np.ndarray, drop: float, rng: np.random.Generator) -> np.ndarray:
    """Random cases with p >= 0.5 break completely until the mean falls by ``drop``."""
    out = p.copy()
    remaining = drop * len(p)
    for i in rng.permutation(np.flatnonzero(p >= 0.5)):
        if remaining <= 1e-12:
            break
        cut = min(out[i], remaining)
        out[i] -= cut
        remaining -= cut
    return out


def cancel_out(p: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The most reliable 10% of cases break (p -> 0); the rest improve evenly (clipped at 1)
    so that the mean pass rate is unchanged. Returns (new p, broken mask)."""
    broken_count = max(1, round(CANCEL_BROKEN_SHARE * len(p)))
    broken = np.zeros(len(p), dtype=bool)
    broken[np.argsort(-p, kind="stable")[:broken_count]] = True
    lost = p[broken].sum()
    rest = p[~broken]
    low, high = 0.0, 1.0
    for _ in range(60):  # total gain sum(min(1 - p, x)) increases with x
        mid = (low + high) / 2
        low, high = (mid, high) if np.minimum(1 - rest, mid).sum() < lost else (low, mid)
    out = p.copy()
    out[broken] = 0.0
    out[~broken] = np.minimum(rest + high, 1.0)
    return out, broken


def pass_counts(p: np.ndarray, trials: int, rho: float, rng: np.random.Generator) -> np.ndarray:
    """Passes per case in one run: beta-binomial (this run's p shared by the case's trials)."""
    if rho <= 0:
        return rng.binomial(trials, p)
    phi = 1.0 / rho - 1.0
    inner = np.clip(p, 1e-9, 1 - 1e-9)
    run_p = rng.beta(inner * phi, (1 - inner) * phi)
    run_p = np.where(p <= 0, 0.0, np.where(p >= 1, 1.0, run_p))
    return rng.binomial(trials, run_p)


@lru_cache(maxsize=8)
def _trial_objects(cases: int, trials: int, target: str) -> tuple[list[list[TrialResult]], list[list[TrialResult]]]:
    """Every case's passing and failing trials, built once per suite shape (TrialResults are immutable)."""
    make = lambda i, j, ok: TrialResult(f"case-{i:04d}", target, j, "graded", "pass" if ok else "fail",  # noqa: E731
                                        1.0 if ok else 0.0, None, None, None, None)
    return ([[make(i, j, True) for j in range(trials)] for i in range(cases)],
            [[make(i, j, False) for j in range(trials)] for i in range(cases)])


def trial_results(counts: np.ndarray, trials: int, target: str = "model") -> list[TrialResult]:
    """A run as the store decodes it: graded trials, the first ``count`` of a case passing."""
    passing, failing = _trial_objects(len(counts), trials, target)
    return [r for i, c in enumerate(counts.tolist()) for r in (*passing[i][:c], *failing[i][c:])]


def _rng(seed: int, scenario: Scenario, run: int) -> np.random.Generator:
    key = [seed, sorted(MIXES).index(scenario.mix), scenario.cases, scenario.trials, round(scenario.drop * 1e4),
           PATTERNS.index(scenario.pattern), scenario.baselines, round(scenario.rho * 1e4), run]
    # The effect rule and the labelling method do not change the sample: the same runs, judged differently.
    return np.random.default_rng(key)


def run_once(scenario: Scenario, run: int, seed: int = 0) -> Outcome:
    rng = _rng(seed, scenario, run)
    p = true_rates(scenario.mix, scenario.cases, rng)
    broken = np.zeros(len(p), dtype=bool)
    if scenario.pattern == "cancel":
        q, broken = cancel_out(p, rng)
    elif scenario.pattern == "concentrated":
        q = lower_concentrated(p, scenario.drop, rng)
    else:
        q = lower_diffuse(p, scenario.drop)
    baselines = [trial_results(pass_counts(p, scenario.trials, scenario.rho, rng), scenario.trials)
                 for _ in range(scenario.baselines)]
    current = trial_results(pass_counts(q, scenario.trials, scenario.rho, rng), scenario.trials)
    policy = RegressionPolicy(effect_rule=scenario.rule, case_labels=scenario.labels)  # type: ignore[arg-type]
    results = compare_all(current, baselines, policy)
    first = results[0]
    (target,) = first.targets
    fell = q < p - 1e-12
    labelled = np.zeros(len(p), dtype=bool)
    for result in results:
        for case in result.cases:
            if case.change == "regressed":
                labelled[int(case.test_id.split("-")[1])] = True
    return Outcome(
        regressed=any(r.regressed for r in results), significant=target.significant,
        large_enough=target.large_enough, verdict=target.verdict, broken=any(r.broken for r in results),
        estimate=target.pass_rate_delta, ci_low=target.ci_low, ci_high=target.ci_high,
        true_delta=float(q.mean() - p.mean()), labels=int(labelled.sum()),
        false_labels=int((labelled & ~fell).sum()), broken_cases=int(broken.sum()),
        broken_labelled=int((labelled & broken).sum()))


# ---- cells --------------------------------------------------------------------------------

def wilson(hits: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Cell:
    scenario: Scenario
    outcomes: tuple[Outcome, ...]

    @property
    def runs(self) -> int:
        return len(self.outcomes)

    def rate(self, key: str) -> tuple[float, float, float]:
        """Share of runs where ``key`` holds (an Outcome field or a derived flag), with Wilson 95%."""
        flags = [self.flag(o, key) for o in self.outcomes]
        return (sum(flags) / len(flags) if flags else float("nan"), *wilson(sum(flags), len(flags)))

    @staticmethod
    def flag(o: Outcome, key: str) -> bool:
        if key == "any_false_label":
            return o.false_labels > 0
        if key == "either":
            return o.regressed or o.broken
        if key == "covered":
            return o.ci_low - 1e-12 <= o.true_delta <= o.ci_high + 1e-12
        return bool(getattr(o, key))

    def broken_labelled_share(self) -> float:
        total = sum(o.broken_cases for o in self.outcomes)
        return sum(o.broken_labelled for o in self.outcomes) / total if total else float("nan")

    def false_discovery_proportion(self) -> float:
        """Mean over runs of false labels / labels (0 for a run without labels): the realised FDR."""
        return sum(o.false_labels / o.labels for o in self.outcomes if o.labels) / self.runs


def _chunk(args: tuple[Scenario, int, int, int]) -> list[Outcome]:
    scenario, start, stop, seed = args
    return [run_once(scenario, run, seed) for run in range(start, stop)]


def simulate(plan: Sequence[tuple[Scenario, int]], seed: int = 0, jobs: int = 1, progress: bool = False) -> list[Cell]:
    chunks = [(s, start, min(runs, start + 25), seed) for s, runs in plan for start in range(0, runs, 25)]
    done: dict[Scenario, list[tuple[int, list[Outcome]]]] = {s: [] for s, _ in plan}
    pool = ProcessPoolExecutor(max_workers=jobs) if jobs > 1 else None
    try:
        results = pool.map(_chunk, chunks) if pool else map(_chunk, chunks)
        for i, (chunk, outcome) in enumerate(zip(chunks, results)):
            done[chunk[0]].append((chunk[1], outcome))
            if progress:
                print(f"\r{i + 1}/{len(chunks)} chunks", end="", file=sys.stderr, flush=True)
    finally:
        if pool:
            pool.shutdown()
    if progress:
        print(file=sys.stderr)
    return [Cell(s, tuple(o for _, part in sorted(done[s], key=lambda x: x[0]) for o in part)) for s, _ in plan]


GOAL_CELLS = ({"cases": 200, "trials": 5}, {"cases": 200, "trials": 5, "drop": 0.10},
              {"cases": 1000, "trials": 5, "drop": 0.05}, {"cases": 200, "trials": 5, "pattern": "cancel"},
              {"cases": 200, "trials": 5, "baselines": 2})


def plan(runs: int, goal_runs: int, quick: bool = False) -> list[tuple[Scenario, int]]:
    """The grid per mix (cases x trials x drop) and the extras; the goal cells get ``goal_runs``."""
    if quick:
        return [(Scenario(mix, 200, 5, drop, pattern), runs) for mix in MIXES
                for drop, pattern in ((0.0, "diffuse"), (0.10, "diffuse"), (0.0, "cancel"))]
    cells: list[Scenario] = []
    for mix in MIXES:
        cells += [Scenario(mix, cases, trials, drop) for cases in CASES for trials in TRIALS for drop in DROPS]
        cells += [Scenario(mix, 200, 5, pattern="cancel"), Scenario(mix, 200, 10, pattern="cancel"),
                  Scenario(mix, 200, 5, 0.10, "concentrated"), Scenario(mix, 200, 5, baselines=2),
                  Scenario(mix, 200, 5, rho=0.0), Scenario(mix, 200, 5, rho=0.3),
                  Scenario(mix, 200, 5, pattern="cancel", rho=0.0), Scenario(mix, 200, 5, pattern="cancel", rho=0.3),
                  Scenario(mix, 1000, 5, 0.05, rule="estimate"), Scenario(mix, 1000, 5, 0.05, rule="certain"),
                  Scenario(mix, 1000, 5, 0.02), Scenario(mix, 1000, 5, 0.02, rule="estimate"),
                  Scenario(mix, 200, 10, labels="bh"), Scenario(mix, 1000, 10, labels="bh"),
                  Scenario(mix, 200, 10, pattern="cancel", labels="bh"), Scenario(mix, 200, 5, pattern="cancel",
                                                                                  labels="mirror")]
        # The discrete BH (case_labels dbh) beside the default's BH, on the same simulated runs.
        cells += [Scenario(mix, 200, trials, pattern=pattern, rho=rho, labels="dbh")
                  for trials, pattern, rho in ((5, "diffuse", RHO), (5, "cancel", RHO), (5, "diffuse", 0.0),
                                               (5, "cancel", 0.0), (5, "diffuse", 0.3), (5, "cancel", 0.3),
                                               (3, "diffuse", RHO), (10, "diffuse", RHO))]
    defaults = {"drop": 0.0, "pattern": "diffuse", "baselines": 1, "rho": RHO, "rule": "plausible", "labels": "auto"}
    goals = [defaults | g for g in GOAL_CELLS]
    # The dbh cells at 200 x 5 (rho 0.1 and 0) answer the goal cells' questions for the other method (the
    # default's choice rests on them).
    dbh = [defaults | {"cases": 200, "trials": 5, "labels": "dbh"} | p
           for p in ({}, {"pattern": "cancel"}, {"rho": 0.0}, {"pattern": "cancel", "rho": 0.0})]
    return [(s, goal_runs if any(all(getattr(s, k) == v for k, v in g.items()) for g in goals + dbh) else runs)
            for s in cells]


def find(cells: Sequence[Cell], **match) -> Cell | None:
    defaults = {"drop": 0.0, "pattern": "diffuse", "baselines": 1, "rho": RHO, "rule": "plausible", "labels": "auto"}
    wanted = defaults | match
    for cell in cells:
        if all(getattr(cell.scenario, k) == v for k, v in wanted.items()):
            return cell
    return None


# ---- goals of issue 20 --------------------------------------------------------------------

GOALS = (
    # (text, cell match, measure, comparison, bound)
    ("200 x 5, no change: the check fails in <= 5% of runs", dict(cases=200, trials=5), "regressed", "<=", 0.05),
    ("200 x 5, 10-point drop: detected in >= 95% of runs", dict(cases=200, trials=5, drop=0.10), "regressed",
     ">=", 0.95),
    ("1,000 x 5, 5-point drop: detected in >= 80% of runs (default policy)", dict(cases=1000, trials=5, drop=0.05),
     "regressed", ">=", 0.80),
    ("200 x 5, no change: <= 10% of runs carry any false case label", dict(cases=200, trials=5),
     "any_false_label", "<=", 0.10),
    ("200 x 5, cancel-out breakage: flagged (either check) in >= 80% of runs", dict(cases=200, trials=5,
                                                                                   pattern="cancel"),
     "either", ">=", 0.80),
    ("200 x 5, cancel-out breakage: >= 70% of broken cases labelled at FDR <= 10%",
     dict(cases=200, trials=5, pattern="cancel"), "broken_labelled_share", ">=", 0.70),
)


def goal_rows(cells: Sequence[Cell]) -> list[tuple[str, str, float, tuple[float, float] | None, int, bool]]:
    """(goal, mix, measured, Wilson interval or None, runs, met) for every goal and mix present."""
    rows = []
    for text, match, measure, op, bound in GOALS:
        for mix in MIXES:
            cell = find(cells, mix=mix, **match)
            if cell is None:
                continue
            if measure == "broken_labelled_share":
                value, interval = cell.broken_labelled_share(), None
            else:
                value, low, high = cell.rate(measure)
                interval = (low, high)
            met = value <= bound if op == "<=" else value >= bound
            rows.append((text, mix, value, interval, cell.runs, met))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.regression_power", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few cells with few runs (CI smoke run)")
    parser.add_argument("--runs", type=int, default=None, help="runs per grid cell (default 150; 20 with --quick)")
    parser.add_argument("--goal-runs", type=int, default=None, help="runs per goal cell (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--write-docs", action="store_true", help=f"write {DOCS.relative_to(ROOT)}")
    parser.add_argument("--save", type=Path, help="also pickle the simulated cells to this file")
    parser.add_argument("--load", type=Path, help="render from cells pickled by --save instead of simulating")
    args = parser.parse_args(argv)
    if args.quick and args.write_docs:
        parser.error("--write-docs needs the full simulation (drop --quick)")
    from benchmarks.regression_docs import render_docs, summary_lines

    runs = args.runs or (20 if args.quick else 150)
    goal_runs = args.goal_runs or (runs if args.quick else max(1000, runs))
    started = time.perf_counter()
    if args.load:
        cells, seconds = pickle.loads(args.load.read_bytes())
    else:
        cells = simulate(plan(runs, goal_runs, args.quick), args.seed, args.jobs,
                         progress=not args.quick and sys.stderr.isatty())
        seconds = time.perf_counter() - started
    if args.save:
        args.save.write_bytes(pickle.dumps((cells, seconds)))
    print("\n".join(summary_lines(cells)) + (" [quick: too few runs to settle the goals]" if args.quick else ""))
    print(f"{sum(c.runs for c in cells)} simulated comparisons in {seconds:.1f} s ({args.jobs} jobs)")
    if args.write_docs:
        command = "python -m benchmarks.regression_power --write-docs" + (
            f" --runs {args.runs}" if args.runs else "") + (
            f" --goal-runs {args.goal_runs}" if args.goal_runs else "") + (
            f" --seed {args.seed}" if args.seed else "")
        DOCS.write_text(render_docs(cells, command=command, seconds=seconds, jobs=args.jobs, seed=args.seed))
        print(f"wrote {DOCS.relative_to(ROOT)}")
    return 0 if args.quick or all(row[-1] for row in goal_rows(cells)) else 1


if __name__ == "__main__":
    sys.exit(main())

"""docs/regression-detection.md from the cells of ``benchmarks.regression_power`` (the method in
words, the goals, the power and false-alarm tables, the "how many cases and trials" table)."""

from __future__ import annotations

import platform
from datetime import datetime, timezone
from typing import Sequence

from benchmarks.regression_power import CASES, MIXES, RHO, TRIALS, Cell, find, goal_rows

MIX_NAMES = {"beta-0.5": "Beta(0.5, 0.5)", "beta-2": "Beta(2, 2)"}


def _pct(value: float) -> str:
    return "n/a" if value != value else f"{value:.1%}"


def _pct0(value: float) -> str:
    return "n/a" if value != value else f"{value * 100:.0f}%"


def summary_lines(cells: Sequence[Cell]) -> list[str]:
    return [f"{'met' if met else 'NOT MET'}: {text} [{MIX_NAMES[mix]}]: {_pct(value)}"
            + (f" [{interval[0]:.1%}, {interval[1]:.1%}]" if interval else "") + f" ({runs} runs)"
            for text, mix, value, interval, runs, met in goal_rows(cells)]


def goals_table(cells: Sequence[Cell]) -> str:
    lines = ["| goal | case mix | measured | Wilson 95% interval | runs | met |", "|---|---|---:|---:|---:|:---:|"]
    for text, mix, value, interval, runs, met in goal_rows(cells):
        shown = f"[{interval[0]:.1%}, {interval[1]:.1%}]" if interval else "(share of all broken cases)"
        lines.append(f"| {text} | {MIX_NAMES[mix]} | {_pct(value)} | {shown} | {runs} | {'yes' if met else 'NO'} |")
    return "\n".join(lines)


def grid_table(cells: Sequence[Cell], mix: str, measure: str, drops: Sequence[float]) -> str:
    """Rows: cases; columns: trials; each cell the ``measure`` rate for each drop, separated by ' / '."""
    header = "| cases | " + " | ".join(f"{t} trial{'s' if t > 1 else ''}" for t in TRIALS) + " |"
    lines = [header, "|---:|" + "---:|" * len(TRIALS)]
    for cases in CASES:
        row = []
        for trials in TRIALS:
            values = [find(cells, mix=mix, cases=cases, trials=trials, drop=d) for d in drops]
            row.append(" / ".join(_pct0(c.rate(measure)[0]) if c else "-" for c in values))
        lines.append(f"| {cases} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def needed_table(cells: Sequence[Cell]) -> str:
    """Smallest number of cases in the grid that reaches the power, per trials, the worse of the mixes."""
    lines = ["| true drop | detected in at least | " + " | ".join(f"{t} trial{'s' if t > 1 else ''}" for t in TRIALS)
             + " |", "|---:|---:|" + "---:|" * len(TRIALS)]
    for drop in (0.05, 0.10, 0.20):
        for power in (0.80, 0.95):
            row = []
            for trials in TRIALS:
                needed = []
                for mix in MIXES:
                    enough = [n for n in CASES if (c := find(cells, mix=mix, cases=n, trials=trials, drop=drop))
                              and c.rate("regressed")[0] >= power]
                    needed.append(min(enough) if enough else None)
                row.append(f"> {max(CASES)}" if None in needed else str(max(needed)))  # type: ignore[type-var]
            lines.append(f"| {drop * 100:.0f} pts | {power:.0%} of runs | " + " | ".join(row) + " |")
    return "\n".join(lines)


def extras_table(cells: Sequence[Cell]) -> str:
    lines = ["| scenario | runs | mean check fails | breakage check fails | either | runs with a false label "
             "| broken cases labelled | false-discovery proportion |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    picks = [
        ("no change, 200 x 5, two baselines (version + night, corrected together)", dict(cases=200, trials=5,
                                                                                           baselines=2)),
        ("no change, 200 x 5, independent trials (rho 0)", dict(cases=200, trials=5, rho=0.0)),
        ("no change, 200 x 5, strongly correlated trials (rho 0.3)", dict(cases=200, trials=5, rho=0.3)),
        ("cancel-out breakage, 200 x 5", dict(cases=200, trials=5, pattern="cancel")),
        ("cancel-out breakage, 200 x 5, rho 0", dict(cases=200, trials=5, pattern="cancel", rho=0.0)),
        ("cancel-out breakage, 200 x 5, rho 0.3", dict(cases=200, trials=5, pattern="cancel", rho=0.3)),
        ("cancel-out breakage, 200 x 10 (case_labels auto = mirror)", dict(cases=200, trials=10, pattern="cancel")),
        ("cancel-out breakage, 200 x 10, case_labels bh", dict(cases=200, trials=10, pattern="cancel", labels="bh")),
        ("cancel-out breakage, 200 x 5, case_labels mirror", dict(cases=200, trials=5, pattern="cancel",
                                                                  labels="mirror")),
        ("no change, 200 x 10, case_labels bh (auto uses mirror here)", dict(cases=200, trials=10, labels="bh")),
        ("no change, 1000 x 10, case_labels bh", dict(cases=1000, trials=10, labels="bh")),
        ("-10 pts concentrated (cases with p >= 0.5 break), 200 x 5", dict(cases=200, trials=5, drop=0.10,
                                                                           pattern="concentrated")),
        ("-5 pts, 1000 x 5, effect_rule plausible (default)", dict(cases=1000, trials=5, drop=0.05)),
        ("-5 pts, 1000 x 5, effect_rule estimate", dict(cases=1000, trials=5, drop=0.05, rule="estimate")),
        ("-5 pts, 1000 x 5, effect_rule certain", dict(cases=1000, trials=5, drop=0.05, rule="certain")),
        ("-2 pts, 1000 x 5, effect_rule plausible", dict(cases=1000, trials=5, drop=0.02)),
        ("-2 pts, 1000 x 5, effect_rule estimate", dict(cases=1000, trials=5, drop=0.02, rule="estimate")),
    ]
    for mix in MIXES:
        for text, match in picks:
            cell = find(cells, mix=mix, **match)
            if cell is None:
                continue
            lines.append(f"| {MIX_NAMES[mix]}: {text} | {cell.runs} | {_pct(cell.rate('regressed')[0])} | "
                         f"{_pct(cell.rate('broken')[0])} | {_pct(cell.rate('either')[0])} | "
                         f"{_pct(cell.rate('any_false_label')[0])} | {_pct(cell.broken_labelled_share())} | "
                         f"{_pct(cell.false_discovery_proportion())} |")
    return "\n".join(lines)


def labels_table(cells: Sequence[Cell]) -> str:
    """The default's labels (BH up to 5 trials; plain BH at 10) beside the discrete BH, on the same runs."""
    lines = ["| case mix | scenario | runs | BH: runs with a false label | BH: broken cases labelled | BH: FDP "
             "| DBH: runs with a false label | DBH: broken cases labelled | DBH: FDP |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    picks = [("no change, 200 x 5", dict(cases=200, trials=5)),
             ("cancel-out breakage, 200 x 5", dict(cases=200, trials=5, pattern="cancel")),
             ("no change, 200 x 5, independent trials (rho 0)", dict(cases=200, trials=5, rho=0.0)),
             ("cancel-out breakage, 200 x 5, rho 0", dict(cases=200, trials=5, pattern="cancel", rho=0.0)),
             ("no change, 200 x 5, rho 0.3", dict(cases=200, trials=5, rho=0.3)),
             ("cancel-out breakage, 200 x 5, rho 0.3", dict(cases=200, trials=5, pattern="cancel", rho=0.3)),
             ("no change, 200 x 3", dict(cases=200, trials=3)),
             ("no change, 200 x 10 (BH column: case_labels bh; auto uses the mirror)",
              dict(cases=200, trials=10, labels="bh"))]
    for mix in MIXES:
        for text, match in picks:
            bh = find(cells, mix=mix, **match)
            dbh = find(cells, mix=mix, **(match | {"labels": "dbh"}))
            if bh is None or dbh is None:
                continue
            runs = f"{bh.runs}" if bh.runs == dbh.runs else f"{bh.runs} / {dbh.runs}"
            lines.append(f"| {MIX_NAMES[mix]} | {text} | {runs} | " + " | ".join(
                f"{_pct(c.rate('any_false_label')[0])} | {_pct(c.broken_labelled_share())} | "
                f"{_pct(c.false_discovery_proportion())}" for c in (bh, dbh)) + " |")
    return "\n".join(lines)


def dbh_goal_lines(cells: Sequence[Cell]) -> str:
    """The two label goals measured with case_labels dbh (not the default), for the Goals section."""
    out = []
    for mix in MIXES:
        none = find(cells, mix=mix, cases=200, trials=5, labels="dbh")
        cancel = find(cells, mix=mix, cases=200, trials=5, pattern="cancel", labels="dbh")
        if none is None or cancel is None:
            continue
        rate, low, high = none.rate("any_false_label")
        out.append(f"* {MIX_NAMES[mix]}: no change, runs with a false label {_pct(rate)} [{low:.1%}, {high:.1%}] "
                   f"({none.runs} runs; goal <= 10%: {'met' if rate <= 0.10 else 'NOT met'}); cancel-out, broken "
                   f"cases labelled {_pct(cancel.broken_labelled_share())} ({cancel.runs} runs; goal >= 70%: "
                   f"{'met' if cancel.broken_labelled_share() >= 0.70 else 'NOT met'})")
    return "\n".join(out)


def significance_split(cells: Sequence[Cell]) -> str:
    """At 1000 x 5: how often the drop is significant, large enough, both."""
    lines = ["| case mix | true drop | significant | large enough (plausible) | regressed | verdicts |",
             "|---|---:|---:|---:|---:|---|"]
    for mix in MIXES:
        for drop in (0.0, 0.05, 0.10):
            cell = find(cells, mix=mix, cases=1000, trials=5, drop=drop)
            if cell is None:
                continue
            counts: dict[str, int] = {}
            for o in cell.outcomes:
                counts[o.verdict] = counts.get(o.verdict, 0) + 1
            shown = ", ".join(f"{k} {v / cell.runs:.0%}" for k, v in sorted(counts.items(), key=lambda x: -x[1]))
            lines.append(f"| {MIX_NAMES[mix]} | {drop * 100:.0f} pts | {_pct(cell.rate('significant')[0])} | "
                         f"{_pct(cell.rate('large_enough')[0])} | {_pct(cell.rate('regressed')[0])} | {shown} |")
    return "\n".join(lines)


def coverage_line(cells: Sequence[Cell]) -> str:
    parts = []
    for mix in MIXES:
        grid = [c for c in cells if c.scenario.mix == mix and c.scenario.pattern == "diffuse"
                and c.scenario.rho == RHO and c.scenario.rule == "plausible" and c.scenario.baselines == 1
                and c.scenario.labels == "auto"]
        hits = sum(Cell.flag(o, "covered") for c in grid for o in c.outcomes)
        total = sum(c.runs for c in grid)
        if not total:
            continue
        worst = min(grid, key=lambda c: c.rate("covered")[0])
        parts.append(f"{MIX_NAMES[mix]}: {hits / total:.1%} over the grid, lowest {worst.rate('covered')[0]:.0%} "
                     f"({worst.scenario.cases} x {worst.scenario.trials}, "
                     f"{'no change' if not worst.scenario.drop else f'-{worst.scenario.drop * 100:g} pts'})")
    return "; ".join(parts)


def render_docs(cells: Sequence[Cell], *, command: str, seconds: float, jobs: int, seed: int) -> str:
    rows = goal_rows(cells)
    missed = [f"{text} [{MIX_NAMES[mix]}]" for text, mix, _, _, _, met in rows if not met]
    verdict = ("Every goal is met for both case mixes." if not missed else
               "Not met: " + "; ".join(missed) + " (see \"Limits\").")
    grid_runs = sorted({c.runs for c in cells})
    from benchmarks.regression_text import METHOD, LIMITS, SETUP

    tables = []
    for mix in MIXES:
        tables += [f"### {MIX_NAMES[mix]}", "",
                   "The `no_significant_regression` check fails, in % of runs: no change / true drop of 5 / 10 / "
                   "20 points (the first number is the false-alarm rate).", "",
                   grid_table(cells, mix, "regressed", (0.0, 0.05, 0.10, 0.20)), "",
                   "With no change, runs where some case is labelled regressed (a false label):", "",
                   grid_table(cells, mix, "any_false_label", (0.0,)), "",
                   "With no change, runs where the `no_hidden_breakage` check fails (its false alarms):", "",
                   grid_table(cells, mix, "broken", (0.0,)), ""]
    return f"""# Regression detection: method and measured power

<!-- Generated by `python -m benchmarks.regression_power --write-docs`; edit the scripts
(benchmarks/regression_power.py, regression_docs.py, regression_text.py), not this file. -->

How the `regression_report` stage decides that a skill version (or a night) regressed
against its baselines, and how often it is right, measured by simulation with
[`benchmarks/regression_power.py`](../benchmarks/regression_power.py) through the pipeline's
own `eval_pipelines.analysis.regression.compare_all`, called as the stage calls it.

## Goals and result

{goals_table(cells)}

{verdict}

The same two label goals with `case_labels: dbh` (the discrete BH; not the default - see
"Per-case labels" and "Limits"), at rho = 0.1:

{dbh_goal_lines(cells)}

{METHOD}

{SETUP}

## Figures

Runs per cell: {', '.join(map(str, grid_runs))} (the goal cells have the most); seed {seed};
intra-run trial correlation rho = {RHO:g} unless stated. Intervals are Wilson 95% intervals.

{chr(10).join(tables)}
### Significant and large enough, at 1,000 cases x 5 trials

{significance_split(cells)}

### Other scenarios

"Broken cases labelled" is the share of truly broken cases labelled regressed (q <= 10%);
the false-discovery proportion is false labels / labels, averaged over runs (0 for a run
without labels) - the realised FDR.

{extras_table(cells)}

### Per-case labels: BH and the discrete BH

The same simulated runs labelled by the default (`auto`: Benjamini-Hochberg up to 5 trials a
side) and by `case_labels: dbh`. "Runs with a false label" with no change is the chance of any
false label (the FDR's worst case, all cases unchanged); FDP is the realised false-discovery
proportion averaged over runs. "Runs" reads BH / DBH where they differ (the first runs are the
same simulated runs).

{labels_table(cells)}

### Interval coverage

The 95% interval contains the true change of the suite's expected pass rate in
{coverage_line(cells)}.

## How many cases and trials do I need?

The smallest suite in the grid ({', '.join(map(str, CASES))} cases) whose `no_significant_regression`
check catches a true diffuse drop this often under the default policy, the worse of the two
case mixes (rho = {RHO:g}). Read it before writing a suite: a 5-point drop needs hundreds of
cases even at 5 trials; one trial per case only suits large drops.

{needed_table(cells)}

The standard error of the estimate is about sqrt(2 v (1 + (t - 1) rho) / (cases x t)), where
t is the trials per case and v the mean Bernoulli variance p(1 - p) of the case mix (0.125 for
Beta(0.5, 0.5), 0.2 for Beta(2, 2)): more cases help more than more trials once trials are
correlated, because repeated trials of one case in one run partly repeat the same information.

{LIMITS}

## Reproduce

```bash
{command}
python -m benchmarks.regression_power --quick   # CI smoke run: 6 cells x 20 runs
python -m benchmarks.regression_oracle          # the calibrated-null probe quoted in "Limits"
```

Machine: {platform.machine()}, Python {platform.python_version()}; {jobs} worker process{'es' if jobs > 1 else ''};
{sum(c.runs for c in cells)} simulated comparisons in {seconds:.0f} s (a shared, busy machine).
Generated {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}.
"""

"""False "helps" rate and power of the skill-uplift verdict, by simulation.

Simulated with/without-skill runs go through ``eval_pipelines.analysis.uplift.skill_uplift``,
the function the stage calls: each case has 5 expectations; in a configuration each is met
with probability p (the per-case value of a trial is the share met), 3 trials per case.

    python -m benchmarks.uplift_power          # prints the Markdown table (docs/skill-evaluation.md)
"""

from __future__ import annotations

import random

from eval_pipelines.analysis.uplift import skill_uplift

RUNS = 200


def _runs(rng: random.Random, cases: int, trials: int, share: float, expectations: int = 5) -> dict[str, list[float]]:
    return {f"case-{i}": [sum(rng.random() < share for _ in range(expectations)) / expectations
                          for _ in range(trials)] for i in range(cases)}


def cell(cases: int, trials: int, with_p: float, without_p: float, seed: int = 2026) -> dict[str, int]:
    rng = random.Random(seed)
    counts = {"helps": 0, "no_measurable_effect": 0, "hurts": 0}
    for _ in range(RUNS):
        up = skill_uplift(_runs(rng, cases, trials, with_p), _runs(rng, cases, trials, without_p))
        counts[up.verdict] += 1
    return counts


def main() -> None:
    print("| cases × trials | expectations met with / without | helps | no measurable effect | hurts |")
    print("|---|---|---|---|---|")
    for cases, trials, w, o in [(20, 3, 0.5, 0.5), (20, 3, 0.2, 0.2), (10, 1, 0.5, 0.5), (20, 3, 0.8, 0.2),
                                (20, 3, 0.6, 0.5), (20, 3, 0.7, 0.5), (10, 3, 0.6, 0.4), (20, 3, 0.4, 0.6)]:
        c = cell(cases, trials, w, o)
        print(f"| {cases} × {trials} | {w:.0%} / {o:.0%} | {c['helps']} of {RUNS} | "
              f"{c['no_measurable_effect']} of {RUNS} | {c['hurts']} of {RUNS} |")


if __name__ == "__main__":
    main()

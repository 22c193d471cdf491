"""Short Markdown summaries of a run (the Dagster UI's asset pages, the CLI)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

import pandas as pd

if TYPE_CHECKING:
    from eval_pipelines.analysis.regression import Comparison
    from eval_pipelines.store.partition import Partition


def metrics_markdown(overall: dict[str, float], results: pd.DataFrame) -> str:
    """The metrics table plus the failing cases, as shown in the asset's UI page."""
    keys = ["pass_rate", "expectation_pass_rate", "mean_score", "case_pass_rate", "cost_usd", "latency_p50_ms",
            "latency_p95_ms"]
    keys += sorted(k for k in overall if k.startswith(("pass_at_", "pass_hat_")))
    keys += ["trials", "passed", "borderline", "failed", "errors", "not_evaluated", "pending_human"]
    lines = ["| metric | value |", "|---|---|"]
    lines += [f"| {k} | {overall[k]:.4g} |" for k in keys if k in overall]
    failing = results[(results["verdict"] != "pass") & results["status"].isin(["graded", "error"])] \
        if not results.empty else results
    if len(failing):
        lines += ["", f"**Failures ({len(failing)})**", ""]
        lines += [f"- `{r['test_id']}` [{r['target']}] {r['status']}: {r['reason']}"
                  for r in failing.head(20).to_dict("records")]
    return "\n".join(lines)


def regression_summary(comparisons: Iterable[tuple[str, "Partition", "Comparison"]]) -> dict[str, Any]:
    """Per comparison: the baseline, whether it regressed or broke, per-target verdicts,
    the breakage signal and the labelled cases (with q-values)."""
    summary: dict[str, Any] = {}
    for comparison, baseline, result in comparisons:
        summary[comparison] = {
            "baseline": f"{baseline.skill_version} ({baseline.eval_date})",
            "regressed": result.regressed,
            "broken": result.broken,
            "targets": [t.__dict__ for t in result.targets],
            "breakage": [b.__dict__ for b in result.breakage],
            "flips": {change: [f"{c.test_id} [{c.target}]" + (f" q={c.q_value:.2g}" if change in (
                "regressed", "improved") and c.q_value is not None else "")
                               for c in result.cases if c.change == change]
                      for change in ("regressed", "improved", "changed", "flaky", "new", "removed")},
        }
    return summary


def regression_markdown(summary: dict) -> str:
    lines = []
    for comparison, info in summary.items():
        lines += [f"### {comparison.replace('_', ' ')}: against {info['baseline']}", "",
                  "| target | cases | pass rate before | after | change | 95% interval | p (Holm) | significant "
                  "| large enough | verdict |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for t in info["targets"]:
            lines.append(
                f"| {t['target']} | {t['cases_compared']} | {t['baseline_pass_rate']:.1%} | "
                f"{t['current_pass_rate']:.1%} | {t['pass_rate_delta']:+.1%} | "
                f"[{t['ci_low']:+.1%}, {t['ci_high']:+.1%}] | {t['adjusted_p']:.3g} | "
                f"{'yes' if t['significant'] else 'no'} | {'yes' if t['large_enough'] else 'no'} | "
                f"{t['verdict'].upper() if t['regressed'] else t['verdict'].replace('_', ' ')} |")
        lines.append("")
        lines += [f"- {t['target']}: {t['wording']}" for t in info["targets"]]
        lines += [f"- breakage [{b['target']}]: {b['wording']}" for b in info.get("breakage", [])]
        for change, cases in info["flips"].items():
            if cases:
                label = {"regressed": "regressed (q <= case_fdr)", "improved": "improved (q <= case_fdr)",
                         "changed": "changed (not significant)"}.get(change, change)
                lines.append(f"- {label}: {', '.join(cases[:20])}" + (" ..." if len(cases) > 20 else ""))
        lines.append("")
    return "\n".join(lines)

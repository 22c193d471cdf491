"""The reports' configurations section: each configuration's run summary (skill-creator's
``run_summary``: mean ± stddev, min-max of each run's pass rate, time and tokens) and the skill's
uplift, with minus without, with its interval, p-value and verdict (the ``skill_uplift`` view).

The rest of every report (cases, metrics, gates, comparisons) is the skill as shipped, ``with_skill``.
Empty for a run in one configuration.
"""

from __future__ import annotations

from typing import Any

from eval_pipelines.reports.records import ReportData

STATS = (("pass_rate", "pass rate", "{:.2f}"), ("time_seconds", "time (s)", "{:.1f}"), ("tokens", "tokens", "{:.0f}"))


def configuration_rows(data: ReportData) -> list[dict[str, Any]]:
    """One row per configuration: {configuration, pass_rate: {mean, stddev, min, max}, ..., expectation_pass_rate}."""
    rows = []
    for configuration, metrics in data.configurations.items():
        row: dict[str, Any] = {"configuration": configuration,
                               "expectation_pass_rate": metrics.get("expectation_pass_rate"),
                               "case_pass_rate": metrics.get("pass_rate")}
        for name, _, _ in STATS:
            row[name] = {s: metrics.get(f"run_{name}_{s}") for s in ("mean", "stddev", "min", "max")}
        rows.append(row)
    return rows


def _stat(value: dict[str, Any], fmt: str) -> str:
    if value.get("mean") is None:
        return "n/a"
    return (f"{fmt.format(value['mean'])} ± {fmt.format(value['stddev'])} "
            f"({fmt.format(value['min'])}-{fmt.format(value['max'])})")


def uplift_sentence(row: dict[str, Any]) -> str:
    return (f"{row['verdict']}: {row['delta'] * 100:+.1f} pts [{row['ci_low'] * 100:+.1f}, {row['ci_high'] * 100:+.1f}] "
            f"over {row['cases_compared']} cases, with {row['with_skill']:.0%} vs without {row['without_skill']:.0%}, "
            f"p = {row['p_value']:.3g}")


def markdown_lines(data: ReportData) -> list[str]:
    if not data.configurations and not data.uplift:
        return []
    lines = ["", "### Configurations", "",
             "| Configuration | " + " | ".join(label for _, label, _ in STATS) + " |",
             "|---" * (len(STATS) + 1) + "|"]
    for row in configuration_rows(data):
        lines.append(f"| {row['configuration']} | " + " | ".join(_stat(row[n], f) for n, _, f in STATS) + " |")
    lines += ["", "Each run's value (mean ± sample stddev, min-max over runs); pass rate = expectations met."]
    for row in data.uplift:
        who = "all targets" if row["target"] == "*" else f"target {row['target']}"
        lines.append(f"- Skill uplift ({who}): **{uplift_sentence(row)}**")
    return lines


def json_block(data: ReportData) -> dict[str, Any] | None:
    if not data.configurations and not data.uplift:
        return None
    return {"run_summary": configuration_rows(data),
            "uplift": [{k: row[k] for k in ("target", "cases_compared", "with_skill", "without_skill", "delta",
                                             "ci_low", "ci_high", "p_rise", "p_drop", "p_value", "verdict",
                                             "wording")} for row in data.uplift]}


def html_section(data: ReportData) -> str:
    from eval_pipelines.reports.html.format import e

    if not data.configurations and not data.uplift:
        return ""
    head = "<tr><th>Configuration</th>" + "".join(f"<th>{e(label)}</th>" for _, label, _ in STATS) + "</tr>"
    body = "".join("<tr><td>" + e(row["configuration"]) + "</td>"
                   + "".join(f"<td>{e(_stat(row[n], f))}</td>" for n, _, f in STATS) + "</tr>"
                   for row in configuration_rows(data))
    uplift = "".join(
        f'<p><span class="badge {"pass" if row["verdict"] == "helps" else "fail" if row["verdict"] == "hurts" else ""}">'
        f'{e(row["verdict"])}</span> skill uplift ({e("all targets" if row["target"] == "*" else row["target"])}): '
        f"{e(uplift_sentence(row))}</p>" for row in data.uplift)
    return (f'<section id="configurations"><h2>Configurations</h2><table class="small"><thead>{head}</thead>'
            f"<tbody>{body}</tbody></table>{uplift}</section>")

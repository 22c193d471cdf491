"""The Markdown report: seed 003's phase-completion layout ("Eval Results in Phase Report").

    ## Phase Completion Report
    ### Eval Results
    | Metric | Value | Threshold | Status |
    #### <Category> Evals (passed/counted passed)
    - [x] id: name
    - [ ] id: name (FAILED)
      - Expected: ...
      - Actual: ...
    ### Recommendations
    1. ...

``render_markdown_summary`` is the short form (header, metric table, counts,
changes, recommendations) for the Dagster UI.
"""

from __future__ import annotations

import re

from eval_pipelines.reports.configurations import markdown_lines as configuration_lines
from eval_pipelines.reports.comparison import labelled_regressed, verdict_flags, verdict_notes
from eval_pipelines.reports.data import CaseResult, ReportData
from eval_pipelines.reports.blind import blind_markdown
from eval_pipelines.reports.triggers import trigger_markdown
from eval_pipelines.reports.json_report import (
    actual_text,
    case_label,
    expected_text,
    failure_reason,
    format_value,
    include_details,
    metric_table,
    recommendations,
    short,
    summary,
    timestamp,
)


def cell(text: object) -> str:
    """Text safe inside a table cell or a list item: one line, pipes and markup escaped."""
    value = short(text if isinstance(text, str) else ("" if text is None else str(text)), 1000)
    for char in ("\\", "|", "`", "*", "_", "[", "]", "<", ">"):
        value = value.replace(char, "\\" + char)
    return value


def _escaped_keeping_edges(text: str) -> str:
    """``cell(text)`` with the spaces at its ends kept: they separate it from the code spans around it."""
    lead = " " if text[:1].isspace() else ""
    trail = " " if text[-1:].isspace() and text.strip() else ""
    return lead + cell(text) + trail


def inline(text: str) -> str:
    """Markdown-escape ``text`` except inside its `code spans` (recommendations use them)."""
    parts = re.split(r"(`[^`]*`)", short(text, 1000))
    return "".join(p if p.startswith("`") and p.endswith("`") and len(p) > 1 else _escaped_keeping_edges(p)
                   for p in parts)


def code(text: object, limit: int = 200) -> str:
    """Inline code that survives backticks in the text."""
    value = short(text, limit) if not isinstance(text, str) or text.strip() else repr(text)
    fence = "``" if "`" in value else "`"
    pad = " " if value.startswith("`") or value.endswith("`") or fence == "``" else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def _status_word(case: CaseResult) -> str:
    return {"fail": "FAILED", "borderline": "BORDERLINE", "error": "ERROR",
            "not_evaluated": "NOT EVALUATED", "pending_human": "PENDING HUMAN REVIEW",
            "not_run": "NOT RUN"}.get(case.outcome, "")


def _header(data: ReportData) -> list[str]:
    run = data.run
    env = run.environment
    targets = ", ".join(
        f"{t['name']}" + (f" ({t['type']}{', ' + t['model'] if t.get('model') else ''})" if t.get("type") else "")
        for t in env.get("targets", []))
    duration = "n/a" if run.duration_seconds is None else f"{run.duration_seconds:.1f} s"
    lines = [
        f"# Eval report: {cell(run.skill)} {cell(run.version)}",
        "",
        "## Phase Completion Report",
        "",
        f"- Suite: {code(run.suite)} ({run.suite_format or 'unknown format'}), "
        f"skill version {code(run.skill_version)}, evaluation date {run.eval_date}",
        f"- Run: {code(run.run_id or 'unknown')}, started {timestamp(run) or 'n/a'}, duration {duration}",
        f"- Environment: {cell(targets) or 'no targets'}; Python {env.get('python')}, "
        f"DuckDB {env.get('duckdb')}, eval-pipelines {env.get('eval_pipelines')}",
    ]
    if data.baseline is not None:
        lines.append(f"- Compared with: {code(data.baseline.skill_version)} "
                     f"(evaluation date {data.baseline.eval_date})")
    lines += _warnings(data)
    return lines


def _warnings(data: ReportData) -> list[str]:
    """The suite's load warnings ("accepted, not used: ..."): fields that shaped nothing."""
    if not data.run.warnings:
        return []
    return ["", "### Suite warnings", ""] + [f"- {cell(w)}" for w in data.run.warnings]


def _metric_table(data: ReportData) -> list[str]:
    rows = metric_table(data)
    compared = data.baseline is not None
    head = "| Metric | Value | Threshold | Status |"
    rule = "|--------|-------|-----------|--------|"
    if compared:
        head += f" {cell(data.baseline.version)} |"
        rule += "------|"
    lines = [head, rule]
    for row in rows:
        threshold = "—" if row["threshold"] is None else f"{row['threshold']:g}"
        line = (f"| {row['label']} | {format_value(row['metric'], row['value'])} | {threshold} | "
                f"{row['status'] or '—'} |")
        if compared:
            line += f" {format_value(row['metric'], row['baseline'])} |"
        lines.append(line)
    return lines


def _counts_line(data: ReportData) -> str:
    s = summary(data)
    rate = "n/a" if s["pass_rate"] is None else f"{s['pass_rate']:.0%}"
    parts = [f"**{s['passed']}/{s['passed'] + s['failed']} passed**", f"{s['failed']} failed",
             f"{s['skipped']} skipped"]
    if s["errors"]:
        parts.append(f"{s['errors']} errors")
    return ", ".join(parts) + f" (pass rate {rate}; skipped = not evaluated or waiting for human review)"


def _checklist(data: ReportData) -> list[str]:
    lines: list[str] = []
    by_category: dict[str, list[CaseResult]] = {}
    for case in data.cases:
        by_category.setdefault(case.category, []).append(case)
    for category, cases in sorted(by_category.items()):
        counted = [c for c in cases if c.counted]
        passed = sum(c.passed for c in counted)
        skipped = len(cases) - len(counted)
        extra = f", {skipped} skipped" if skipped else ""
        title = category.replace("_", " ").replace("-", " ")
        lines += ["", f"#### {cell(title[:1].upper() + title[1:])} Evals ({passed}/{len(counted)} passed{extra})"]
        for case in cases:
            name = f": {cell(case.name)}" if case.name and case.name != case.test_id else ""
            mark = "x" if case.passed else " "
            notes = [w for w in (_status_word(case),) if w]
            if case.change in ("now_failing", "now_passing") and case.baseline is not None:
                notes.append(f"{case.change.replace('_', ' ')}: {case.baseline.verdict or case.baseline.status} in "
                             f"{data.baseline.version if data.baseline else case.baseline.version}")
            note = f" ({'; '.join(notes)})" if notes else ""
            lines.append(f"- [{mark}] {cell(case_label(case, data))}{name}{note}")
            if case.failed:
                lines.append(f"  - Expected: {code(expected_text(case))}")
                lines.append(f"  - Actual: {code(actual_text(case))}")
                lines.append(f"  - Why: {cell(failure_reason(case))}")
                lines += [f"  - Expectation not met: {cell(x['text'])} (evidence: {cell(x['evidence'] or 'none given')})"
                          for x in case.failed_expectations]
            elif not case.counted:
                lines.append(f"  - Why: {cell(case.reason)}")
    return lines


def _changes(data: ReportData) -> list[str]:
    if data.baseline is None:
        return []
    moved = [c for c in data.cases if c.change in ("now_failing", "now_passing", "changed")]
    lines = ["", f"### Changes since {cell(data.baseline.version)}", ""]
    base_rate, rate = data.baseline_metrics.get("pass_rate"), data.overall.get("pass_rate")
    if base_rate is not None and rate is not None:
        lines.append(f"Pass rate {base_rate:.0%} → {rate:.0%} ({(rate - base_rate) * 100:+.0f} points).")
        lines.append("")
    for sig in data.significance:
        lines.append(f"Statistical verdict ({cell(sig['target'])}): {sig['pass_rate_delta'] * 100:+.1f} points, "
                     f"95% interval [{sig['ci_low'] * 100:+.1f}, {sig['ci_high'] * 100:+.1f}], "
                     f"p = {sig['p_value']:.3g} (Holm-adjusted {sig['adjusted_p']:.3g}): **{sig['change']}**"
                     f"{verdict_flags(sig)}.")
        lines += [f"{cell(line)}" for line in verdict_notes(sig)]
    if data.significance:
        lines.append("")
    if not moved and not data.removed and not data.changed("new"):
        lines.append("No case changed its verdict.")
        return lines
    lines += [f"| Case | {cell(data.baseline.version)} | {cell(data.run.version)} | Change |",
              "|------|------|------|--------|"]
    for case in moved:
        before = case.baseline.verdict or case.baseline.status if case.baseline else "—"
        lines.append(f"| {cell(case_label(case, data))} | {before} | {case.outcome} | {case.change.replace('_', ' ')} |")
    for case in data.changed("new"):
        lines.append(f"| {cell(case_label(case, data))} | — | {case.outcome} | new |")
    for test_id in data.removed:
        lines.append(f"| {cell(test_id)} | (present) | — | removed |")
    return lines


def _recommendations(data: ReportData) -> list[str]:
    recs = recommendations(data)
    lines = ["", "### Recommendations", ""]
    if not recs:
        return lines + ["None: every evaluated case passed and every threshold was met."]
    return lines + [f"{i}. {inline(r)}" for i, r in enumerate(recs, 1)]


def _derived(data: ReportData) -> list[str]:
    """promptfoo ``derivedMetrics`` (rows ``derived:NAME`` per target), when the suite has any."""
    rows = [(t, m.removeprefix("derived:"), v) for t, ms in sorted(data.metrics.items()) if t != "*"
            for m, v in sorted(ms.items()) if m.startswith("derived:")]
    if not rows:
        return []
    return (["", "### Derived metrics", "", "| Target | Metric | Value |", "|--------|--------|-------|"]
            + [f"| {cell(t)} | {cell(m)} | {v:.4g} |" for t, m, v in rows]
            + ["", "A derived metric that divides by zero is undefined and has no row (the run log says so)."])


def render_markdown(data: ReportData) -> str:
    lines = _header(data)
    lines += ["", "### Eval Results", ""] + _metric_table(data) + ["", _counts_line(data)] + _derived(data)
    lines += configuration_lines(data)
    if include_details(data):
        lines += _checklist(data)
    lines += _changes(data)
    lines += trigger_markdown(data.triggers, cell)
    lines += blind_markdown(data.blind, cell)
    lines += _recommendations(data)
    return "\n".join(lines).rstrip() + "\n"


def render_markdown_summary(data: ReportData) -> str:
    """The short form for the Dagster UI: no per-case checklist."""
    run = data.run
    lines = [f"**{cell(run.skill_version)}** on {run.eval_date}"
             + (f", compared with {cell(data.baseline.skill_version)}" if data.baseline else ""), ""]
    lines += _metric_table(data) + ["", _counts_line(data)] + configuration_lines(data) + _warnings(data)
    if data.baseline is not None:
        labelled = labelled_regressed(data.significance)
        failing, passing = data.changed("now_failing"), data.changed("now_passing")
        lines += ["", f"Labelled regressed (q <= case_fdr): {', '.join(cell(t) for t in labelled) or 'none'}; "
                      f"trials now failing: {', '.join(cell(case_label(c, data)) for c in failing) or 'none'}; "
                      f"now passing: {', '.join(cell(case_label(c, data)) for c in passing) or 'none'}"]
    lines += _recommendations(data)
    return "\n".join(lines).rstrip() + "\n"


__all__ = ["render_markdown", "render_markdown_summary"]

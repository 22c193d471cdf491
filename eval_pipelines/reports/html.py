"""The HTML report: one self-contained page (inline CSS, SVG and a little vanilla JS;
no external asset, no CDN, no web font).

It has the summary, the metric table with thresholds, a pass-rate-by-version
chart (and a pass rate by night when the version ran on several dates), a
side-by-side diff of baseline vs current output for every case that flipped,
and a sortable, filterable results table whose rows open the case's details:
input, expected, output, each assertion's score and reasoning, rubric scores.

Every string from the store (inputs, outputs, reasons, names) is HTML-escaped;
a Content-Security-Policy forbids loading anything from anywhere.
"""

from __future__ import annotations

import json
import re
from difflib import SequenceMatcher
from html import escape
from itertools import zip_longest
from typing import Any, Iterable

from eval_pipelines.reports.data import CaseResult, Grade, HistoryPoint, ReportData
from eval_pipelines.reports.json_report import (
    case_label,
    format_value,
    metric_table,
    recommendations,
    summary,
    timestamp,
)

MAX_DIFF_LINES = 400
CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
       "base-uri 'none'; form-action 'none'")
OUTCOMES = ("pass", "borderline", "fail", "error", "not_evaluated", "pending_human")
# Keys of grade details shown as text beside the reason (the judge's own words).
REASONING_KEYS = ("feedback", "reasoning", "explanation", "rationale", "judge_reasoning", "comment")


def e(value: Any) -> str:
    """Escape anything for HTML text or a quoted attribute."""
    if value is None:
        return ""
    return escape(value if isinstance(value, str) else str(value), quote=True)


def _pretty(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.0f}%"


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "case"


# ---- diff -----------------------------------------------------------------------

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]", re.U)


def _word_diff(old: str, new: str) -> tuple[str, str]:
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    left, right = [], []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            left.append(e("".join(a[i1:i2])))
            right.append(e("".join(b[j1:j2])))
            continue
        if i2 > i1:
            left.append(f"<del>{e(''.join(a[i1:i2]))}</del>")
        if j2 > j1:
            right.append(f"<ins>{e(''.join(b[j1:j2]))}</ins>")
    return "".join(left), "".join(right)


def diff_rows(old: str, new: str) -> list[tuple[str, str, str]]:
    """Side-by-side rows (left html, right html, kind) of a line diff with word-level changes."""
    a = old.splitlines()[:MAX_DIFF_LINES] or [""]
    b = new.splitlines()[:MAX_DIFF_LINES] or [""]
    rows: list[tuple[str, str, str]] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            rows += [(e(x), e(y), "same") for x, y in zip(a[i1:i2], b[j1:j2])]
        elif tag == "replace":
            for x, y in zip_longest(a[i1:i2], b[j1:j2]):
                if x is None:
                    rows.append(("", f"<ins>{e(y)}</ins>", "add"))
                elif y is None:
                    rows.append((f"<del>{e(x)}</del>", "", "del"))
                else:
                    left, right = _word_diff(x, y)
                    rows.append((left, right, "chg"))
        elif tag == "delete":
            rows += [(f"<del>{e(x)}</del>", "", "del") for x in a[i1:i2]]
        elif tag == "insert":
            rows += [("", f"<ins>{e(y)}</ins>", "add") for y in b[j1:j2]]
    return rows


def _side(output: str | None, error: str | None) -> str:
    if output is not None:
        return output
    return f"[error] {error}" if error is not None else "[no output]"


def diff_table(case: CaseResult, baseline_label: str, current_label: str) -> str:
    base = case.baseline
    assert base is not None
    rows = diff_rows(_side(base.output, base.error), _side(case.output, case.error))
    same = all(kind == "same" for _, _, kind in rows)
    body = "".join(f'<tr class="{kind}"><td class="old"><pre>{left}</pre></td>'
                   f'<td class="new"><pre>{right}</pre></td></tr>' for left, right, kind in rows)
    note = '<p class="muted">The outputs are identical; the verdict changed with the grading.</p>' if same else ""
    return (f'<table class="diff"><thead><tr><th>{e(baseline_label)}: {_badge(base.verdict or base.status)} '
            f'score {_score(base.score)}</th><th>{e(current_label)}: {_badge(case.outcome)} '
            f'score {_score(case.score)}</th></tr></thead><tbody>{body}</tbody></table>{note}')


# ---- charts ---------------------------------------------------------------------

def _bar_chart(points: list[HistoryPoint], chart_id: str, title: str) -> str:
    n = len(points)
    bar, gap, left, top, height = 56, 28, 44, 24, 180
    width = max(360, left + n * (bar + gap) + gap)
    total_height = top + height + 48
    parts = [f'<svg id="{chart_id}" class="chart" xmlns="http://www.w3.org/2000/svg" role="img" '
             f'width="{width}" height="{total_height}" viewBox="0 0 {width} {total_height}" '
             f'aria-labelledby="{chart_id}-title"><title id="{chart_id}-title">{e(title)}</title>']
    for tick in (0, 25, 50, 75, 100):
        y = top + height - height * tick / 100
        parts.append(f'<line class="grid" x1="{left}" x2="{width - 8}" y1="{y:.1f}" y2="{y:.1f}"/>'
                     f'<text class="axis" x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick}%</text>')
    for i, p in enumerate(points):
        x = left + gap + i * (bar + gap)
        rate = p.pass_rate or 0.0
        h = height * rate
        y = top + height - h
        kind = "current" if p.is_current else "baseline" if p.is_baseline else "other"
        label = "n/a" if p.pass_rate is None else f"{rate * 100:.0f}%"
        parts.append(
            f'<g class="bar {kind}" data-version="{e(p.version)}" data-pass-rate="{"" if p.pass_rate is None else f"{rate:.4f}"}">'
            f'<title>{e(p.version)} ({e(p.eval_date)}): {label} ({p.passed}/{p.counted} passed)</title>'
            f'<rect x="{x}" y="{y:.1f}" width="{bar}" height="{max(h, 1):.1f}" rx="3"/>'
            f'<text class="value" x="{x + bar / 2}" y="{y - 6:.1f}" text-anchor="middle">{label}</text>'
            f'<text class="axis" x="{x + bar / 2}" y="{top + height + 18}" text-anchor="middle">{e(p.version)}</text>'
            + (f'<text class="axis tag" x="{x + bar / 2}" y="{top + height + 34}" text-anchor="middle">'
               f'{"this run" if p.is_current else "baseline"}</text>' if kind != "other" else "")
            + "</g>")
    parts.append("</svg>")
    return "".join(parts)


def _line_chart(points: list[HistoryPoint], chart_id: str, title: str) -> str:
    n = len(points)
    left, top, height, step = 44, 20, 160, 72
    width = max(360, left + (n - 1) * step + 60)
    total_height = top + height + 40
    parts = [f'<svg id="{chart_id}" class="chart" xmlns="http://www.w3.org/2000/svg" role="img" '
             f'width="{width}" height="{total_height}" viewBox="0 0 {width} {total_height}" '
             f'aria-labelledby="{chart_id}-title"><title id="{chart_id}-title">{e(title)}</title>']
    for tick in (0, 50, 100):
        y = top + height - height * tick / 100
        parts.append(f'<line class="grid" x1="{left}" x2="{width - 8}" y1="{y:.1f}" y2="{y:.1f}"/>'
                     f'<text class="axis" x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick}%</text>')
    coords = [(left + 24 + i * step, top + height - height * (p.pass_rate or 0.0)) for i, p in enumerate(points)]
    parts.append('<polyline class="line" points="' + " ".join(f"{x:.1f},{y:.1f}" for x, y in coords) + '"/>')
    for (x, y), p in zip(coords, points):
        parts.append(f'<g class="point{" current" if p.is_current else ""}"><title>{e(p.eval_date)}: '
                     f'{_pct(p.pass_rate)}</title><circle cx="{x:.1f}" cy="{y:.1f}" r="4"/>'
                     f'<text class="axis" x="{x:.1f}" y="{top + height + 18}" text-anchor="middle">'
                     f'{e(p.eval_date[5:])}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


# ---- pieces -----------------------------------------------------------------------

def _badge(outcome: str | None) -> str:
    word = outcome or "n/a"
    return f'<span class="badge {e(_slug(word))}">{e(word.replace("_", " "))}</span>'


def _change_badge(change: str | None) -> str:
    if change in (None, "same"):
        return ""
    return f'<span class="change {e(change)}">{e(change)}</span>'


def _cards(data: ReportData) -> str:
    s = summary(data)
    delta = ""
    if data.baseline is not None:
        base, cur = data.baseline_metrics.get("pass_rate"), data.overall.get("pass_rate")
        if base is not None and cur is not None:
            delta = f'<span class="delta">{(cur - base) * 100:+.0f} pts vs {e(data.baseline.version)}</span>'
    cards = [
        ("Pass rate", _pct(s["pass_rate"]) + delta),
        ("Passed", f'{s["passed"]} / {s["passed"] + s["failed"]}'),
        ("Failed", f'{s["failed"]}' + (f' <span class="delta">{s["errors"]} errors</span>' if s["errors"] else "")),
        ("Skipped", f'{s["skipped"]}'),
        ("Cases", f'{s["cases"]}'),
    ]
    if data.baseline is not None:
        cards.append(("Regressed / fixed", f'{len(data.changed("regressed"))} / {len(data.changed("fixed"))}'))
    return '<section class="cards" id="summary">' + "".join(
        f'<div class="card"><div class="label">{e(label)}</div><div class="big">{value}</div></div>'
        for label, value in cards) + "</section>"


def _metrics_section(data: ReportData) -> str:
    rows = metric_table(data)
    compared = data.baseline is not None
    head = "<tr><th>Metric</th><th>Value</th><th>Threshold</th><th>Status</th>"
    head += f"<th>{e(data.baseline.version)}</th></tr>" if compared else "</tr>"
    body = []
    for row in rows:
        status = row["status"]
        status_html = f'<span class="badge {"pass" if status == "PASS" else "fail"}">{status}</span>' if status else "—"
        threshold = "—" if row["threshold"] is None else f"{row['threshold']:g}"
        cells = (f"<td>{e(row['label'])}</td><td>{e(format_value(row['metric'], row['value']))}</td>"
                 f"<td>{threshold}</td><td>{status_html}</td>")
        if compared:
            cells += f"<td>{e(format_value(row['metric'], row['baseline']))}</td>"
        body.append(f"<tr>{cells}</tr>")
    s = summary(data)
    breakdown = []
    for title, groups in (("By category", s["by_category"]), ("By target", s["by_target"])):
        lines = "".join(f"<tr><td>{e(name)}</td><td>{g['passed']}</td><td>{g['failed']}</td>"
                        f"<td>{g['skipped']}</td><td>{_pct(g['pass_rate'])}</td></tr>" for name, g in groups.items())
        breakdown.append(f'<table class="small"><caption>{title}</caption><thead><tr><th></th><th>passed</th>'
                         f"<th>failed</th><th>skipped</th><th>pass rate</th></tr></thead><tbody>{lines}</tbody></table>")
    graders = "".join(f"<tr><td>{e(name)}</td><td>{g['passed']}</td><td>{g['failed']}</td>"
                      f"<td>{g['pending']}</td></tr>" for name, g in s["by_grader"].items())
    breakdown.append('<table class="small"><caption>By grader (assertions)</caption><thead><tr><th></th>'
                     f"<th>passed</th><th>failed</th><th>pending</th></tr></thead><tbody>{graders}</tbody></table>")
    return (f'<section id="metrics"><h2>Eval results</h2><table class="metrics"><thead>{head}</thead>'
            f'<tbody>{"".join(body)}</tbody></table><div class="breakdown">{"".join(breakdown)}</div></section>')


def _chart_section(data: ReportData) -> str:
    parts = ['<section id="charts"><h2>Pass rate by version</h2>']
    if data.version_history:
        parts.append(_bar_chart(data.version_history, "pass-rate-chart",
                                f"Pass rate of each version of {data.run.skill}"))
    else:
        parts.append('<p class="muted">No metrics stored for this skill.</p>')
    if len(data.date_history) > 1:
        parts.append(f"<h3>{e(data.run.version)} by night</h3>")
        parts.append(_line_chart(data.date_history, "pass-rate-by-date-chart",
                                 f"Pass rate of {data.run.skill_version} per evaluation date"))
    parts.append("</section>")
    return "".join(parts)


def _regressions_section(data: ReportData) -> str:
    if data.baseline is None:
        return ""
    flipped = data.changed("regressed") + data.changed("fixed")
    parts = [f'<section id="regressions"><h2>Changes since {e(data.baseline.version)}</h2>']
    for sig in data.significance:
        parts.append(
            f'<p class="significance">{e(sig["target"])}: {sig["pass_rate_delta"] * 100:+.1f} points, '
            f'95% interval [{sig["ci_low"] * 100:+.1f}, {sig["ci_high"] * 100:+.1f}], '
            f'p = {sig["p_value"]:.3g} (Holm-adjusted {sig["adjusted_p"]:.3g}): '
            f'<strong>{e(sig["change"])}</strong></p>')
    if not flipped:
        parts.append('<p class="muted">No case flipped between pass and non-pass.</p>')
    for case in flipped:
        base = case.baseline
        parts.append(
            f'<div class="diff-block {e(case.change)}" id="diff-{e(_slug(case_label(case, data)))}">'
            f'<h3>{_change_badge(case.change)} <a href="#case-{e(_slug(case_label(case, data)))}">'
            f'{e(case_label(case, data))}</a> {e(case.name or "")}: '
            f'{e(base.verdict or base.status if base else "")} → {e(case.outcome)}</h3>'
            f'{diff_table(case, data.baseline.version, data.run.version)}</div>')
    if data.removed:
        parts.append(f'<p>Removed since {e(data.baseline.version)}: {e(", ".join(data.removed))}</p>')
    parts.append("</section>")
    return "".join(parts)


def _pre(value: Any, cls: str = "") -> str:
    return f'<pre class="{cls}">{e(_pretty(value))}</pre>'


def _grade_rows(grades: list[Grade]) -> str:
    rows = []
    for g in grades:
        extra = []
        rubric = g.details.get("rubric_scores")
        if isinstance(rubric, dict) and rubric:
            items = "".join(f"<tr><td>{e(k)}</td><td>{_score(v) if isinstance(v, (int, float)) else e(v)}</td></tr>"
                            for k, v in rubric.items())
            extra.append(f'<table class="rubric"><caption>rubric scores</caption><tbody>{items}</tbody></table>')
        for key in REASONING_KEYS:
            if g.details.get(key):
                extra.append(f'<p class="reasoning"><b>{e(key)}:</b> {e(_pretty(g.details[key]))}</p>')
        if g.details:
            extra.append(f"<details><summary>details</summary>{_pre(g.details)}</details>")
        rows.append(
            f'<tr class="{"ok" if g.passed else "bad"}"><td>{g.index}</td><td><code>{e(g.type)}</code></td>'
            f"<td>{e(g.name)}</td><td>{e(g.family)}</td><td>{_score(g.score)}</td><td>{e(g.status)}</td>"
            f'<td>{"✔" if g.passed else "✘"}</td><td>{e(g.reason)}{"".join(extra)}</td></tr>')
    return "".join(rows)


def _detail(case: CaseResult, data: ReportData) -> str:
    fields = [("Input", _pre(case.input))]
    if case.expected is not None:
        fields.append(("Expected", _pre(case.expected)))
    if case.criteria:
        fields.append(("Criteria", _pre(case.criteria)))
    fields.append(("Output", _pre(case.output if case.output is not None else "(no output)", "output")))
    if case.error is not None:
        fields.append(("Error", _pre(case.error, "error")))
    fields.append(("Result", f"{_badge(case.outcome)} score {_score(case.score)}: {e(case.reason)}"))
    measured = []
    if case.latency_ms is not None:
        measured.append(f"{case.latency_ms:.0f} ms")
    if case.prompt_tokens is not None or case.completion_tokens is not None:
        measured.append(f"{(case.prompt_tokens or 0) + (case.completion_tokens or 0)} tokens")
    if case.cost_usd is not None:
        measured.append(f"${case.cost_usd:.5f}")
    if case.cached:
        measured.append("cached response")
    if measured:
        fields.append(("Call", e(", ".join(measured))))
    if case.baseline is not None and data.baseline is not None:
        b = case.baseline
        fields.append((f"Baseline {data.baseline.version}",
                       f"{_badge(b.verdict or b.status)} score {_score(b.score)}: {e(b.reason)}"))
        if (b.output, b.error) != (case.output, case.error):
            fields.append(("Diff", diff_table(case, data.baseline.version, data.run.version)))
    dl = "".join(f"<dt>{e(k)}</dt><dd>{v}</dd>" for k, v in fields)
    grades = ('<table class="grades"><thead><tr><th>#</th><th>type</th><th>name</th><th>grader</th>'
              "<th>score</th><th>status</th><th>passed</th><th>reasoning</th></tr></thead>"
              f"<tbody>{_grade_rows(case.grades)}</tbody></table>") if case.grades else \
        '<p class="muted">No assertions were graded.</p>'
    return f'<div class="case-detail"><dl>{dl}</dl><h4>Assertions</h4>{grades}</div>'


def _options(values: Iterable[str], label: str) -> str:
    return f'<option value="">{e(label)}</option>' + "".join(
        f'<option value="{e(v)}">{e(v.replace("_", " "))}</option>' for v in values)


COLUMNS = (("id", "Case", "text"), ("name", "Name", "text"), ("category", "Category", "text"),
           ("target", "Target", "text"), ("trial", "Trial", "number"), ("verdict", "Verdict", "text"),
           ("score", "Score", "number"), ("latency", "Latency (ms)", "number"))


# Past this many cases the page lists every case that did not pass or changed,
# then passing ones up to the limit: a 100,000-case page weighed 146 MB, more
# than a browser (or the run's memory) should carry. The JSON report and
# DuckDB keep every case.
HTML_CASE_LIMIT = 5000


def listed_cases(data: ReportData) -> list:
    if len(data.cases) <= HTML_CASE_LIMIT:
        return list(data.cases)
    notable = {id(c) for c in data.cases if c.outcome != "pass" or (c.change not in (None, "same"))}
    room = max(0, HTML_CASE_LIMIT - len(notable))
    listed = []
    for case in data.cases:
        if id(case) in notable:
            listed.append(case)
        elif room:
            listed.append(case)
            room -= 1
    return listed


def _results_section(data: ReportData) -> str:
    compared = data.baseline is not None
    listed = listed_cases(data)
    omitted = len(data.cases) - len(listed)
    columns = list(COLUMNS) + ([("change", "Change", "text")] if compared else [])
    outcomes = [o for o in OUTCOMES if any(c.outcome == o for c in data.cases)]
    verdict_options = _options(outcomes, "all verdicts").replace(
        '</option>', '</option><option value="nonpass">not pass</option>', 1)
    filters = [
        f'<label>Verdict <select id="filter-verdict" data-filter="verdict">{verdict_options}</select></label>',
        f'<label>Category <select id="filter-category" data-filter="category">'
        f'{_options(sorted({c.category for c in data.cases}), "all categories")}</select></label>',
        f'<label>Target <select id="filter-target" data-filter="target">'
        f'{_options(sorted({c.target for c in data.cases}), "all targets")}</select></label>',
    ]
    if compared:
        changes = [k for k in ("regressed", "fixed", "changed", "same", "new") if data.changed(k)]
        filters.append(f'<label>Change <select id="filter-change" data-filter="change">'
                       f'{_options(changes, "all changes")}</select></label>')
    filters.append('<label>Search <input id="filter-text" type="search" placeholder="id, name, output"></label>')
    filters.append('<button type="button" id="expand-all">expand all</button>'
                   '<button type="button" id="collapse-all">collapse all</button>')
    head = "".join(f'<th data-key="{k}" data-type="{t}" tabindex="0" scope="col">{e(label)}</th>'
                   for k, label, t in columns)
    bodies = []
    for order, case in enumerate(listed):
        label = case_label(case, data)
        search = " ".join(filter(None, [case.test_id, case.name, case.input, case.output, case.error])).lower()
        attrs = {
            "id": f"case-{_slug(label)}", "data-order": order, "data-id": case.test_id, "data-name": case.name or "",
            "data-category": case.category, "data-target": case.target, "data-trial": case.trial,
            "data-verdict": case.outcome, "data-score": "" if case.score is None else f"{case.score:.6f}",
            "data-latency": "" if case.latency_ms is None else f"{case.latency_ms:.3f}",
            "data-change": case.change or "", "data-search": search[:4000],
        }
        attr_html = " ".join(f'{k}="{e(v)}"' for k, v in attrs.items())
        cells = [
            f'<td><button type="button" class="toggle" aria-expanded="false">{e(case.test_id)}</button></td>',
            f"<td>{e(case.name or '')}</td>", f"<td>{e(case.category)}</td>", f"<td>{e(case.target)}</td>",
            f"<td>{case.trial}</td>", f"<td>{_badge(case.outcome)}</td>", f"<td>{_score(case.score)}</td>",
            f"<td>{'' if case.latency_ms is None else f'{case.latency_ms:.0f}'}</td>",
        ]
        if compared:
            cells.append(f"<td>{_change_badge(case.change)}</td>")
        bodies.append(f'<tbody class="case" {attr_html}><tr class="row">{"".join(cells)}</tr>'
                      f'<tr class="detail" hidden><td colspan="{len(columns)}">{_detail(case, data)}</td></tr></tbody>')
    return (f'<section id="results"><h2>Results</h2><div class="filters">{"".join(filters)}</div>'
            f'<p id="results-count" class="muted">{len(listed)} of {len(listed)} results shown</p>'
            + (f'<p id="results-omitted" class="muted">{omitted} more passing, unchanged results are not listed '
               f'on this page (it lists at most {HTML_CASE_LIMIT}, every failure and change first); the JSON '
               f'report and the <code>test_results</code> table in DuckDB have them all.</p>' if omitted else "")
            + f'<table id="results-table" class="results"><thead><tr>{head}</tr></thead>{"".join(bodies)}</table>'
            "</section>")


def _recommendations_section(data: ReportData) -> str:
    recs = recommendations(data)
    if not recs:
        body = '<p class="muted">None: every evaluated case passed and every threshold was met.</p>'
    else:
        body = "<ol>" + "".join(f"<li>{_code_spans(r)}</li>" for r in recs) + "</ol>"
    return f'<section id="recommendations"><h2>Recommendations</h2>{body}</section>'


def _code_spans(text: str) -> str:
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(f"<code>{e(p[1:-1])}</code>" if len(p) > 1 and p[0] == p[-1] == "`" else e(p) for p in parts)


STYLE = """
:root{--fg:#1d2433;--muted:#5b6577;--line:#d9dee7;--bg:#fff;--soft:#f5f7fa;--pass:#1a7f37;--fail:#c62828;
--border:#b26a00;--err:#8e24aa;--skip:#607d8b;--accent:#1f5fbf}
*{box-sizing:border-box}
body{margin:0;padding:24px 32px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 10px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:15px;margin:16px 0 8px}h4{margin:12px 0 6px}
.meta{color:var(--muted);margin:2px 0}.muted{color:var(--muted)}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
pre{margin:0;white-space:pre-wrap;word-break:break-word;background:var(--soft);padding:6px 8px;border-radius:4px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}
.card{border:1px solid var(--line);border-radius:8px;padding:10px 14px;min-width:130px;background:var(--soft)}
.card .label{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.card .big{font-size:22px;font-weight:600}.delta{display:block;font-size:12px;font-weight:400;color:var(--muted)}
table{border-collapse:collapse}th,td{border-bottom:1px solid var(--line);padding:5px 8px;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600}
.breakdown{display:flex;flex-wrap:wrap;gap:24px;margin-top:14px}caption{text-align:left;font-weight:600;padding:4px 0}
.badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;color:#fff;background:var(--skip);white-space:nowrap}
.badge.pass{background:var(--pass)}.badge.fail{background:var(--fail)}.badge.borderline{background:var(--border)}
.badge.error{background:var(--err)}
.change{font-size:12px;font-weight:600;text-transform:uppercase}.change.regressed{color:var(--fail)}
.change.fixed{color:var(--pass)}.change.changed{color:var(--border)}.change.new{color:var(--accent)}
.chart{display:block;max-width:100%;height:auto;margin:6px 0}
.chart .grid{stroke:var(--line);stroke-width:1}.chart .axis{fill:var(--muted);font-size:11px}
.chart .value{fill:var(--fg);font-size:12px;font-weight:600}
.chart .bar rect{fill:#9db7e0}.chart .bar.current rect{fill:var(--accent)}.chart .bar.baseline rect{fill:#7a869a}
.chart .tag{font-style:italic}.chart .line{fill:none;stroke:var(--accent);stroke-width:2}
.chart .point circle{fill:var(--accent)}
.filters{display:flex;flex-wrap:wrap;gap:12px;align-items:center;margin:8px 0}
.filters select,.filters input,.filters button{font:inherit;padding:3px 6px}
table.results{width:100%}table.results th[data-key]{cursor:pointer;user-select:none;white-space:nowrap}
table.results th[aria-sort=ascending]::after{content:" \\25B2"}table.results th[aria-sort=descending]::after{content:" \\25BC"}
button.toggle{white-space:nowrap;font:inherit;font-family:ui-monospace,monospace;background:none;border:0;color:var(--accent);cursor:pointer;padding:0;text-align:left}
button.toggle::before{content:"\\25B8 "}button.toggle[aria-expanded=true]::before{content:"\\25BE "}
tr.detail>td{background:#fbfcfd;padding:10px 14px}
.case-detail dl{display:grid;grid-template-columns:max-content 1fr;gap:6px 14px;margin:0}.case-detail dt{font-weight:600}
.case-detail dd{margin:0;min-width:0}
table.grades{width:100%}table.grades tr.bad td{background:#fff5f5}table.rubric{margin-top:6px}
.reasoning{margin:6px 0 0}
table.diff{width:100%;table-layout:fixed;margin:4px 0 8px}table.diff td{width:50%;padding:0 4px;border:0}
table.diff pre{background:none;padding:1px 4px}table.diff tr.chg td,table.diff tr.add td,table.diff tr.del td{background:#fffbe6}
del{background:#ffd7d5;text-decoration:line-through}ins{background:#ccf0d4;text-decoration:none}
.diff-block{border:1px solid var(--line);border-radius:6px;padding:4px 12px;margin:10px 0}
.diff-block.regressed{border-left:4px solid var(--fail)}.diff-block.fixed{border-left:4px solid var(--pass)}
footer{margin-top:32px;color:var(--muted);font-size:12px}
@media print{.filters,button.toggle::before{display:none}tr.detail[hidden]{display:none}}
"""

SCRIPT = """
(function () {
  "use strict";
  var table = document.getElementById("results-table");
  if (!table) { return; }
  var headers = Array.prototype.slice.call(table.tHead.querySelectorAll("th[data-key]"));
  var filters = Array.prototype.slice.call(document.querySelectorAll("select[data-filter]"));
  var text = document.getElementById("filter-text");
  var count = document.getElementById("results-count");
  function bodies() { return Array.prototype.slice.call(table.tBodies); }
  function numeric(value) { return value === "" || value === undefined ? -Infinity : parseFloat(value); }
  function sortBy(th) {
    var key = th.getAttribute("data-key");
    var isNumber = th.getAttribute("data-type") === "number";
    var direction = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
    headers.forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", direction);
    var sign = direction === "ascending" ? 1 : -1;
    var rows = bodies();
    rows.sort(function (a, b) {
      var x = a.getAttribute("data-" + key), y = b.getAttribute("data-" + key), order;
      if (isNumber) { order = numeric(x) - numeric(y); if (isNaN(order)) { order = 0; } }
      else { order = (x || "").localeCompare(y || "", undefined, {numeric: true, sensitivity: "base"}); }
      return order * sign || (parseInt(a.getAttribute("data-order"), 10) - parseInt(b.getAttribute("data-order"), 10));
    });
    rows.forEach(function (row) { table.appendChild(row); });
  }
  headers.forEach(function (th) {
    th.addEventListener("click", function () { sortBy(th); });
    th.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sortBy(th); }
    });
  });
  function matches(body) {
    for (var i = 0; i < filters.length; i++) {
      var wanted = filters[i].value, key = filters[i].getAttribute("data-filter");
      if (!wanted) { continue; }
      var value = body.getAttribute("data-" + key);
      if (key === "verdict" && wanted === "nonpass") {
        if (["fail", "borderline", "error"].indexOf(value) < 0) { return false; }
      } else if (value !== wanted) { return false; }
    }
    var needle = text ? text.value.trim().toLowerCase() : "";
    return !needle || (body.getAttribute("data-search") || "").indexOf(needle) >= 0;
  }
  function apply() {
    var all = bodies(), shown = 0;
    all.forEach(function (body) { var ok = matches(body); body.hidden = !ok; if (ok) { shown++; } });
    if (count) { count.textContent = shown + " of " + all.length + " results shown"; }
  }
  filters.forEach(function (select) { select.addEventListener("change", apply); });
  if (text) { text.addEventListener("input", apply); }
  function setOpen(body, open) {
    var detail = body.querySelector("tr.detail"), button = body.querySelector("button.toggle");
    if (detail) { detail.hidden = !open; }
    if (button) { button.setAttribute("aria-expanded", open ? "true" : "false"); }
  }
  table.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button.toggle") : null;
    if (!button) { return; }
    var body = button.closest("tbody");
    setOpen(body, body.querySelector("tr.detail").hidden);
  });
  var expand = document.getElementById("expand-all"), collapse = document.getElementById("collapse-all");
  if (expand) { expand.addEventListener("click", function () { bodies().forEach(function (b) { if (!b.hidden) { setOpen(b, true); } }); }); }
  if (collapse) { collapse.addEventListener("click", function () { bodies().forEach(function (b) { setOpen(b, false); }); }); }
  function openFromHash() {
    if (!location.hash || location.hash.indexOf("#case-") !== 0) { return; }
    var body = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (body && body.tagName === "TBODY") { body.hidden = false; setOpen(body, true); }
  }
  window.addEventListener("hashchange", openFromHash);
  openFromHash();
  apply();
})();
"""


def render_html(data: ReportData) -> str:
    run = data.run
    env = run.environment
    title = f"Eval report: {run.skill} {run.version}"
    targets = ", ".join(
        t["name"] + (f" ({t.get('type')}{', ' + t['model'] if t.get('model') else ''})" if t.get("type") else "")
        for t in env.get("targets", []))
    duration = "n/a" if run.duration_seconds is None else f"{run.duration_seconds:.1f} s"
    meta = [
        f"Suite <b>{e(run.suite)}</b> ({e(run.suite_format or 'unknown format')}) · evaluation date "
        f"<b>{e(run.eval_date)}</b> · run <code>{e(run.run_id or 'unknown')}</code>",
        f"Started {e(timestamp(run) or 'n/a')} · duration {e(duration)} ({e(run.duration_basis)})",
        f"Targets: {e(targets or 'none')} · Python {e(env.get('python'))} · DuckDB {e(env.get('duckdb'))} · "
        f"eval-pipelines {e(env.get('eval_pipelines'))}",
    ]
    if data.baseline is not None:
        meta.append(f"Compared with <b>{e(data.baseline.skill_version)}</b> (evaluation date "
                    f"{e(data.baseline.eval_date)}, run <code>{e(data.baseline.run_id or 'unknown')}</code>)")
    body = "".join([
        f"<header><h1>{e(title)}</h1>" + "".join(f'<p class="meta">{m}</p>' for m in meta) + "</header>",
        _cards(data),
        _metrics_section(data),
        _chart_section(data),
        _regressions_section(data),
        _results_section(data),
        _recommendations_section(data),
        '<footer>Written by eval-pipelines from the DuckDB results store. This page is self-contained: '
        "no external assets.</footer>",
    ])
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{e(CSP)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'
        f"<title>{e(title)}</title><style>{STYLE}</style></head>\n"
        f"<body>{body}\n<script>{SCRIPT}</script></body></html>\n"
    )


__all__ = ["render_html", "diff_rows"]

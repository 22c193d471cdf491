"""The HTML report's overview sections: the summary cards, the metric table
with thresholds and the per-category/target/grader breakdowns, and the
recommendations. The figures come from ``json_report`` so every format agrees.
"""

from __future__ import annotations

from eval_pipelines.reports.comparison import labelled_regressed
from eval_pipelines.reports.data import ReportData
from eval_pipelines.reports.html.format import code_spans, e, pct
from eval_pipelines.reports.json_report import format_value, metric_table, recommendations, summary


def cards_section(data: ReportData) -> str:
    s = summary(data)
    delta = ""
    if data.baseline is not None:
        base, cur = data.baseline_metrics.get("pass_rate"), data.overall.get("pass_rate")
        if base is not None and cur is not None:
            delta = f'<span class="delta">{(cur - base) * 100:+.0f} pts vs {e(data.baseline.version)}</span>'
    cards = [
        ("Pass rate", pct(s["pass_rate"]) + delta),
        ("Passed", f'{s["passed"]} / {s["passed"] + s["failed"]}'),
        ("Failed", f'{s["failed"]}' + (f' <span class="delta">{s["errors"]} errors</span>' if s["errors"] else "")),
        ("Skipped", f'{s["skipped"]}'),
        ("Cases", f'{s["cases"]}'),
    ]
    if data.baseline is not None:
        # "Regressed" is the statistical label only; single trials that flipped are counted apart.
        cards.append(("Labelled regressed", f'{len(labelled_regressed(data.significance))}'))
        cards.append(("Now failing / passing",
                      f'{len(data.changed("now_failing"))} / {len(data.changed("now_passing"))}'))
    return '<section class="cards" id="summary">' + "".join(
        f'<div class="card"><div class="label">{e(label)}</div><div class="big">{value}</div></div>'
        for label, value in cards) + "</section>"


def metrics_section(data: ReportData) -> str:
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
                        f"<td>{g['skipped']}</td><td>{pct(g['pass_rate'])}</td></tr>" for name, g in groups.items())
        breakdown.append(f'<table class="small"><caption>{title}</caption><thead><tr><th></th><th>passed</th>'
                         f"<th>failed</th><th>skipped</th><th>pass rate</th></tr></thead><tbody>{lines}</tbody></table>")
    graders = "".join(f"<tr><td>{e(name)}</td><td>{g['passed']}</td><td>{g['failed']}</td>"
                      f"<td>{g['pending']}</td></tr>" for name, g in s["by_grader"].items())
    breakdown.append('<table class="small"><caption>By grader (assertions)</caption><thead><tr><th></th>'
                     f"<th>passed</th><th>failed</th><th>pending</th></tr></thead><tbody>{graders}</tbody></table>")
    return (f'<section id="metrics"><h2>Eval results</h2><table class="metrics"><thead>{head}</thead>'
            f'<tbody>{"".join(body)}</tbody></table><div class="breakdown">{"".join(breakdown)}</div></section>')


def recommendations_section(data: ReportData) -> str:
    recs = recommendations(data)
    if not recs:
        body = '<p class="muted">None: every evaluated case passed and every threshold was met.</p>'
    else:
        body = "<ol>" + "".join(f"<li>{code_spans(r)}</li>" for r in recs) + "</ol>"
    return f'<section id="recommendations"><h2>Recommendations</h2>{body}</section>'

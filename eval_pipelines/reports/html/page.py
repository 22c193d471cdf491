"""The HTML report: one self-contained page (inline CSS, SVG and a little vanilla JS;
no external asset, no CDN, no web font).

It has the summary, the metric table with thresholds, a pass-rate-by-version
chart (and a pass rate by night when the version ran on several dates), a
side-by-side diff of baseline vs current output for every case that flipped,
and a sortable, filterable results table whose rows open the case's details:
input, expected, output, each assertion's score and reasoning, rubric scores.

Every string from the store (inputs, outputs, reasons, names) is HTML-escaped;
a Content-Security-Policy forbids loading anything from anywhere.

This module writes the page's frame and header and puts the sections in order;
each section is its own module (``summary``, ``charts``,
``changes``, ``results``), with the shared helpers in ``format``
and the CSS and JS in ``assets``.
"""

from __future__ import annotations

from eval_pipelines.reports.configurations import html_section as configurations_section
from eval_pipelines.reports.data import ReportData
from eval_pipelines.reports.html.assets import SCRIPT, STYLE
from eval_pipelines.reports.html.changes import diff_rows, regressions_section
from eval_pipelines.reports.html.charts import chart_section
from eval_pipelines.reports.html.format import e
from eval_pipelines.reports.html.results import results_section
from eval_pipelines.reports.html.blind import blind_section
from eval_pipelines.reports.html.triggers import trigger_section
from eval_pipelines.reports.html.summary import cards_section, metrics_section, recommendations_section
from eval_pipelines.reports.json_report import include_details, timestamp

CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
       "base-uri 'none'; form-action 'none'")


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
    # The suite's load warnings: fields it holds that shaped nothing in this run.
    meta += [f'<span class="warning">warning: {e(w)}</span>' for w in run.warnings]
    body = "".join([
        f"<header><h1>{e(title)}</h1>" + "".join(f'<p class="meta">{m}</p>' for m in meta) + "</header>",
        cards_section(data),
        metrics_section(data),
        configurations_section(data),
        chart_section(data),
        regressions_section(data),
        trigger_section(data.triggers),
        blind_section(data.blind),
        results_section(data) if include_details(data) else "",
        recommendations_section(data),
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

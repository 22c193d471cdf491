"""The HTML report's pass-rate charts, drawn as inline SVG (no script, no
external asset): a bar per version, and a line per evaluation date when this
version ran on several nights.
"""

from __future__ import annotations

from eval_pipelines.reports.data import HistoryPoint, ReportData
from eval_pipelines.reports.html.format import e, pct


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
                     f'{pct(p.pass_rate)}</title><circle cx="{x:.1f}" cy="{y:.1f}" r="4"/>'
                     f'<text class="axis" x="{x:.1f}" y="{top + height + 18}" text-anchor="middle">'
                     f'{e(p.eval_date[5:])}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def chart_section(data: ReportData) -> str:
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

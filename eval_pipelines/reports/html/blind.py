"""The HTML report's blind comparison section (``reports/blind.py`` loads it)."""

from __future__ import annotations

from eval_pipelines.reports.blind import BlindSummary, blind_text
from eval_pipelines.reports.html.format import e


def blind_section(summaries: list[BlindSummary]) -> str:
    if not summaries:
        return ""
    parts = ['<section id="blind"><h2>Blind comparison</h2><p>The judge compared each output with the baseline '
             "version's output of the same case, labelled A and B in a random (seeded, recorded) order, without "
             "knowing which version wrote which.</p>"]
    for s in summaries:
        parts.append(f"<p>{e(blind_text(s)[0].upper() + blind_text(s)[1:])}.</p>")
        if s.lost:
            parts.append("<ul>" + "".join(
                f"<li>Baseline preferred on <b>{e(r['test_id'])}</b> ({e(r['target'])}, trial {r['trial']}): "
                f"{e(r['reasoning'])}</li>" for r in s.lost) + "</ul>")
    return "".join(parts) + "</section>"

"""The HTML report's trigger section: precision, recall and accuracy per target, each query's
trigger rate (``reports/triggers.py`` loads them)."""

from __future__ import annotations

from eval_pipelines.reports.html.format import e
from eval_pipelines.reports.triggers import TriggerTarget, num, rate


def trigger_section(triggers: list[TriggerTarget]) -> str:
    if not triggers:
        return ""
    parts = ['<section id="triggers"><h2>Skill triggering</h2><p>Each query of the trigger set was run with the '
             "skill offered among others by name and description; a run triggered when the agent read the "
             "skill's SKILL.md.</p>"]
    for t in triggers:
        c = t.counts
        parts.append(f"<p><b>{e(t.target)}</b>: precision {num(t.precision)}, recall {num(t.recall)}, accuracy "
                     f"{num(t.accuracy)} over {t.queries} queries (TP {c['true_positives']}, FP "
                     f"{c['false_positives']}, FN {c['false_negatives']}, TN {c['true_negatives']})</p>")
        body = "".join(
            f"<tr><td>{r['query_number']}</td><td>{e(r['query'])}</td><td>{'yes' if r['should_trigger'] else 'no'}"
            f"</td><td>{e(rate(r))}</td><td>{num(r['trigger_rate'])}</td><td>"
            + ("—" if r["passed"] is None else '<span class="badge pass">ok</span>' if r["passed"]
               else '<span class="badge fail">wrong</span>') + "</td></tr>" for r in t.rows)
        parts.append('<table class="small"><thead><tr><th>#</th><th>Query</th><th>Should trigger</th>'
                     f"<th>Triggered runs</th><th>Rate</th><th>Result</th></tr></thead><tbody>{body}</tbody></table>")
    return "".join(parts) + "</section>"

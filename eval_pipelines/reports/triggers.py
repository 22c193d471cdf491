"""The trigger evaluation in the reports: per target, precision, recall and accuracy, and each
query's trigger rate (views ``trigger_accuracy`` and ``trigger_rates``), as Markdown lines and one
line for the terminal summary, and the JSON report's ``triggers`` (the HTML section is ``html/triggers.py``).
Empty (JSON: null) when the run stored no trigger rows."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class TriggerTarget:
    target: str
    queries: int
    precision: float | None
    recall: float | None
    accuracy: float
    counts: dict[str, int]  # true_positives, false_positives, false_negatives, true_negatives
    rows: list[dict[str, Any]] = field(default_factory=list)  # trigger_rates rows, query order


def load_triggers(con: Any, skill_version: str, eval_date: str) -> list[TriggerTarget]:
    key = [eval_date, skill_version]
    summaries = con.execute(
        "SELECT target, queries, precision, recall, accuracy, true_positives, false_positives, false_negatives, "
        "true_negatives FROM trigger_accuracy WHERE eval_date = ? AND skill_version = ? ORDER BY target",
        key).fetchall()
    out = []
    for target, queries, precision, recall, accuracy, tp, fp, fn, tn in summaries:
        rows = con.execute(
            "SELECT source_file, query_number, query, should_trigger, runs, triggered_runs, errors, trigger_rate, "
            "threshold, passed FROM trigger_rates WHERE eval_date = ? AND skill_version = ? AND target = ? "
            "ORDER BY source_file, query_number", [*key, target]).fetchall()
        names = ("source_file", "query_number", "query", "should_trigger", "runs", "triggered_runs", "errors",
                 "trigger_rate", "threshold", "passed")
        out.append(TriggerTarget(str(target), int(queries), precision, recall, float(accuracy),
                                 {"true_positives": int(tp), "false_positives": int(fp),
                                  "false_negatives": int(fn), "true_negatives": int(tn)},
                                 [dict(zip(names, r)) for r in rows]))
    return out


def num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def rate(row: dict[str, Any]) -> str:
    return f"{row['triggered_runs']}/{row['runs']}" + (f" ({row['errors']} errors)" if row["errors"] else "")


def trigger_line(triggers: list[TriggerTarget]) -> str | None:
    """One line for the terminal summary."""
    if not triggers:
        return None
    return "Triggers: " + "; ".join(
        f"{t.target}: precision {num(t.precision)}, recall {num(t.recall)}, accuracy {num(t.accuracy)} "
        f"over {t.queries} queries ({sum(not r['passed'] for r in t.rows if r['passed'] is not None)} wrong)"
        for t in triggers)


def trigger_markdown(triggers: list[TriggerTarget], cell: Any) -> list[str]:
    if not triggers:
        return []
    lines = ["", "### Skill triggering", "",
             "Each query of the trigger set was run with the skill offered among others by name and description; "
             "a run triggered when the agent read the skill's SKILL.md. A query triggers when its trigger rate "
             "reaches the threshold."]
    for t in triggers:
        c = t.counts
        lines += ["", f"**{cell(t.target)}**: precision {num(t.precision)}, recall {num(t.recall)}, "
                      f"accuracy {num(t.accuracy)} over {t.queries} queries (TP {c['true_positives']}, "
                      f"FP {c['false_positives']}, FN {c['false_negatives']}, TN {c['true_negatives']})", "",
                  "| # | Query | Should trigger | Triggered runs | Rate | Result |", "|---|---|---|---|---|---|"]
        for r in t.rows:
            result = "—" if r["passed"] is None else ("ok" if r["passed"] else "WRONG")
            lines.append(f"| {r['query_number']} | {cell(r['query'])} | {'yes' if r['should_trigger'] else 'no'} | "
                         f"{rate(r)} | {num(r['trigger_rate'])} | {result} |")
    return lines


def triggers_json(triggers: list[TriggerTarget]) -> list[dict[str, Any]] | None:
    """Per target: the counts, precision, recall, accuracy and each query's rate (``rows``)."""
    return [asdict(t) for t in triggers] or None

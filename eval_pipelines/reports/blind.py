"""The blind comparison in the reports (table ``blind_comparisons``, pipeline/blind.py): per
baseline, how often the judge preferred this version's output, the baseline's, or neither, and the
outputs where the baseline won, with the judge's reasoning (JSON report: ``blind_comparisons``). Empty
(JSON: null) when none was asked for."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class BlindSummary:
    baseline: str  # skill_version (eval_date)
    current_wins: int
    baseline_wins: int
    ties: int
    errors: int
    lost: list[dict[str, Any]] = field(default_factory=list)  # {test_id, target, trial, reasoning}

    @property
    def compared(self) -> int:
        return self.current_wins + self.baseline_wins + self.ties


def load_blind(con: Any, skill_version: str, eval_date: str) -> list[BlindSummary]:
    key = [eval_date, skill_version]
    out = []
    for baseline, date, current, base, ties, errors in con.execute(
            "SELECT baseline_skill_version, baseline_eval_date, count(*) FILTER (WHERE winner = 'current'), "
            "count(*) FILTER (WHERE winner = 'baseline'), count(*) FILTER (WHERE winner = 'tie'), "
            "count(*) FILTER (WHERE error IS NOT NULL) FROM blind_comparisons WHERE eval_date = ? AND "
            "skill_version = ? GROUP BY 1, 2 ORDER BY 1, 2", key).fetchall():
        lost = con.execute(
            "SELECT test_id, target, trial, reasoning FROM blind_comparisons WHERE eval_date = ? AND skill_version = ? "
            "AND baseline_skill_version = ? AND winner = 'baseline' ORDER BY test_id, target, trial",
            [*key, baseline]).fetchall()
        out.append(BlindSummary(f"{baseline} ({date})", int(current), int(base), int(ties), int(errors),
                                [dict(zip(("test_id", "target", "trial", "reasoning"), r)) for r in lost]))
    return out


def blind_text(s: BlindSummary) -> str:
    errors = f", {s.errors} judge errors" if s.errors else ""
    return (f"against {s.baseline}: this version preferred {s.current_wins}, the baseline {s.baseline_wins}, "
            f"ties {s.ties} of {s.compared} outputs{errors}")


def blind_line(summaries: list[BlindSummary]) -> str | None:
    return ("Blind comparison " + "; ".join(blind_text(s) for s in summaries)) if summaries else None


def blind_markdown(summaries: list[BlindSummary], cell: Any) -> list[str]:
    if not summaries:
        return []
    lines = ["", "### Blind comparison", "",
             "The judge compared each output with the baseline version's output of the same case, labelled A "
             "and B in a random (seeded, recorded) order, without knowing which version wrote which."]
    for s in summaries:
        lines += ["", cell(blind_text(s)[0].upper() + blind_text(s)[1:]) + "."]
        lines += [f"- Baseline preferred on {cell(r['test_id'])} ({cell(r['target'])}, trial {r['trial']}): "
                  f"{cell(r['reasoning'])}" for r in s.lost]
    return lines


def blind_json(summaries: list[BlindSummary]) -> list[dict[str, Any]] | None:
    """Per baseline: wins, ties, errors, how many were compared, and the outputs the baseline won."""
    return [asdict(s) | {"compared": s.compared} for s in summaries] or None

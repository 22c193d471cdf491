"""What ``eval-pipelines run`` prints at the end: what failed and what changed.

Modelled on ``promptfoo eval``'s closing summary: the failing cases with their
reasons (expected and actual where the grader stored both), the cases that
flipped against the baseline (pass -> fail, fail -> pass) with the regression
stage's label when it gave one, the tallies and the duration. Everything is read
back from DuckDB (``test_results``, ``grades``, ``regressions``), nothing is
recomputed, so the terminal says what the tables and the reports say.

Three forms: a rich table on a terminal, plain lines when piped (greppable, no
box characters), JSON for scripts (``--format json``); ``-q`` keeps only the tallies.
"""

from __future__ import annotations

import json
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from typing import Any, TextIO

FORMATS = ("table", "json", "none")
SHOWN = 20  # failures and flips listed; the rest are counted ("and 12 more")
VALUE_WIDTH = 60  # characters of an expected or actual value in the table


@dataclass
class Failure:
    test_id: str
    target: str
    trial: int
    status: str  # graded (a failed verdict) | error
    reason: str
    expected: str | None = None  # from the first failing grade whose details hold both values
    actual: str | None = None


@dataclass
class Flip:
    test_id: str
    target: str
    comparison: str  # previous_version | previous_night
    baseline: str  # skill_version (eval_date)
    before: float  # the case's pass rate in the baseline
    after: float
    label: str | None  # the regression stage's label when it gave one (regressed, improved)

    @property
    def direction(self) -> str:
        return "pass → fail" if self.after < self.before else "fail → pass"


@dataclass
class RunSummary:
    skill_version: str
    eval_date: str
    passed: int = 0
    failed: int = 0
    errors: int = 0
    not_evaluated: int = 0  # not_evaluated and pending_human rows: counted in no pass rate
    pass_rate: float | None = None  # the metrics table's, as the reports show it
    failures: list[Failure] = field(default_factory=list)
    flips: list[Flip] = field(default_factory=list)
    duration_s: float | None = None
    filtered_out: int = 0
    several_targets: bool = False
    several_trials: bool = False
    checks_failed: list[str] = field(default_factory=list)
    exit_code: int | None = None
    triggers: str | None = None  # the trigger evaluation in one line (reports/triggers.py)
    blind: str | None = None  # the blind comparison in one line (reports/blind.py)

    def tallies(self) -> str:
        rate = "" if self.pass_rate is None else f" (pass rate {self.pass_rate:.0%})"
        return (f"{self.passed} passed / {self.failed} failed / {self.errors} errors / "
                f"{self.not_evaluated} not evaluated{rate}")

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        for flip, row in zip(self.flips, out["flips"]):
            row["direction"] = flip.direction
        return out


def _short(text: Any, limit: int = VALUE_WIDTH) -> str:
    if text is None:
        return ""
    text = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def read_summary(db_path: str, skill_version: str, eval_date: str, *, duration_s: float | None = None,
                 filtered_out: int = 0, con: Any = None) -> RunSummary:
    """The run's summary from the stored rows of one partition (``con``: an open connection
    to ``db_path``, else one is opened here)."""
    from eval_pipelines.reports.blind import blind_line, load_blind
    from eval_pipelines.reports.triggers import load_triggers, trigger_line
    from eval_pipelines.store.connection import connect

    summary = RunSummary(skill_version, eval_date, duration_s=duration_s, filtered_out=filtered_out)
    key = [eval_date, skill_version]
    with connect(db_path, read_only=True) if con is None else nullcontext(con) as con:
        (summary.passed, summary.failed, summary.errors, summary.not_evaluated, targets, trials) = con.execute(
            """SELECT count(*) FILTER (WHERE verdict = 'pass'),
                      count(*) FILTER (WHERE status = 'graded' AND verdict IS DISTINCT FROM 'pass'),
                      count(*) FILTER (WHERE status = 'error'),
                      count(*) FILTER (WHERE status NOT IN ('graded', 'error')),
                      count(DISTINCT target), count(DISTINCT trial)
               FROM test_results WHERE eval_date = ? AND skill_version = ? AND configuration = 'with_skill'""",
            key).fetchone()
        summary.several_targets, summary.several_trials = targets > 1, trials > 1
        rate = con.execute("SELECT max(value) FROM metrics WHERE eval_date = ? AND skill_version = ? "
                           "AND target = '*' AND metric = 'pass_rate' AND configuration = 'with_skill'", key).fetchone()
        summary.pass_rate = rate[0] if rate else None
        summary.triggers = trigger_line(load_triggers(con, skill_version, eval_date))
        summary.blind = blind_line(load_blind(con, skill_version, eval_date))
        failing = con.execute(
            """SELECT r.test_id, r.target, r.trial, r.status, r.reason,
                      list(g.assertion_name || ': ' || g.reason ORDER BY g.assertion_index)
                          FILTER (WHERE g.test_id IS NOT NULL),
                      list(g.details ORDER BY g.assertion_index) FILTER (WHERE g.test_id IS NOT NULL)
               FROM test_results r
               LEFT JOIN grades g ON g.eval_date = r.eval_date AND g.skill_version = r.skill_version
                    AND g.test_id = r.test_id AND g.target = r.target AND g.trial = r.trial
                    AND g.configuration = r.configuration AND NOT g.passed AND g.status IN ('graded', 'error')
               WHERE r.eval_date = ? AND r.skill_version = ? AND r.configuration = 'with_skill'
                 AND (r.status = 'error' OR (r.status = 'graded' AND r.verdict IS DISTINCT FROM 'pass'))
               GROUP BY ALL ORDER BY r.test_id, r.target, r.trial""", key).fetchall()
        for test_id, target, trial, status, reason, grade_reasons, details in failing:
            failure = Failure(test_id, target, trial, status,
                              "; ".join(grade_reasons) if grade_reasons and status == "graded" else reason)
            for raw in details or []:
                shown = json.loads(raw) if isinstance(raw, str) else raw
                if isinstance(shown, dict) and "expected" in shown and "actual" in shown:
                    failure.expected, failure.actual = _short(shown["expected"]), _short(shown["actual"])
                    break
            summary.failures.append(failure)
        # A flip: the case's pass rate crossed one half against a baseline (one trial: pass <-> fail).
        flips = con.execute(
            """SELECT test_id, target, comparison, baseline_skill_version || ' (' || baseline_eval_date || ')',
                      baseline_pass_rate, current_pass_rate, change
               FROM regressions
               WHERE eval_date = ? AND skill_version = ? AND level = 'case'
                 AND (baseline_pass_rate >= 0.5) <> (current_pass_rate >= 0.5)
               ORDER BY comparison DESC, current_pass_rate > baseline_pass_rate, test_id, target""",
            key).fetchall()
        for test_id, target, comparison, baseline, before, after, change in flips:
            label = change if change in ("regressed", "improved") else None
            summary.flips.append(Flip(test_id, target, comparison, baseline, before, after, label))
    return summary


def _case_label(summary: RunSummary, test_id: str, target: str, trial: int | None = None) -> str:
    parts = [test_id]
    if summary.several_targets:
        parts.append(f"[{target}]")
    if trial is not None and summary.several_trials:
        parts.append(f"trial {trial}")
    return " ".join(parts)


def _rate(before: float, after: float) -> str:
    def word(rate: float) -> str:
        return "pass" if rate == 1 else "fail" if rate == 0 else f"{rate:.0%}"
    return f"{word(before)} → {word(after)}"


def _footer(summary: RunSummary) -> list[str]:
    lines = [summary.tallies()] + [line for line in (summary.triggers, summary.blind) if line]
    if summary.filtered_out:
        lines.append(f"Filtered out: {summary.filtered_out} cases (not run)")
    if summary.duration_s is not None:
        lines.append(f"Duration: {format_duration(summary.duration_s)}")
    return lines


def format_duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(round(seconds)), 60)
    return f"{minutes}m {rest}s" if minutes < 60 else f"{minutes // 60}h {minutes % 60}m {rest}s"


def render_plain(summary: RunSummary, quiet: bool = False) -> str:
    """The piped form: one line per failure and flip, then the tallies."""
    lines: list[str] = []
    if not quiet:
        if summary.failures:
            lines.append(f"Failures ({len(summary.failures)}):")
            for f in summary.failures[:SHOWN]:
                kind = "ERROR" if f.status == "error" else "FAIL"
                lines.append(f"  {kind} {_case_label(summary, f.test_id, f.target, f.trial)}: {_short(f.reason, 300)}")
                if f.expected is not None and f.expected not in f.reason:
                    lines.append(f"       expected: {f.expected}")
                    lines.append(f"       actual:   {f.actual}")
            if len(summary.failures) > SHOWN:
                lines.append(f"  and {len(summary.failures) - SHOWN} more")
        for baseline, flips in _by_baseline(summary.flips):
            if lines:
                lines.append("")
            lines.append(f"Changed against {baseline} ({len(flips)}):")
            for flip in flips[:SHOWN]:
                label = f" (labelled {flip.label})" if flip.label else " (not labelled on its own)"
                lines.append(f"  {_case_label(summary, flip.test_id, flip.target)}: "
                             f"{_rate(flip.before, flip.after)}{label}")
            if len(flips) > SHOWN:
                lines.append(f"  and {len(flips) - SHOWN} more")
        if lines:
            lines.append("")
    return "\n".join(lines + _footer(summary))


def _by_baseline(flips: list[Flip]) -> list[tuple[str, list[Flip]]]:
    groups: dict[str, list[Flip]] = {}
    for flip in flips:
        groups.setdefault(f"{flip.comparison.replace('_', ' ')} {flip.baseline}", []).append(flip)
    return list(groups.items())


def render_rich(summary: RunSummary, stream: TextIO, quiet: bool = False) -> None:
    """The terminal form: tables in neutral colours (red only for the word FAIL/ERROR)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(file=stream, highlight=False)
    if not quiet and summary.failures:
        console.print(f"[bold]Failures ({len(summary.failures)})[/]")
        table = Table(expand=False)
        table.add_column("Case", no_wrap=True)
        table.add_column("Result", no_wrap=True)
        shown_values = any(f.expected is not None for f in summary.failures)
        if shown_values:
            table.add_column("Expected", overflow="fold")
            table.add_column("Actual", overflow="fold")
        table.add_column("Reason", overflow="fold")
        for f in summary.failures[:SHOWN]:
            row = [escape(_case_label(summary, f.test_id, f.target, f.trial)),
                   "[red]ERROR[/]" if f.status == "error" else "[red]FAIL[/]"]
            if shown_values:
                row += [escape(f.expected or ""), escape(f.actual or "")]
            table.add_row(*row, escape(_short(f.reason, 300)))
        if len(summary.failures) > SHOWN:
            table.caption = f"and {len(summary.failures) - SHOWN} more"
        console.print(table)
    if not quiet:
        for baseline, flips in _by_baseline(summary.flips):
            console.print(f"[bold]Changed against {escape(baseline)} ({len(flips)})[/]")
            table = Table()
            table.add_column("Case", no_wrap=True)
            table.add_column("Change", no_wrap=True)
            table.add_column("Regression label")
            for flip in flips[:SHOWN]:
                colour = "red" if flip.after < flip.before else "green"
                table.add_row(escape(_case_label(summary, flip.test_id, flip.target)),
                              f"[{colour}]{_rate(flip.before, flip.after)}[/]",
                              flip.label or "[dim]not labelled on its own[/]")
            if len(flips) > SHOWN:
                table.caption = f"and {len(flips) - SHOWN} more"
            console.print(table)
    if not quiet and (summary.failures or summary.flips):
        console.print()
    for line in _footer(summary):
        console.print(escape(line))


def print_run_summary(summary: RunSummary, fmt: str, quiet: bool, stream: TextIO) -> None:
    if fmt == "none":
        return
    if fmt == "json":
        print(json.dumps(summary.as_json(), indent=None if quiet else 2, ensure_ascii=False), file=stream)
    elif stream.isatty():
        render_rich(summary, stream, quiet)
    else:
        print(render_plain(summary, quiet), file=stream)

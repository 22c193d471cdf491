"""A short Markdown summary of one run, for ``$GITHUB_STEP_SUMMARY`` (``run --summary PATH``).

The verdict first (the same words as the exit code), then pass rates per
target, every check with its numbers, and the failing cases with their reasons.
The file is appended to, as GitHub expects of step summaries: several runs in
one job each add their section.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.store.connection import connect
from eval_pipelines.store.partition import Partition

VERDICTS = {
    ExitCode.OK: "passed",
    ExitCode.GATE_FAILED: "gate failed",
    ExitCode.REGRESSION: "regressed against the baseline",
    ExitCode.ALL_ERRORS: "every case ended in an error",
    ExitCode.INVALID_INPUT: "invalid input",
}
MAX_FAILURES = 20


@dataclass(frozen=True)
class CheckOutcome:
    name: str
    passed: bool
    description: str
    skipped: bool = False  # nothing to check (no thresholds, no baseline): neither pass nor fail


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def summary_markdown(db_path: str, partition: Partition, checks: list[CheckOutcome], code: ExitCode) -> str:
    # The skill as shipped (with_skill); the baseline without it is in the reports' configurations section.
    where = "eval_date = ? AND skill_version = ? AND configuration = 'with_skill'"
    params = [partition.eval_date, partition.skill_version]
    with connect(db_path, read_only=True) as con:
        per_target = con.execute(
            f"""SELECT target, count(DISTINCT test_id), count(*),
                       count(*) FILTER (WHERE verdict = 'pass'),
                       count(*) FILTER (WHERE status = 'graded' AND verdict <> 'pass'),
                       count(*) FILTER (WHERE status = 'error'),
                       count(*) FILTER (WHERE status NOT IN ('graded', 'error'))
                FROM test_results WHERE {where} GROUP BY target ORDER BY target""", params).fetchall()
        rates = dict(con.execute(f"SELECT target, value FROM metrics WHERE {where} AND metric = 'pass_rate'",
                                 params).fetchall())
        failing = con.execute(
            f"""SELECT test_id, target, trial, status, coalesce(verdict, ''), reason FROM test_results
                WHERE {where} AND status IN ('graded', 'error') AND coalesce(verdict, '') <> 'pass'
                ORDER BY target, test_id, trial""", params).fetchall()
    mark = "✅" if code == ExitCode.OK else "❌"
    lines = [f"## {mark} {partition.skill_version}: {VERDICTS[code]}", "",
             f"Evaluated {partition.eval_date}; exit code {int(code)}.", "",
             "| target | cases | trials | passed | failed | errors | not counted | pass rate |",
             "|---|---|---|---|---|---|---|---|"]
    for target, cases, trials, passed, failed, errors, other in per_target:
        rate = rates.get(target)
        shown = "n/a" if rate is None else f"{rate:.1%}"
        lines.append(f"| {_cell(target)} | {cases} | {trials} | {passed} | {failed} | {errors} | {other} | {shown} |")
    if checks:
        lines += ["", "**Checks**", ""]
        lines += [f"- {'⏭️' if c.skipped else '✅' if c.passed else '❌'} `{c.name}`: {_cell(c.description)}"
                  for c in checks]
    if failing:
        lines += ["", f"**Failing cases ({len(failing)})**", ""]
        lines += [f"- `{_cell(t)}` [{_cell(g)}] trial {k}: {s} {v}: {_cell(r)[:300]}".replace("  ", " ")
                  for t, g, k, s, v, r in failing[:MAX_FAILURES]]
        if len(failing) > MAX_FAILURES:
            lines.append(f"- ... and {len(failing) - MAX_FAILURES} more")
    return "\n".join(lines) + "\n"


def append_summary(path: Path, markdown: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as out:
        out.write(markdown + "\n")

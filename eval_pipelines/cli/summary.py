"""The table of skill versions a command prints after it evaluated them (``run``, ``demo``, ``grades import``)."""

from __future__ import annotations

from typing import Sequence


def print_summary(db_path: str, keys: Sequence[str], eval_date: str) -> None:
    from eval_pipelines.store.connection import connect

    with connect(db_path) as con:
        rows = con.execute(
            """
            SELECT r.skill_version,
                   count(DISTINCT r.test_id) AS cases,
                   count(*) AS trials,
                   count(*) FILTER (WHERE r.verdict = 'pass') AS passed,
                   count(*) FILTER (WHERE r.status = 'error') AS errors,
                   count(*) FILTER (WHERE r.status = 'not_evaluated') AS not_evaluated,
                   max(m.value) AS pass_rate
            FROM test_results r
            LEFT JOIN metrics m ON m.eval_date = r.eval_date AND m.skill_version = r.skill_version
                 AND m.target = '*' AND m.metric = 'pass_rate' AND m.configuration = 'with_skill'
            WHERE r.eval_date = ? AND list_contains(?, r.skill_version) AND r.configuration = 'with_skill'
            GROUP BY r.skill_version ORDER BY r.skill_version
            """,
            [eval_date, list(keys)],
        ).fetchall()
    print(f"\n{'skill version':<32} {'cases':>5} {'trials':>6} {'passed':>6} {'errors':>6} "
          f"{'not eval.':>9} {'pass rate':>9}")
    for key, cases, trials, passed, errors, not_evaluated, rate in rows:
        shown = "n/a" if rate is None else f"{rate:.0%}"
        print(f"{key:<32} {cases:>5} {trials:>6} {passed:>6} {errors:>6} {not_evaluated:>9} {shown:>9}")
    print("(pass rate = passed / (graded + errors); not-evaluated cases count as neither)")
    print(f"\nDuckDB: {db_path}")




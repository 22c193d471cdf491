"""``eval-pipelines grades export|import``: the human review queue (seed 003 ``human`` grader)."""

from __future__ import annotations

import argparse
import os
from datetime import datetime, timezone
from pathlib import Path

from eval_pipelines.cli.options import EXIT_OK, project_paths
from eval_pipelines.cli.summary import print_summary


def cmd_grades_export(args: argparse.Namespace) -> int:
    from eval_pipelines.grading.reviews import queue_rows, write_csv, write_html
    from eval_pipelines.store.connection import connect

    db_path = project_paths(Path(args.root), args.db).db_path
    with connect(db_path) as con:
        eval_date = args.date or con.execute("SELECT max(eval_date) FROM grades").fetchone()[0]
        pending = con.execute(
            """
            SELECT g.skill_version, g.test_id, g.target, g.trial, g.details, o.output, c.input
            FROM grades g
            JOIN model_outputs o USING (eval_date, skill_version, test_id, target, trial, configuration)
            JOIN test_cases c USING (eval_date, skill_version, test_id)
            WHERE g.status = 'pending_human' AND g.eval_date = ?
              AND (? IS NULL OR g.skill_version = ?)
            ORDER BY g.skill_version, g.test_id, g.target, g.trial
            """,
            [eval_date, args.skill_version, args.skill_version],
        ).df()
    rows = queue_rows(pending)
    out = Path(args.out)
    write_csv(rows, out)
    print(f"wrote {len(rows)} output(s) waiting for review to {out}")
    if args.html:
        write_html(rows, Path(args.html))
        print(f"wrote the review form to {args.html}")
    return EXIT_OK


def cmd_grades_import(args: argparse.Namespace) -> int:
    import pandas as pd

    from eval_pipelines.grading.reviews import read_ratings
    from eval_pipelines.pipeline.stages import StageContext, run_stages
    from eval_pipelines.store.connection import Partition, connect, upsert_ratings

    root = Path(args.root).resolve()
    paths = project_paths(root, args.db)
    db_path = paths.db_path
    ratings = read_ratings(Path(args.file))
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    frame = pd.DataFrame([{**r.__dict__, "imported_at": now} for r in ratings])
    with connect(db_path) as con:
        written = upsert_ratings(con, frame)
        latest = {key: con.execute("SELECT max(eval_date) FROM model_outputs WHERE skill_version = ?",
                                   [key]).fetchone()[0]
                  for key in sorted({r.skill_version for r in ratings})}
    print(f"imported {written} rating(s) for {', '.join(latest) or 'no skill version'}")
    if args.regrade:
        for key, eval_date in latest.items():
            if eval_date is None:
                continue
            # The stages after the model phase, as a Dagster re-run of `grades` and downstream does.
            ctx = StageContext(partition=Partition(eval_date, key), run_id=f"regrade-{now:%Y%m%dT%H%M%S}",
                               paths=paths, report_root=root / "reports",
                               env=lambda names: {n: os.environ.get(n) for n in names})
            for _ in run_stages(ctx, {"grades", "test_results", "metrics", "regression_report", "eval_report"}):
                pass
            print(f"re-graded {key} ({eval_date})")
        print_summary(db_path, list(latest), max(d for d in latest.values() if d) if any(latest.values()) else "")
    return EXIT_OK


def add_grades_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("grades", parents=[common], help="human review: export the queue, import ratings")
    grades_sub = p.add_subparsers(dest="grades_command", required=True)
    q = grades_sub.add_parser("export", parents=[common], help="write outputs waiting for human review")
    q.add_argument("--out", default="review-queue.csv", help="CSV to fill in (default review-queue.csv)")
    q.add_argument("--html", help="also write a self-contained HTML review form")
    q.add_argument("--skill-version", help="only this name@version")
    q.add_argument("--date", help="evaluation date (default: the latest)")
    q.add_argument("--db", help="DuckDB path")
    q.set_defaults(func=cmd_grades_export)
    q = grades_sub.add_parser("import", parents=[common], help="store ratings from a filled-in review CSV")
    q.add_argument("file")
    q.add_argument("--db", help="DuckDB path")
    q.add_argument("--regrade", action="store_true", help="re-grade the affected partitions now")
    q.set_defaults(func=cmd_grades_import)

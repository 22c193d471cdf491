"""``eval-pipelines export --format parquet|csv --out DIR [--skill NAME ...] [--db PATH]``.

Exit codes: 0 written; 2 invalid input (no database, a skill with no rows).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from eval_pipelines.analysis.exit_codes import ExitCode


def cmd_export(args: argparse.Namespace) -> int:
    from eval_pipelines.pipeline.project import ProjectPaths
    from eval_pipelines.store.export import export_store

    db_path = ProjectPaths.from_root(Path(args.root).resolve(),
                                     args.db or os.environ.get("EVAL_PIPELINES_DB")).db_path
    from eval_pipelines.store.postgres import is_postgres

    if not db_path.startswith("md:") and not is_postgres(db_path) and not Path(db_path).is_file():
        print(f"{db_path}: no such database (run an evaluation first, or pass --db)")
        return ExitCode.INVALID_INPUT
    result = export_store(db_path, Path(args.out), args.format, args.skill or ())
    if args.skill and not result.written.get("test_results"):
        print(f"--skill: no results for {', '.join(args.skill)} in {db_path}")
        return ExitCode.INVALID_INPUT
    for name, rows in result.written.items():
        print(f"{name}: {rows} rows")
    for name, why in result.skipped.items():
        print(f"{name}: skipped ({why})")
    print(f"wrote {len(result.written)} tables and views as {args.format} to {args.out}")
    return ExitCode.OK


def add_export_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("export", parents=[common],
                       help="write every table and view as Parquet or CSV (Hive-partitioned by date and skill version)")
    p.add_argument("--format", choices=("parquet", "csv"), default="parquet")
    p.add_argument("--out", required=True, metavar="DIR", help="folder to write (one subfolder or file per table)")
    p.add_argument("--skill", action="append", metavar="NAME[@VERSION]", help="only this skill (repeatable)")
    p.add_argument("--db", help="DuckDB path (default .data/eval_pipelines.duckdb)")
    p.set_defaults(func=cmd_export)

"""``eval-pipelines export --format parquet|csv|skill-creator --out DIR [--skill NAME ...] [--db PATH]``.

``skill-creator`` writes skill-creator's ``benchmark.json`` (reports/skill_creator.py): ``DIR/benchmark.json``
for one skill version, else ``DIR/<skill>@<version>/benchmark.json`` for each.

Exit codes: 0 written; 2 invalid input (no database, a skill with no rows).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.cli.options import epilog


def cmd_export(args: argparse.Namespace) -> int:
    from eval_pipelines.pipeline.project import ProjectPaths
    from eval_pipelines.store.export import export_store

    db_path = ProjectPaths.from_root(Path(args.root).resolve(),
                                     args.db or os.environ.get("EVAL_PIPELINES_DB")).db_path
    from eval_pipelines.store.postgres import is_postgres

    if not db_path.startswith("md:") and not is_postgres(db_path) and not Path(db_path).is_file():
        print(f"{db_path}: no such database (run an evaluation first, or pass --db)")
        return ExitCode.INVALID_INPUT
    if args.format == "skill-creator":
        return _export_benchmarks(db_path, Path(args.out), args.skill or ())
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


def _export_benchmarks(db_path: str, out: Path, skills: list[str] | tuple[str, ...]) -> int:
    import json

    from eval_pipelines.reports.skill_creator import load_benchmark, skill_versions
    from eval_pipelines.store.connection import connect

    with connect(db_path, read_only=True) as con:
        versions = skill_versions(con, skills)
        if not versions:
            print(f"--skill: no results for {', '.join(skills)} in {db_path}" if skills else f"{db_path}: no results")
            return ExitCode.INVALID_INPUT
        benchmarks = {sv: load_benchmark(con, sv) for sv in versions}
    for sv, benchmark in benchmarks.items():
        file = out / "benchmark.json" if len(benchmarks) == 1 else out / sv.replace("/", "_") / "benchmark.json"
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(json.dumps(benchmark, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{sv}: {len(benchmark['runs'])} runs -> {file}")
    return ExitCode.OK


def add_export_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("export", parents=[common],
                       help="write every table and view as Parquet or CSV (Hive-partitioned by date and skill version)",
                       epilog=epilog([("eval-pipelines export --out exports/", "every table and view as Parquet"),
                                      ("eval-pipelines export --format csv --out exports/ --skill calculator",
                                       "one skill's rows as CSV")],
                                     (ExitCode.OK, ExitCode.INVALID_INPUT, ExitCode.DATABASE_BUSY)),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--format", choices=("parquet", "csv", "skill-creator"), default="parquet",
                   help="skill-creator: its benchmark.json per skill version (docs/skill-creator.md)")
    p.add_argument("--out", required=True, metavar="DIR", help="folder to write (one subfolder or file per table)")
    p.add_argument("--skill", action="append", metavar="NAME[@VERSION]", help="only this skill (repeatable)")
    p.add_argument("--db", help="DuckDB path (default .data/eval_pipelines.duckdb)")
    p.set_defaults(func=cmd_export)

"""``eval-pipelines report`` and the reports written on every materialisation.

    eval-pipelines report --skill NAME [--version V] [--against BASELINE|none]
                          [--format json|md|html|all] [--out PATH] [--date YYYY-MM-DD] [--db PATH]

Exit codes: 0 the report was written (a report is not a gate: failing cases
still exit 0); 2 invalid input (unknown skill, version, baseline or date, no
database), printed as one line.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.cli.options import epilog
from eval_pipelines.reports import NO_BASELINE

EXIT_OK, EXIT_INVALID = 0, 2


def _install_views(db_path: str) -> None:
    """Best effort: the report command leaves the documented views in the database."""
    from eval_pipelines.store.views import ensure_views
    from eval_pipelines.store.connection import connect

    try:
        with connect(db_path) as con:
            ensure_views(con)
    except Exception as exc:  # noqa: BLE001 - a report must not fail because a view could not be created
        print(f"warning: could not install the SQL views: {exc}", file=sys.stderr)


def _default_db(root: str, db: str | None) -> str:
    if db:
        return db
    if os.environ.get("EVAL_PIPELINES_DB"):
        return os.environ["EVAL_PIPELINES_DB"]
    return str(Path(root).resolve() / ".data" / "eval_pipelines.duckdb")


def _output_dir(data: Any) -> str | None:
    """The suite's ``reporting.output_dir`` (seed 003), relative to the project root."""
    reporting = data.run.reporting if isinstance(data.run.reporting, dict) else {}
    return reporting.get("output_dir") or None


def cmd_report(args: argparse.Namespace) -> int:
    # Imported here: the report machinery (DuckDB, the grader registry) is not
    # needed to build the command line's parser, which every command does.
    from eval_pipelines.reports.data import ReportError, load_report
    from eval_pipelines.reports.files import FORMAT_ALIASES, _formats_for, renderer, report_filename, write_report

    root = getattr(args, "root", None) or os.environ.get("EVAL_PIPELINES_HOME", ".")
    db_path = _default_db(root, args.db)
    try:
        data = load_report(db_path, args.skill, version=args.version, eval_date=args.date, against=args.against)
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    # Without --format, the suite's reporting.format (seed 003) decides, else all three.
    formats = (_formats_for(data, None) if args.format is None
               else ["json", "md", "html"] if args.format == "all" else [FORMAT_ALIASES[args.format]])
    if args.out == "-":
        if len(formats) > 1:
            print("error: --out - (standard output) needs a single --format", file=sys.stderr)
            return EXIT_INVALID
        sys.stdout.write(renderer(formats[0])(data))
        return EXIT_OK
    explicit = args.against is not None and args.against.strip().lower() != NO_BASELINE
    for fmt in formats:
        if args.out and len(formats) == 1:
            out = Path(args.out)
            if out.is_dir():
                out = out / report_filename(data, fmt, explicit)
        else:
            folder = Path(args.out) if args.out else Path(root) / (_output_dir(data) or "reports")
            out = folder / report_filename(data, fmt, explicit)
        try:
            write_report(data, fmt, out)
        except OSError as exc:
            print(f"error: cannot write {out}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_INVALID
        print(f"wrote {out}")
    _install_views(db_path)
    return EXIT_OK


def add_report_parser(sub: Any, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``report`` on the CLI's subparsers (``sub``), sharing ``--root`` (``common``)."""
    p = sub.add_parser("report", parents=[common],
                       help="write the report of a skill version's run, compared with its baseline "
                            "(JSON, Markdown or self-contained HTML)",
                       epilog=epilog([
                           ("eval-pipelines report --skill calculator", "the latest version's report, all formats"),
                           ("eval-pipelines report --skill calculator --version 1.1.0 --against 1.0.0 --format md "
                            "--out -", "Markdown on standard output, against a chosen baseline")],
                           (ExitCode.OK, ExitCode.INVALID_INPUT, ExitCode.DATABASE_BUSY)),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--skill", required=True, help="skill name (front matter `name`)")
    p.add_argument("--version", help="skill version (default: the latest with results, semantic-version order)")
    p.add_argument("--against", metavar="BASELINE",
                   help="version to compare with (default: the suite's pinned baseline, else the previous "
                        f"version with results; `{NO_BASELINE}`: no comparison; the same version: its "
                        "previous evaluation date)")
    p.add_argument("--format", choices=["json", "md", "markdown", "html", "all"], default=None,
                   help="report format (default: the suite's reporting.format, else all three)")
    p.add_argument("--out", help="file to write (`-` for standard output; a folder with --format all); "
                                 "default reports/<skill>-<version>.<ext> (-vs-<baseline> added with --against)")
    p.add_argument("--date", help="evaluation date YYYY-MM-DD (default: the version's latest)")
    p.add_argument("--db", help="DuckDB path (default .data/eval_pipelines.duckdb)")
    p.set_defaults(func=cmd_report)
    return p


def main(argv: list[str] | None = None) -> int:
    """``python -m eval_pipelines.cli.report`` until the main CLI registers ``report``."""
    parser = argparse.ArgumentParser(prog="eval-pipelines")
    parser.add_argument("--root", default=None)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--root", default=argparse.SUPPRESS)
    add_report_parser(parser.add_subparsers(dest="command", required=True), common)
    args = parser.parse_args(argv)
    args.root = args.root or os.environ.get("EVAL_PIPELINES_HOME", ".")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())

"""``eval-pipelines``: validate suites, run one without Dagster, or run the demo through Dagster.

Exit codes: see :class:`eval_pipelines.analysis.exit_codes.ExitCode` (0 success, 1 gate failed,
2 invalid input, 3 regression, 4 every case an error).
Every expected problem is printed as ``file[:line]: field.path: message``; a
traceback is a bug.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
import textwrap
from typing import Sequence

from eval_pipelines.cli.options import (EXIT_BUSY, EXIT_FAILED, EXIT_INVALID, EXIT_OK, StderrWarnings,
                                        add_project_options, common_parser, epilog, package_version)
from eval_pipelines.pipeline.collector import collection_paused
from eval_pipelines.suite.errors import SpecErrors

__all__ = ["EXIT_BUSY", "EXIT_FAILED", "EXIT_INVALID", "EXIT_OK", "build_parser", "main"]


DESCRIPTION = ("Evaluate AI skills: validate suites, run one skill version without Dagster, or run the "
               "bundled demo through Dagster. Every result lands in DuckDB; reports go to reports/<date>/.")
EXAMPLES = [
    ("eval-pipelines demo", "evaluate the bundled skills through Dagster (no network)"),
    ("eval-pipelines validate skills/calculator/v1.1.0", "check a skill package without running it"),
    ("eval-pipelines run skills/calculator/v1.1.0", "evaluate one skill version; failures and flips at the end"),
    ("eval-pipelines report --skill calculator --format html", "the HTML report of the latest run"),
    ("eval-pipelines COMMAND --help", "a command's own options, examples and exit codes"),
]


def build_parser() -> argparse.ArgumentParser:
    """Every command registers itself from its own module (``add_<command>_parser``)."""
    from eval_pipelines.cli.convert import add_convert_parser
    from eval_pipelines.cli.demo import add_demo_parser
    from eval_pipelines.cli.demo_model import add_demo_model_parser
    from eval_pipelines.cli.export import add_export_parser
    from eval_pipelines.cli.grades import add_grades_parser
    from eval_pipelines.cli.redteam import add_redteam_parser
    from eval_pipelines.cli.report import add_report_parser
    from eval_pipelines.cli.run import add_run_parser
    from eval_pipelines.cli.schema import add_schema_parser
    from eval_pipelines.cli.validate import add_validate_parser

    parser = argparse.ArgumentParser(prog="eval-pipelines", description=textwrap.fill(DESCRIPTION, 79), epilog=epilog(EXAMPLES),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    add_project_options(parser)
    common = common_parser()  # the same options after the command name (`eval-pipelines demo --root X`)
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (add_validate_parser, add_run_parser, add_demo_parser, add_grades_parser, add_schema_parser,
                add_convert_parser, add_report_parser, add_export_parser, add_demo_model_parser,
                add_redteam_parser):
        add(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    finally:
        if argv is not None:
            # Called in a process that goes on (tests, scripts): what the command froze
            # (pipeline/collector.py) goes back to the collector. The console command
            # (argv None) ends here, and skips the full collection that unfreezing brings.
            gc.unfreeze()


def _main(argv: Sequence[str] | None) -> int:
    with collection_paused():  # every command's module is imported here
        parser = build_parser()
    args = parser.parse_args(argv)
    args.root = args.root or os.environ.get("EVAL_PIPELINES_HOME", ".")
    if args.allow_unsandboxed_code:  # read by the sandbox, also in Dagster runs started from here
        os.environ["EVAL_PIPELINES_ALLOW_UNSANDBOXED_CODE"] = "1"
    from eval_pipelines.store.connection import DatabaseBusy

    store_log = logging.getLogger("eval_pipelines.store")  # "waiting for a busy database" goes to stderr
    if not store_log.handlers:
        store_log.addHandler(StderrWarnings(logging.WARNING))
        store_log.propagate = False
    try:
        return args.func(args)
    except SpecErrors as exc:
        print(exc)
        return EXIT_INVALID
    except DatabaseBusy as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BUSY
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

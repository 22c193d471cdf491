"""``eval-pipelines validate PATH ...``: check suite files, datasets and skill packages without running them."""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path

from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.cli.options import EXIT_INVALID, EXIT_OK, epilog, project_paths
from eval_pipelines.suite.errors import SpecErrors


def cmd_validate(args: argparse.Namespace) -> int:
    from eval_pipelines.formats.datasets import DATASET_SUFFIXES, read_test_rows
    from eval_pipelines.formats.loader import load_skill, load_suite
    from eval_pipelines.suite.paths import PathPolicy

    paths = project_paths(Path(args.root), None)
    problems = 0
    for raw in args.paths:
        path = Path(raw)
        try:
            if not path.exists():
                raise SpecErrors.single(path, "no such file or folder")
            if path.is_dir() or path.suffix.lower() == ".zip":
                loaded = load_skill(path, datasets_dir=paths.datasets_dir, extract_dir=paths.work_dir,
                                    project_targets=paths.project_targets())
                warnings, detail = loaded.warnings, f"{loaded.package.key}: {len(loaded.suite.tests)} tests"
            elif path.suffix.lower() in (".jsonl", ".csv") and not args.as_suite:
                rows = read_test_rows(path)
                warnings, detail = [], f"{len(rows.data)} rows"
            elif path.suffix.lower() in DATASET_SUFFIXES:
                # The policy `run` reads a bare suite file with (cli/run_source.load_bare_suite): files
                # beside it or below, and the datasets folder; so validate says ok only when run can.
                suite, warnings = load_suite(path, PathPolicy(allowed_roots=(path.parent.resolve(),),
                                                              datasets_dir=paths.datasets_dir))
                detail = f"{suite.format}: {len(suite.tests)} tests"
            else:
                raise SpecErrors.single(path, f"unsupported file type {path.suffix!r}",
                                        expected="a skill folder, .zip, .yaml, .json, .jsonl or .csv")
        except SpecErrors as exc:
            problems += len(exc.errors)
            for error in exc.errors:
                print(error)
            continue
        for warning in warnings:
            print(f"warning: {warning}", file=sys.stderr)
        if not args.quiet:
            print(f"ok: {path}: {detail}")
    return EXIT_INVALID if problems else EXIT_OK


VALIDATE_EXAMPLES = [
    ("eval-pipelines validate skills/calculator/v1.1.0", "a skill package: its SKILL.md, suite and targets"),
    ("eval-pipelines validate evals/quiz.yaml datasets/cases.jsonl", "suite files and datasets, several at once"),
    ("eval-pipelines validate -q skills/*/*", "only the problems (for CI)"),
]


def add_validate_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("validate", parents=[common], help="check suite files, datasets and skill packages",
                       description=textwrap.fill("Check suite files, datasets and skill packages without running "
                                                 "anything: every problem on one line (file:line: field: "
                                                 "message).", 79),
                       epilog=epilog(VALIDATE_EXAMPLES, (ExitCode.OK, ExitCode.INVALID_INPUT)),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="a skill folder or .zip, a suite file (.yaml, .json) or a dataset (.jsonl, .csv)")
    p.add_argument("--as-suite", action="store_true", help="treat .jsonl/.csv as a sidecar suite")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="print only problems (and warnings on standard error), not an 'ok:' line per path")
    p.set_defaults(func=cmd_validate)

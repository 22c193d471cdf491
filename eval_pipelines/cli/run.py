"""``eval-pipelines run PATH``: one skill package or suite file through the same stages and checks as the Dagster job, without Dagster."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import re
import sys
import textwrap
import time
from contextlib import redirect_stdout
from datetime import datetime, timezone
from pathlib import Path

from eval_pipelines.cli.options import EXIT_INVALID, StderrWarnings, epilog, project_paths, report_root
from eval_pipelines.cli.progress import model_phase_progress
from eval_pipelines.cli.run_summary import FORMATS, print_run_summary, read_summary
from eval_pipelines.pipeline.collector import collection_paused
from eval_pipelines.suite.errors import SpecErrors


def cmd_run(args: argparse.Namespace) -> int:
    """The same stage list and checks as the Dagster job, in a plain loop."""
    with collection_paused():  # the evaluation core's modules
        from eval_pipelines.pipeline.checks import checks_for
        from eval_pipelines.pipeline.stages import RunOptions, StageContext, run_stages
        from eval_pipelines.store.connection import connect
        from eval_pipelines.store.partition import Partition

    started = time.monotonic()
    root = Path(args.root).resolve()
    paths = project_paths(root, args.db)
    from eval_pipelines.cli.run_source import CheckOutcome, finish_run, load_run_source

    try:  # everything is validated before any model is paid for
        loaded = load_run_source(Path(args.skill), paths, Path.cwd(), args.target)
        filtered_out = filter_cases(loaded.suite, args.filter_pattern, args.filter_first_n)
        from eval_pipelines.pipeline.blind import preflight  # triggers and blind comparison settings
        from eval_pipelines.store.tables import StoredSuite

        preflight(StoredSuite(loaded.suite, loaded.targets, loaded.package.root), args.compare_blind)
    except SpecErrors as exc:
        print(exc)
        return EXIT_INVALID
    if args.trials is not None:  # wins over the suite's own count (and its cases')
        loaded = with_trials(loaded, args.trials)
    if args.configurations is not None:  # wins over the format's default and the package's setting
        loaded = with_configurations(loaded, args.configurations)
    now = datetime.now(timezone.utc)
    partition = Partition(now.date().isoformat(), loaded.package.key)
    # The stages' warnings (the suite's load warnings, which also land in `suites`;
    # model calls that ended as error rows) go to standard error, one line each.
    log = logging.getLogger("eval_pipelines.cli")
    if not log.handlers:
        log.addHandler(StderrWarnings(logging.WARNING))
        log.propagate = False
    # A random suffix: two runs started in the same second (a script, parallel jobs) keep their own id.
    ctx = StageContext(partition=partition, run_id=f"cli-{now:%Y%m%dT%H%M%S}-{os.urandom(3).hex()}", paths=paths,
                       report_root=report_root(root), env=lambda names: {n: os.environ.get(n) for n in names},
                       options=RunOptions(use_cache=not args.no_cache, concurrency=args.concurrency,
                                          compare_blind=args.compare_blind), log=log)
    ctx.memo["loaded"] = loaded
    outcomes: list[CheckOutcome] = []
    written: list[str] = []
    # With --format json standard output holds the JSON alone: every other line goes to standard error.
    human = sys.stderr if args.format == "json" else sys.stdout
    with redirect_stdout(human):
        with model_phase_progress(loaded.suite, ctx.options, enabled=not args.no_progress):
            for stage, result in run_stages(ctx):
                written += [str(v) for k, v in result.metadata.items()
                            if k.startswith("report_") and k != "report_summary"]
                stop = False
                for check in checks_for(stage.name):
                    outcome = check.evaluate(ctx)
                    outcomes.append(CheckOutcome(check.name, outcome.passed, outcome.description, outcome.skipped))
                    if not outcome.passed:
                        label = "gate failed" if check.stage == "metrics" else f"check {check.name} failed"
                        print(f"{label}: {outcome.description}")
                        stop = stop or check.blocking
                if stop:
                    print("a blocking gate failed: the stages after it did not run")
                    break
        gc.freeze()  # the process ends soon: its last collection need not walk what the run kept
        if written and not args.quiet:  # where they went: reports/<date>, or the suite's reporting.output_dir
            print(f"Reports: {Path(written[0]).parent} ({', '.join(Path(w).name for w in written)})")
        if not args.quiet:
            print(f"DuckDB: {paths.db_path}")
        with connect(paths.db_path, read_only=True) as con:  # one open (~35 ms) for the exit code and the summary
            code = finish_run(paths.db_path, partition, outcomes, args.junit, args.summary, con=con)
            summary = read_summary(paths.db_path, partition.skill_version, partition.eval_date,
                                   duration_s=time.monotonic() - started, filtered_out=filtered_out, con=con)
    summary.exit_code = int(code)
    summary.checks_failed = [o.name for o in outcomes if not o.passed]
    if args.format == "table" and not args.quiet:
        print()
    print_run_summary(summary, args.format, args.quiet, sys.stdout)
    return code


def filter_cases(suite, pattern: str | None, first_n: int | None) -> int:  # noqa: ANN001 - a Suite
    """Keep the cases whose id, name or description matches ``pattern`` (a regular expression,
    searched), then the first ``first_n`` of them (promptfoo's ``--filter-pattern`` and
    ``--filter-first-n``, applied in that order); a kept conversation turn keeps the turns it
    follows (``after``). Returns how many cases were left out."""
    if pattern is None and first_n is None:
        return 0
    kept = list(suite.tests)
    if pattern is not None:
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise SpecErrors.single("--filter-pattern", f"{pattern!r} is not a regular expression: {exc}",
                                    expected="a Python regular expression, e.g. 'inches|celsius'") from None
        kept = [c for c in kept if any(regex.search(text) for text in (c.id, c.name, c.description) if text)]
    if first_n is not None:
        kept = kept[:first_n]
    wanted = {c.id for c in kept}
    by_id = {c.id: c for c in suite.tests}
    pending = [c.id for c in kept]
    while pending:  # the turns a kept turn follows
        for earlier in by_id[pending.pop()].after:
            if earlier in by_id and earlier not in wanted:
                wanted.add(earlier)
                pending.append(earlier)
    before = len(suite.tests)
    suite.tests = [c for c in suite.tests if c.id in wanted]
    if not suite.tests:
        raise SpecErrors.single("--filter-pattern" if pattern is not None else "--filter-first-n",
                                f"no case of the {before} is left to run",
                                expected="a pattern matching a case id, name or description")
    return before - len(suite.tests)


def with_trials(loaded, trials: int):  # noqa: ANN001, ANN201
    """The loaded package with every case run ``trials`` times (``run --trials N``)."""
    from dataclasses import replace

    suite = loaded.suite
    execution = suite.execution.model_copy(update={"trials": suite.execution.trials.model_copy(update={"count": trials})})
    tests = [case.model_copy(update={"trials": None}) for case in suite.tests]
    return replace(loaded, suite=suite.model_copy(update={"execution": execution, "tests": tests}))


def with_configurations(loaded, configurations: list[str]):  # noqa: ANN001, ANN201
    """The loaded package run in these configurations (``run --configurations``)."""
    from dataclasses import replace

    suite = loaded.suite
    execution = suite.execution.model_copy(update={"configurations": configurations})
    return replace(loaded, suite=suite.model_copy(update={"execution": execution}))


def _configurations(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    known = ("with_skill", "without_skill")
    if (not names or any(n not in known for n in names) or len(set(names)) != len(names)
            or "with_skill" not in names):
        raise argparse.ArgumentTypeError(
            f"expected with_skill,without_skill (a baseline without the skill) or with_skill (none); got {text!r}")
    return names


RUN_EXAMPLES = [
    ("eval-pipelines run skills/calculator/v1.1.0", "evaluate one skill version; the summary names failures and flips"),
    ("eval-pipelines run evals/quiz.yaml --target local", "a bare suite file, against one target"),
    ("eval-pipelines run skills/calculator/v1.1.0 --filter-pattern 'tc-00[12]'",
     "only the cases whose id, name or description matches"),
    ("eval-pipelines run skills/calculator/v1.1.0 --filter-first-n 3 -q", "the first 3 cases, tallies only"),
    ("eval-pipelines run skills/calculator/v1.1.0 --format json > run.json", "the summary as JSON for a script"),
]


def _trial_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 1000:
        raise argparse.ArgumentTypeError(f"expected an integer from 1 to 1000, got {text!r}")
    return value


def add_run_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("run", parents=[common], help="run one skill package without Dagster (same engine and tables)",
                       description=textwrap.fill(
                           "Run one skill package or suite file through the same stages and checks as the Dagster "
                           "job, then print what failed and what changed against the baseline.", 79),
                       epilog=epilog(RUN_EXAMPLES), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("skill", metavar="PATH", help="skill folder, .zip, or a suite file of any supported format")
    p.add_argument("--target", action="append", help="target name (repeatable); default: the suite's")
    p.add_argument("--db", help="DuckDB path (default .data/eval_pipelines.duckdb)")
    p.add_argument("--concurrency", type=int, help="override every target's concurrency")
    p.add_argument("--trials", type=_trial_count, metavar="N",
                   help="run every case N times (wins over the suite's trials; evals.json: see docs/skill-creator.md)")
    p.add_argument("--configurations", type=_configurations, metavar="LIST",
                   help="with_skill,without_skill: also run every case without the skill installed (the "
                        "baseline of the skill's uplift; default for Agent Skills packages); with_skill: "
                        "no baseline (see docs/skill-creator.md)")
    p.add_argument("--no-cache", action="store_true", help="call every target again (no response cache)")
    p.add_argument("--compare-blind", metavar="BASELINE",
                   help="judge each output against BASELINE's (previous, a version, or skill@version) without "
                        "telling the judge which is which (docs/skill-creator.md, \"Blind comparison\")")
    p.add_argument("--filter-pattern", metavar="REGEX",
                   help="only run cases whose id, name or description matches this regular expression")
    p.add_argument("--filter-first-n", metavar="N", type=_positive, help="only run the first N cases (after the pattern)")
    p.add_argument("--format", choices=FORMATS, default="table",
                   help="the closing summary: table (default; plain lines when piped), json (alone on standard "
                        "output), none")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="terse: only the tallies and the duration (and failed gates), no failure table")
    p.add_argument("--no-progress", action="store_true", help="no progress bar or progress lines on standard error")
    p.add_argument("--junit", metavar="PATH", help="write JUnit XML (one testcase per case and target)")
    p.add_argument("--summary", metavar="PATH", help="append a Markdown summary (e.g. $GITHUB_STEP_SUMMARY)")
    p.set_defaults(func=cmd_run)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number of cases, 1 or more")
    return value

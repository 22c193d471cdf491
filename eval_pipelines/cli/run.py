"""``eval-pipelines run PATH``: one skill package or suite file through the same stages and checks as the Dagster job, without Dagster."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from eval_pipelines.cli.options import EXIT_INVALID, StderrWarnings, project_paths, report_root
from eval_pipelines.cli.summary import print_summary
from eval_pipelines.suite.errors import SpecErrors


def cmd_run(args: argparse.Namespace) -> int:
    """The same stage list and checks as the Dagster job, in a plain loop."""
    from eval_pipelines.pipeline.checks import checks_for
    from eval_pipelines.pipeline.stages import RunOptions, StageContext, run_stages
    from eval_pipelines.store.partition import Partition

    root = Path(args.root).resolve()
    paths = project_paths(root, args.db)
    from eval_pipelines.cli.run_source import CheckOutcome, finish_run, load_run_source

    try:  # everything is validated before any model is paid for
        loaded = load_run_source(Path(args.skill), paths, Path.cwd(), args.target)
    except SpecErrors as exc:
        print(exc)
        return EXIT_INVALID
    if args.trials is not None:  # wins over the suite's own count (and its cases')
        loaded = with_trials(loaded, args.trials)
    now = datetime.now(timezone.utc)
    partition = Partition(now.date().isoformat(), loaded.package.key)
    # The stages' warnings (the suite's load warnings, which also land in `suites`;
    # model calls that ended as error rows) go to standard error, one line each.
    log = logging.getLogger("eval_pipelines.cli")
    if not log.handlers:
        log.addHandler(StderrWarnings(logging.WARNING))
        log.propagate = False
    ctx = StageContext(partition=partition, run_id=f"cli-{now:%Y%m%dT%H%M%S}", paths=paths,
                       report_root=report_root(root), env=lambda names: {n: os.environ.get(n) for n in names},
                       options=RunOptions(use_cache=not args.no_cache, concurrency=args.concurrency), log=log)
    ctx.memo["loaded"] = loaded
    outcomes: list[CheckOutcome] = []
    written: list[str] = []
    with progress(loaded.suite, ctx.options):
        for stage, result in run_stages(ctx):
            written += [str(v) for k, v in result.metadata.items() if k.startswith("report_") and k != "report_summary"]
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
    print_summary(paths.db_path, [partition.skill_version], partition.eval_date)
    if written:  # where they went: reports/<date>, or the suite's reporting.output_dir
        print(f"Reports: {Path(written[0]).parent} ({', '.join(Path(w).name for w in written)})")
    return finish_run(paths.db_path, partition, outcomes, args.junit, args.summary)


def with_trials(loaded, trials: int):  # noqa: ANN001, ANN201
    """The loaded package with every case run ``trials`` times (``run --trials N``)."""
    from dataclasses import replace

    suite = loaded.suite
    execution = suite.execution.model_copy(update={"trials": suite.execution.trials.model_copy(update={"count": trials})})
    tests = [case.model_copy(update={"trials": None}) for case in suite.tests]
    return replace(loaded, suite=suite.model_copy(update={"execution": execution, "tests": tests}))


@contextmanager
def progress(suite, options):  # noqa: ANN001, ANN202
    """A progress bar over the model phase on a terminal (rich); nothing otherwise."""
    total = sum(len(suite.targets_for(c)) * suite.trials_for(c) for c in suite.tests)
    if not sys.stderr.isatty() or total < 20:
        yield
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.fields[errors]} errors, {task.fields[cached]} cached")]
    with Progress(*columns, transient=True) as progress:
        task = progress.add_task(suite.name, total=total, errors=0, cached=0)
        counts = {"errors": 0, "cached": 0}

        def advance(output) -> None:  # noqa: ANN001
            counts["errors"] += output.error is not None
            counts["cached"] += output.cached
            progress.update(task, advance=1, **counts)

        options.on_output = advance
        yield


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 1000:
        raise argparse.ArgumentTypeError(f"expected an integer from 1 to 1000, got {text!r}")
    return value


def add_run_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("run", parents=[common], help="run one skill package without Dagster (same engine and tables)")
    p.add_argument("skill", metavar="PATH", help="skill folder, .zip, or a suite file of any supported format")
    p.add_argument("--target", action="append", help="target name (repeatable); default: the suite's")
    p.add_argument("--db", help="DuckDB path (default .data/eval_pipelines.duckdb)")
    p.add_argument("--concurrency", type=int, help="override every target's concurrency")
    p.add_argument("--trials", type=_positive, metavar="N",
                   help="run every case N times (wins over the suite's trials; evals.json: see docs/skill-creator.md)")
    p.add_argument("--no-cache", action="store_true", help="call every target again (no response cache)")
    p.add_argument("--junit", metavar="PATH", help="write JUnit XML (one testcase per case and target)")
    p.add_argument("--summary", metavar="PATH", help="append a Markdown summary (e.g. $GITHUB_STEP_SUMMARY)")
    p.set_defaults(func=cmd_run)

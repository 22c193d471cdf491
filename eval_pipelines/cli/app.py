"""``eval-pipelines``: validate suites, run one without Dagster, or run the demo through Dagster.

Exit codes: see :class:`eval_pipelines.analysis.exit_codes.ExitCode` (0 success, 1 gate failed,
2 invalid input, 3 regression, 4 every case an error).
Every expected problem is printed as ``file[:line]: field.path: message``; a
traceback is a bug.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from datetime import datetime, timezone
from contextlib import contextmanager
from pathlib import Path
from typing import Sequence

from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.suite.errors import SpecErrors

EXIT_OK, EXIT_FAILED, EXIT_INVALID = ExitCode.OK, ExitCode.GATE_FAILED, ExitCode.INVALID_INPUT
EXIT_BUSY = ExitCode.DATABASE_BUSY


def _paths(root: Path, db: str | None):
    from eval_pipelines.pipeline.project import ProjectPaths

    return ProjectPaths.from_root(root.resolve(), db or os.environ.get("EVAL_PIPELINES_DB"))


def _report_root(root: Path) -> Path:
    """``reports/`` of the project; ``.data/reports`` when the project folder is a skill
    folder (`run .` inside it), so the reports do not become part of the skill's content."""
    return root / ".data" / "reports" if (root / "SKILL.md").is_file() else root / "reports"


def cmd_validate(args: argparse.Namespace) -> int:
    from eval_pipelines.formats.datasets import DATASET_SUFFIXES, read_test_rows
    from eval_pipelines.formats.loader import load_skill, load_suite

    paths = _paths(Path(args.root), None)
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
                suite, warnings = load_suite(path)
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


def cmd_convert(args: argparse.Namespace) -> int:
    from eval_pipelines.formats.skill_tests.loader import is_v1, v1_to_v2
    from eval_pipelines.suite.source import load_document

    source = Path(args.source)
    try:
        doc = load_document(source)
    except SpecErrors as exc:
        print(exc)
        return EXIT_INVALID
    if not is_v1(doc.data):
        print(f"{source}: not a v1 tests.json (already v2?)")
        return EXIT_INVALID
    out = Path(args.out) if args.out else source.parent / "eval" / "tests.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(v1_to_v2(doc.data), indent=2) + "\n")
    print(f"wrote {out}")
    return EXIT_OK


def _print_summary(db_path: str, keys: Sequence[str], eval_date: str) -> None:
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
                 AND m.target = '*' AND m.metric = 'pass_rate'
            WHERE r.eval_date = ? AND list_contains(?, r.skill_version)
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


def cmd_demo(args: argparse.Namespace) -> int:
    root = Path(args.root).resolve()
    db_arg = str(Path(args.db).resolve()) if args.db and not args.db.startswith("md:") else args.db
    # Dagster reads dagster.yaml from DAGSTER_HOME: the project folder holds it.
    os.environ.setdefault("DAGSTER_HOME", str(root))
    os.chdir(root)
    import dagster as dg

    from eval_pipelines.defs.partitions import partition_key_for, skill_versions
    from eval_pipelines.definitions import build_definitions, default_db_path
    from eval_pipelines.pipeline.project import discover_skill_versions
    from eval_pipelines.suite.package import partition_key_problem

    db_path = db_arg or default_db_path(str(root))
    paths = _paths(root, db_path)
    found, problems = discover_skill_versions(paths)
    for problem in problems.values():
        print(f"skipped: {problem}")
    keys = [k for k in sorted(found) if not partition_key_problem(k)]
    if not keys:
        print(f"no skill versions found in {paths.skills_dir}")
        return EXIT_INVALID
    instance = dg.DagsterInstance.get()
    registered = set(instance.get_dynamic_partitions(skill_versions.name))
    instance.add_dynamic_partitions(skill_versions.name, [k for k in keys if k not in registered])
    job = build_definitions(str(root), db_path).resolve_job_def("evaluate_skill_version")
    today = datetime.now(timezone.utc).date()
    failed = []
    for key in keys:
        print(f"evaluating {key} ...", flush=True)
        result = job.execute_in_process(
            partition_key=partition_key_for(key, today),
            instance=instance,
            raise_on_error=False,
            tags={"eval/trigger": "demo", "eval/skill_version": key},
            # Step-by-step lines and failures stay in the run's event log (the UI shows them); a
            # failure is printed below in one line, without the console logger's stack trace.
            run_config={"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}},
        )
        for evaluation in result.get_asset_check_evaluations():
            if (evaluation.description or "").startswith("skipped:"):  # nothing to check (a warning)
                print(f"  check {evaluation.check_name} {evaluation.description}")
            elif not evaluation.passed:
                print(f"  check {evaluation.check_name} failed: {evaluation.description or ''}".rstrip())
        # A run whose evaluation failed a check fails on purpose (red in the Runs list);
        # only a run that failed for another reason is a failure of the demo.
        verdict = instance.get_run_by_id(result.run_id).tags.get("eval/verdict")
        if not result.success and verdict in ("gate_failed", "regressed"):
            print(f"  evaluation verdict: {verdict.replace('_', ' ')} (the run is marked failed)")
        elif not result.success:
            failed.append(key)
            for event in result.all_events:
                if event.is_step_failure and event.step_failure_data:
                    print(f"  {event.step_key} failed: {event.step_failure_data.error.message.strip()}")
    _print_summary(db_path, keys, today.isoformat())
    print(f"Dagster runs: DAGSTER_HOME={os.environ['DAGSTER_HOME']} "
          f"(open the UI with `make ui`)")
    if failed:
        print(f"runs failed for: {', '.join(failed)}")
        return EXIT_FAILED
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    """The same stage list and checks as the Dagster job, in a plain loop."""
    from eval_pipelines.pipeline.checks import checks_for
    from eval_pipelines.pipeline.stages import RunOptions, StageContext, run_stages
    from eval_pipelines.store.partition import Partition

    root = Path(args.root).resolve()
    paths = _paths(root, args.db)
    from eval_pipelines.cli.run_source import CheckOutcome, finish_run, load_run_source

    try:  # everything is validated before any model is paid for
        loaded = load_run_source(Path(args.skill), paths, Path.cwd(), args.target)
    except SpecErrors as exc:
        print(exc)
        return EXIT_INVALID
    now = datetime.now(timezone.utc)
    partition = Partition(now.date().isoformat(), loaded.package.key)
    # The stages' warnings (the suite's load warnings, which also land in `suites`;
    # model calls that ended as error rows) go to standard error, one line each.
    log = logging.getLogger("eval_pipelines.cli")
    if not log.handlers:
        log.addHandler(_StderrWarnings(logging.WARNING))
        log.propagate = False
    ctx = StageContext(partition=partition, run_id=f"cli-{now:%Y%m%dT%H%M%S}", paths=paths,
                       report_root=_report_root(root), env=lambda names: {n: os.environ.get(n) for n in names},
                       options=RunOptions(use_cache=not args.no_cache, concurrency=args.concurrency), log=log)
    ctx.memo["loaded"] = loaded
    outcomes: list[CheckOutcome] = []
    written: list[str] = []
    with _progress(loaded.suite, ctx.options):
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
    _print_summary(paths.db_path, [partition.skill_version], partition.eval_date)
    if written:  # where they went: reports/<date>, or the suite's reporting.output_dir
        print(f"Reports: {Path(written[0]).parent} ({', '.join(Path(w).name for w in written)})")
    return finish_run(paths.db_path, partition, outcomes, args.junit, args.summary)


def cmd_grades_export(args: argparse.Namespace) -> int:
    from eval_pipelines.grading.reviews import queue_rows, write_csv, write_html
    from eval_pipelines.store.connection import connect

    db_path = _paths(Path(args.root), args.db).db_path
    with connect(db_path) as con:
        eval_date = args.date or con.execute("SELECT max(eval_date) FROM grades").fetchone()[0]
        pending = con.execute(
            """
            SELECT g.skill_version, g.test_id, g.target, g.trial, g.details, o.output, c.input
            FROM grades g
            JOIN model_outputs o USING (eval_date, skill_version, test_id, target, trial)
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
    paths = _paths(root, args.db)
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
        _print_summary(db_path, list(latest), max(d for d in latest.values() if d) if any(latest.values()) else "")
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    from eval_pipelines.suite.schema_export import eval_suite_schema

    print(json.dumps(eval_suite_schema(), indent=2))
    return EXIT_OK


class _StderrWarnings(logging.Handler):
    """``warning: message`` on whatever ``sys.stderr`` is when it is emitted."""

    def emit(self, record: logging.LogRecord) -> None:
        print(f"warning: {record.getMessage()}", file=sys.stderr)


@contextmanager
def _progress(suite, options):  # noqa: ANN001, ANN202
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="eval-pipelines", description=__doc__.splitlines()[0])
    root_help = "project folder (skills/, datasets/, targets.yaml); default: $EVAL_PIPELINES_HOME or ."
    parser.add_argument("--root", default=None, help=root_help)
    allow_help = ("run untrusted code (code judges, skill programs) even where no sandbox level can stop it "
                  "reading keys or writing outside its folder (docs/security.md); "
                  "same as EVAL_PIPELINES_ALLOW_UNSANDBOXED_CODE=1")
    parser.add_argument("--allow-unsandboxed-code", action="store_true", help=allow_help)
    # Accept --root after the subcommand too (`eval-pipelines demo --root X`).
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--root", default=argparse.SUPPRESS, help=root_help)
    common.add_argument("--allow-unsandboxed-code", action="store_true", default=argparse.SUPPRESS, help=allow_help)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("validate", parents=[common], help="check suite files, datasets and skill packages")
    p.add_argument("paths", nargs="+")
    p.add_argument("--as-suite", action="store_true", help="treat .jsonl/.csv as a sidecar suite")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("run", parents=[common], help="run one skill package without Dagster (same engine and tables)")
    p.add_argument("skill", metavar="PATH", help="skill folder, .zip, or a suite file of any supported format")
    p.add_argument("--target", action="append", help="target name (repeatable); default: the suite's")
    p.add_argument("--db", help="DuckDB path (default .data/eval_pipelines.duckdb)")
    p.add_argument("--concurrency", type=int, help="override every target's concurrency")
    p.add_argument("--no-cache", action="store_true", help="call every target again (no response cache)")
    p.add_argument("--junit", metavar="PATH", help="write JUnit XML (one testcase per case and target)")
    p.add_argument("--summary", metavar="PATH", help="append a Markdown summary (e.g. $GITHUB_STEP_SUMMARY)")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("demo", parents=[common], help="register the bundled skills and evaluate each through Dagster")
    p.add_argument("--db", help="DuckDB path (default .data/eval_pipelines.duckdb)")
    p.set_defaults(func=cmd_demo)

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

    p = sub.add_parser("schema", parents=[common], help="print the JSON Schema of the eval suite YAML format")
    p.set_defaults(func=cmd_schema)

    p = sub.add_parser("convert", parents=[common], help="convert a v1 tests.json to the v2 format")
    p.add_argument("source")
    p.add_argument("--out", help="output path (default: eval/tests.json beside the source)")
    p.set_defaults(func=cmd_convert)
    from eval_pipelines.cli.report import add_report_parser

    add_report_parser(sub, common)
    from eval_pipelines.cli.export import add_export_parser

    add_export_parser(sub, common)
    from eval_pipelines.cli.demo_model import add_demo_model_parser

    add_demo_model_parser(sub, common)
    from eval_pipelines.cli.redteam import add_redteam_parser

    add_redteam_parser(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.root = args.root or os.environ.get("EVAL_PIPELINES_HOME", ".")
    if args.allow_unsandboxed_code:  # read by the sandbox, also in Dagster runs started from here
        os.environ["EVAL_PIPELINES_ALLOW_UNSANDBOXED_CODE"] = "1"
    from eval_pipelines.store.connection import DatabaseBusy

    store_log = logging.getLogger("eval_pipelines.store")  # "waiting for a busy database" goes to stderr
    if not store_log.handlers:
        store_log.addHandler(_StderrWarnings(logging.WARNING))
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

"""The pipeline, as one ordered list of stages that the CLI and Dagster both run.

    eval_suite -> eval_datasets -> test_cases -> model_outputs -> grades
               -> test_results -> metrics -> regression_report -> eval_report

Each stage reads its inputs, calls the evaluation core (spec, run, grading,
analysis, reports) and replaces its partition of one or two tables. Within one
run the typed values a stage produced are handed to the next one in memory; a
stage run on its own (a Dagster re-run of one asset) reads them back from
DuckDB through the codecs of ``store.tables``. ``pipeline/checks.py`` holds the checks
run after a stage; ``defs/`` maps both lists onto Dagster, ``cli.py`` runs them
in a plain loop.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping

import pandas as pd

from eval_pipelines.analysis.regression import RegressionPolicy, compare_all
from eval_pipelines.grading.dispatch import GradedAlready, agrade_outputs, grade_frame, grading_waits
from eval_pipelines.grading.scoring import output_error, score_case
from eval_pipelines.pipeline.blind import run_blind_comparisons
from eval_pipelines.pipeline.collector import freeze_at_exit
from eval_pipelines.pipeline.catalog import STAGE_NAMES, STAGE_SPECS, StageSpec
from eval_pipelines.pipeline.project import ProjectPaths, find_package_source
from eval_pipelines.pipeline.stage_values import FilePath, Markdown, StageResult
from eval_pipelines.pipeline.triggers import run_trigger_evals
from eval_pipelines.reports.files import write_partition_reports
from eval_pipelines.reports.summary import metrics_markdown, regression_markdown, regression_summary
from eval_pipelines.run.cache import ResponseCache
from eval_pipelines.run.engine import run_model_phase
from eval_pipelines.run.targets.base import ModelOutput
from eval_pipelines.run.targets.config import (AgentTargetConfig, ClaudeCodeTargetConfig, OpenAITargetConfig,
                                               ScriptedJudgeConfig, connection)
from eval_pipelines.run.targets.key_policy import TRUSTED_HOSTS_ENV
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import LoadedSkill
from eval_pipelines.store import tables
from eval_pipelines.store.connection import connect, read_partition, replace_partitions
from eval_pipelines.store.partition import Partition
from eval_pipelines.store.queries import find_baselines, grading_context
from eval_pipelines.store.configurations import configurations_in, encode_uplifts, of_configuration, primary
from eval_pipelines.analysis.configurations import skill_uplifts
from eval_pipelines.pipeline.configurations import (all_runs, configuration_metrics, configurations_markdown,
                                                    configurations_of_outputs)
from eval_pipelines.suite.models import WITH_SKILL

if TYPE_CHECKING:
    from eval_pipelines.grading.judge import Judge
    from eval_pipelines.suite.models import RegressionSettings, Suite


class MissingUpstream(LookupError):
    """A stage ran before the stage it reads from stored its rows."""


@dataclass
class RunOptions:
    """Switches of one run (CLI flags, or the Dagster run config)."""

    use_cache: bool = True  # False: call every target again (a fresh sample)
    concurrency: int | None = None  # override every target's concurrency
    on_output: Callable[[ModelOutput], None] | None = None  # progress of the model phase
    report_dir: Path | None = None  # default: <project>/reports/<eval date>
    compare_blind: str | None = None  # a baseline version: judge both versions' outputs blind (pipeline/blind.py)


# A write of this many rows closes the run's connection after it (the next use reopens it, ~25 ms).
RELEASE_AFTER_ROWS = 50_000


@dataclass
class StageContext:
    """One partition's run: where things are, what the stages handed each other."""

    partition: Partition
    run_id: str | None
    paths: ProjectPaths
    report_root: Path
    # Environment variable names -> values (Dagster: EnvVar; CLI: os.environ). Only
    # the names the suite's targets declare are ever asked for.
    env: Callable[[list[str]], Mapping[str, str | None]]
    options: RunOptions = field(default_factory=RunOptions)
    log: logging.Logger | logging.LoggerAdapter = logging.getLogger("eval_pipelines")
    # Values earlier stages of this run produced: "loaded" (a LoadedSkill the CLI
    # already validated), "suite" (StoredSuite), "reporting" (its reporting settings), "<table>" (the rows written).
    memo: dict[str, Any] = field(default_factory=dict)
    current_stage: str | None = None  # the stage running now (failures name it)
    _open: Any = field(default=None, repr=False)  # (context manager, connection) while held

    def connection(self) -> Any:
        """The run's DuckDB connection, opened on first use and kept across the short
        stages (each open costs some 25 ms). ``release`` closes it before anything that
        waits long (model calls, the judge, scripts), so other runs can write meanwhile."""
        if self._open is None:
            manager = connect(self.paths.db_path)
            self._open = (manager, manager.__enter__())
        return self._open[1]

    def release(self) -> None:
        if self._open is not None:
            manager, self._open = self._open[0], None
            manager.__exit__(None, None, None)

    def rows(self, table: str) -> pd.DataFrame:
        """The partition's rows of ``table``: as this run wrote them, else from DuckDB."""
        if table not in self.memo:
            self.memo[table] = read_partition(self.connection(), table, self.partition)
        return self.memo[table]

    def suite(self) -> tables.StoredSuite:
        if "suite" not in self.memo:
            stored = tables.decode_suite(self.rows("suites"))
            if stored is None:
                raise MissingUpstream("no suite stored for this partition; materialise eval_suite first")
            self._keep_suite(stored)
        return self.memo["suite"]

    def _keep_suite(self, stored: tables.StoredSuite) -> None:
        self.memo["suite"] = stored
        # The report stage needs this one setting: the suite (~2.4 KB a case) is let go before it.
        self.memo["reporting"] = stored.suite.reporting

    def outputs(self) -> list[ModelOutput]:
        if "outputs" not in self.memo:
            self.memo["outputs"] = tables.decode_outputs(self.rows("model_outputs"))
        return self.memo["outputs"]

    def write(self, table: str, frame: pd.DataFrame) -> int:
        return self.write_all({table: frame})[table]

    def write_all(self, frames: dict[str, pd.DataFrame | Iterable[pd.DataFrame]]) -> dict[str, int]:
        """Replace the partition's rows of each table in one transaction. Rows written in batches
        are not kept: a later stage reading them reads them back."""
        written = replace_partitions(self.connection(), self.partition, frames)
        self.memo.update({table: rows for table, rows in frames.items() if isinstance(rows, pd.DataFrame)})
        if sum(written.values()) >= RELEASE_AFTER_ROWS:
            # DuckDB keeps what a big write took (its buffers, its allocator's pages) while the
            # connection is open: at 100,000 cases that stayed on top of every later stage's peak.
            self.release()
        return written


@dataclass(frozen=True)
class Stage:
    """A stage's facts (``catalog.StageSpec``: name, tables, what it reads) and the function that runs it."""

    spec: StageSpec
    run: Callable[[StageContext], StageResult]

    @property
    def name(self) -> str:  # the Dagster asset's name
        return self.spec.name

    @property
    def tables(self) -> tuple[str, ...]:
        return self.spec.tables

    @property
    def reads(self) -> tuple[str, ...]:
        return self.spec.reads


def _write(ctx: StageContext, table: str, frame: pd.DataFrame) -> dict[str, int]:
    return {table: ctx.write(table, frame)}


# ---- the stages ---------------------------------------------------------------------

def load_suite(ctx: StageContext) -> StageResult:
    loaded: LoadedSkill | None = ctx.memo.pop("loaded", None)
    if loaded is None:
        loaded = ctx.paths.load(find_package_source(ctx.paths, ctx.partition.skill_version))
    for warning in loaded.warnings:
        ctx.log.warning(warning)
    frame = tables.encode_suite(loaded, ctx.partition, ctx.run_id)
    ctx._keep_suite(tables.StoredSuite(loaded.suite, loaded.targets, loaded.package.root))
    suite = loaded.suite
    return StageResult(_write(ctx, "suites", frame), {
        "suite": suite.name, "format": suite.format, "tests": len(suite.tests),
        "targets": ", ".join(suite.execution.targets), "source": FilePath(str(loaded.package.source)),
        "warnings": len(loaded.warnings)})


def record_datasets(ctx: StageContext) -> StageResult:
    frame = tables.encode_datasets(ctx.suite().suite, ctx.partition, ctx.run_id)
    meta: dict[str, Any] = {}
    if not frame.empty:
        meta["files"] = Markdown("\n".join(
            f"- `{Path(r['path']).name}`: {r['test_cases']} cases, sha256 {r['sha256'][:12]}"
            for r in frame.to_dict("records")))
    return StageResult(_write(ctx, "datasets", frame), meta)


def record_test_cases(ctx: StageContext) -> StageResult:
    batches = tables.encode_test_case_batches(ctx.suite().suite, ctx.partition, ctx.run_id)
    return StageResult(ctx.write_all({"test_cases": batches}))


def call_targets(ctx: StageContext) -> StageResult:
    stored = ctx.suite()
    names = sorted({n for t in stored.targets.values()
                    if isinstance(t, (OpenAITargetConfig, AgentTargetConfig, ClaudeCodeTargetConfig))
                    for n in (t.api_key_env, t.base_url_env)} | {TRUSTED_HOSTS_ENV})
    configurations = stored.suite.execution.configurations
    verdicts = {c: _early_verdict(ctx, stored, c) for c in configurations}
    ctx.release()  # no DuckDB connection is held while models answer
    cache = ResponseCache(ctx.paths.db_path) if ctx.options.use_cache else None
    # The cache writes in short batches that never wait on the lock: other runs
    # can write meanwhile. One configuration after the other (with_skill, then without_skill):
    # the same cases, targets and trials, the skill installed or not (run/engine.py).
    outputs = []
    for configuration in configurations:
        outputs += asyncio.run(run_model_phase(
            stored.suite, stored.targets, stored.package_root, ctx.env(names),
            concurrency=ctx.options.concurrency, cache=cache,
            workspace_dir=ctx.paths.workspace_dir(ctx.partition), on_output=ctx.options.on_output,
            passes=verdicts[configuration], configuration=configuration))
    ctx.memo["outputs"] = outputs
    errors = sum(o.error is not None for o in outputs)
    if errors:
        ctx.log.warning(f"{errors} of {len(outputs)} model calls ended as error rows")
    frame = tables.encode_outputs(outputs, ctx.partition, ctx.run_id, stored.suite.name)
    return StageResult(_write(ctx, "model_outputs", frame),
                       {"errors": errors, "cached": sum(o.cached for o in outputs)})


def _early_verdict(ctx: StageContext, stored: tables.StoredSuite,
                   configuration: str = WITH_SKILL) -> Callable[[ModelOutput], Any] | None:
    """Grade one output during the model phase, when the suite must know at once whether a
    case passed: failFast (000 `settings.failFast`) stops after the first failing case, and a
    failing case is re-run (000 `retryCount`/`retryFailed`, 003 `retry_failed`). The grades
    stage grades the stored outputs again; this only decides what to run."""
    suite = stored.suite
    if not (suite.settings.fail_fast or any(suite.reruns_for(c) for c in suite.tests)):
        return None
    _, context = grading_context(ctx.connection(), ctx.partition, suite.baseline, configuration)
    suite_dir = Path(suite.source_file).parent

    # The grades decided on are handed to the grades stage, which keeps them for the outputs
    # it stores unchanged: a judge is asked once per output, and the stored grade is the one
    # that decided whether the case ran again.
    decided: GradedAlready = ctx.memo.setdefault("early_grades", {}).setdefault(configuration, {})

    async def passes(output: ModelOutput) -> bool:
        judge = _judge(ctx, stored)  # its client belongs to this event loop: closed after use
        try:
            ((_, grades),) = await agrade_outputs(suite, [output], suite_dir, judge, context, compare=False)
        finally:
            if judge is not None and hasattr(judge, "aclose"):
                await judge.aclose()
        decided[(output.test_id, output.target, output.trial)] = (output, grades)
        return score_case(grades, output_error(output)).verdict == "pass"

    return passes


def grade(ctx: StageContext) -> StageResult:
    stored = ctx.suite()
    all_outputs = ctx.rows("model_outputs")
    frames = []
    for configuration in configurations_in(all_outputs) or [WITH_SKILL]:
        # Each configuration is graded on its own: its outputs, and the baseline version's outputs
        # of the same configuration for the comparison graders.
        outputs = of_configuration(all_outputs, configuration)
        baseline, context = grading_context(ctx.connection(), ctx.partition, stored.suite.baseline, configuration)
        if grading_waits(stored.suite):
            ctx.release()  # judge calls and sandboxed scripts may take long
        workspace = ctx.paths.workspace_dir(ctx.partition)
        if workspace.is_dir():
            context = replace(context, workspace=workspace)
        if baseline:
            ctx.log.info(f"regression comparisons use the outputs of {baseline.skill_version} ({baseline.eval_date})")
        graded = grade_frame(stored.suite, outputs, tables.decode_outputs,
                             suite_dir=Path(stored.suite.source_file).parent,
                             make_judge=lambda: _judge(ctx, stored), context=context,
                             graded_already=ctx.memo.get("early_grades", {}).get(configuration))
        frames.append(tables.encode_grades(graded, ctx.partition, ctx.run_id, stored.suite.name, configuration))
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    return StageResult(_write(ctx, "grades", frame))


def _judge(ctx: StageContext, stored: tables.StoredSuite) -> "Judge | None":
    """The suite's judge model, when it names an OpenAI-compatible one."""
    config = stored.targets.get(stored.suite.judge or "")
    if isinstance(config, ScriptedJudgeConfig):  # the deterministic stand-in (offline demos)
        from eval_pipelines.grading.scripted_judge import ScriptedJudge, load_judge_script

        return ScriptedJudge(load_judge_script(stored.package_root / config.script))
    if not isinstance(config, OpenAITargetConfig):
        return None
    from eval_pipelines.grading.judge import OpenAIJudge  # imports openai: only when a judge is named

    from eval_pipelines.formats.promptfoo.providers import PROMPTFOO_GRADER

    env = ctx.env([config.api_key_env, config.base_url_env, TRUSTED_HOSTS_ENV])
    reached = connection(config, env)
    if stored.suite.judge == PROMPTFOO_GRADER and not (reached.api_key or reached.base_url):
        return None  # promptfoo's default grader needs OpenAI (a key or a server): "no judge", not a failed call
    return OpenAIJudge(config, **reached._asdict())


def score(ctx: StageContext) -> StageResult:
    suite = ctx.suite().suite
    all_grades = ctx.rows("grades")
    cases = {c.id: c for c in suite.tests}
    frames, outcomes = [], Counter()
    for configuration in configurations_of_outputs(ctx.outputs()):
        grades = tables.decode_grades(of_configuration(all_grades, configuration))
        scored = []
        for o in ctx.outputs():
            if o.configuration != configuration:
                continue
            key = (o.test_id, o.target, o.trial)
            case = cases.get(o.test_id)
            scored.append((key, case.category if case else None,
                           score_case(grades.get(key, []), output_error(o), rule=suite.scoring,
                                      threshold=case.threshold if case else None)))
        frames.append(tables.encode_results(scored, ctx.partition, ctx.run_id, suite.name, configuration))
        outcomes.update(s.verdict or s.status for _, _, s in scored)
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else (
        frames[0] if frames else tables.encode_results([], ctx.partition, ctx.run_id, suite.name))
    return StageResult(_write(ctx, "test_results", frame), {"verdicts": dict(outcomes)})


def aggregate(ctx: StageContext) -> StageResult:
    suite = ctx.suite().suite
    all_results, all_grades = ctx.rows("test_results"), ctx.rows("grades")
    metric_frames, case_frames, by_configuration = [], [], {}
    for configuration in configurations_in(all_results) or [WITH_SKILL]:
        outputs = [o for o in ctx.outputs() if o.configuration == configuration]
        values, per_case = configuration_metrics(suite, configuration, of_configuration(all_results, configuration),
                                                 of_configuration(all_grades, configuration), outputs, ctx.log)
        by_configuration[configuration] = values
        metric_frames.append(tables.encode_metrics(values, ctx.partition, ctx.run_id, suite.name, configuration))
        case_frames.append(tables.encode_case_metrics(per_case, ctx.partition, ctx.run_id, suite.name, configuration))
        del per_case  # a dict per case (~50 MB at 100,000): its rows are made, it need not live through the write
    policy = regression_policy(suite.regression)
    uplifts = skill_uplifts(all_runs(all_results, all_grades, ctx.outputs()), policy)
    written = ctx.write_all({  # one transaction: never one table of the three alone
        "metrics": pd.concat(metric_frames, ignore_index=True),
        "case_metrics": pd.concat(case_frames, ignore_index=True),
        "uplifts": encode_uplifts(uplifts, policy, ctx.partition, ctx.run_id, suite.name)})
    shown = primary(by_configuration)
    overall = by_configuration[shown].get("*", {})
    meta: dict[str, Any] = {"summary": Markdown(metrics_markdown(overall, of_configuration(all_results, shown)))}
    if len(by_configuration) > 1 or uplifts:
        meta["configurations"] = Markdown(configurations_markdown(by_configuration, uplifts))
    # Numeric metadata: Dagster plots these across partitions (versions and nights).
    for name in ("pass_rate", "expectation_pass_rate", "mean_score", "pass_at_1", "case_pass_rate", "cost_usd",
                 "latency_p50_ms",
                 "latency_p95_ms", "errors"):
        if name in overall:
            meta[name] = float(overall[name])
    overall_uplift = next((u for u in uplifts if u.target == "*"), None)
    if overall_uplift is not None:
        meta["skill_uplift"] = float(overall_uplift.delta)
    return StageResult(written, meta)


def regression_policy(settings: "RegressionSettings") -> RegressionPolicy:
    """The suite's ``regression:`` settings as the policy the regression stage applies."""
    return RegressionPolicy(alpha=settings.alpha, min_effect=settings.min_effect,
                            effect_rule=settings.effect_rule, case_fdr=settings.case_fdr,
                            case_labels=settings.case_labels)


def compare_with_baselines(ctx: StageContext) -> StageResult:
    suite = ctx.suite().suite
    policy = regression_policy(suite.regression)
    # The skill as shipped is what regresses: the primary configuration (with_skill) of this run
    # against the same configuration of its baselines.
    rows = ctx.rows("test_results")
    configuration = primary(configurations_in(rows))
    current = tables.decode_trials(of_configuration(rows, configuration))
    con = ctx.connection()
    baselines = find_baselines(con, ctx.partition, suite.baseline)
    previous = [tables.decode_trials(of_configuration(read_partition(con, "test_results", b.partition), configuration))
                for b in baselines]
    # One family: the previous-version and previous-night comparisons are corrected together.
    results = compare_all(current, previous, policy)
    comparisons = [(b.comparison, b.partition, result) for b, result in zip(baselines, results)]
    frame = tables.encode_regressions(comparisons, policy, ctx.partition, ctx.run_id, suite.name, configuration)
    summary = regression_summary(comparisons)
    return StageResult(_write(ctx, "regressions", frame), {
        "comparisons": Markdown(regression_markdown(summary) or "no baseline yet"),
        "regressed": any(v["regressed"] for v in summary.values()),
        "broken": any(v["broken"] for v in summary.values())})


def report_dir(ctx: StageContext) -> Path:
    """Where the partition's reports go: the run's option, else the suite's
    ``reporting.output_dir`` (seed 003; relative to the project root, checked when the
    suite loaded), else ``reports/<eval date>``."""
    if ctx.options.report_dir is not None:
        return ctx.options.report_dir
    reporting = ctx.memo["reporting"] if "reporting" in ctx.memo else ctx.suite().suite.reporting
    if reporting is not None and reporting.output_dir:
        return ctx.report_root.parent / reporting.output_dir
    return ctx.report_root / ctx.partition.eval_date


def write_reports(ctx: StageContext) -> StageResult:
    out_dir = report_dir(ctx)
    written, summary = write_partition_reports(ctx.paths.db_path, ctx.partition, out_dir, con=ctx.connection())
    meta: dict[str, Any] = {f"report_{fmt}": FilePath(str(path)) for fmt, path in written.items()}
    meta["report_summary"] = Markdown(summary)
    return StageResult({}, meta)


# The facts are in catalog.py (the Dagster definitions read them without importing this module).
STAGES: tuple[Stage, ...] = tuple(
    Stage(spec, globals()[spec.function]) for spec in STAGE_SPECS)


def run_stages(ctx: StageContext, selected: set[str] | None = None) -> Iterator[tuple[Stage, StageResult]]:
    """Run the selected stages (default: all) in pipeline order, yielding each result.

    The caller decides what a failed check means (``pipeline/checks.py``): it stops
    iterating to stop the stages downstream of a blocking gate.
    """
    chosen = [stage for stage in STAGES if selected is None or stage.name in selected]
    # What exists now (modules, Dagster's definitions, the loaded suite) outlives the run: out of
    # the full collections' way while it runs, handed back after (pipeline/collector.py).
    gc.freeze()
    try:
        for position, stage in enumerate(chosen):
            ctx.current_stage = stage.name
            yield stage, stage.run(ctx)  # the caller runs the stage's checks before the next step
            still_needed = {key for later in chosen[position + 1:] for key in later.reads}
            for key in [k for k in ctx.memo if k not in still_needed]:
                del ctx.memo[key]
    finally:
        ctx.release()
        gc.unfreeze()
        freeze_at_exit()  # should the process end now, without the final full collections


__all__ = ["STAGES", "STAGE_NAMES", "FilePath", "Markdown", "MissingUpstream", "RunOptions", "SpecErrors",
           "Stage", "StageContext", "StageResult", "run_stages"]

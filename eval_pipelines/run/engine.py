"""The model phase: cases x targets x trials -> one output (or error row) each.

Async and bounded per target; it touches no database (the response cache
writes in short batches), so it never holds DuckDB's write lock while waiting
on models. Grading is ``eval_pipelines.grading``'s job.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Awaitable, Callable, Mapping

from eval_pipelines.suite.models import WITH_SKILL, WITHOUT_SKILL, Suite, TestCase, with_answers
from eval_pipelines.suite.registers import with_registers
from eval_pipelines.run.registers import in_run_order, reads_registers, stored_value, uses_registers
from eval_pipelines.run.targets.base import ModelOutput, Target, TargetRequest
from eval_pipelines.run.targets.command import CommandTarget
from eval_pipelines.run.targets.config import (
    AgentTargetConfig,
    ClaudeCodeTargetConfig,
    CommandTargetConfig,
    OpenAITargetConfig,
    ReplayTargetConfig,
    TargetConfig,
    connection,
    resolve_connection,
)
from eval_pipelines.run.targets.replay import ReplayTarget
from eval_pipelines.run.tracing.context import traced_request, with_trace

if TYPE_CHECKING:
    from eval_pipelines.run.cache import ResponseCache

_log = logging.getLogger(__name__)


def build_target(config: TargetConfig, base_dir: Path, env: Mapping[str, str | None],
                 extra_env: dict[str, str] | None = None, *, with_skill: bool = True) -> Target:
    if isinstance(config, OpenAITargetConfig):
        # Imported here: the openai package takes ~0.8 s to import, which
        # suites with only command or replay targets should not pay.
        from eval_pipelines.run.targets.openai_compat import OpenAITarget

        return OpenAITarget(config, **connection(config, env)._asdict())
    if isinstance(config, ReplayTargetConfig):
        return ReplayTarget(config, base_dir)
    if isinstance(config, CommandTargetConfig):
        return CommandTarget(config, base_dir, extra_env)
    if isinstance(config, AgentTargetConfig):
        from eval_pipelines.run.targets.agent.loop import AgentTarget

        return AgentTarget(config, base_dir, with_skill=with_skill, **connection(config, env)._asdict())
    if isinstance(config, ClaudeCodeTargetConfig):
        from eval_pipelines.run.targets.agent.claude_code import ClaudeCodeTarget

        return ClaudeCodeTarget(config, base_dir, with_skill=with_skill, **connection(config, env)._asdict())
    raise TypeError(f"unsupported target config {type(config).__name__}")


# Assertions that read the answer's token log-probabilities (grading/graders/perplexity*.py):
# a case with one asks its OpenAI-compatible targets for them (`logprobs: true`).
LOGPROB_ASSERTIONS = frozenset({"perplexity", "perplexity_score"})


def _wants_logprobs(assertions: list) -> bool:
    """Any of these assertions (or one nested in a composite / transformed) reads logprobs."""
    pending: list = list(assertions)
    while pending:
        item = pending.pop()
        kind = item.get("type") if isinstance(item, dict) else item.type
        if kind in LOGPROB_ASSERTIONS:
            return True
        nested = item.get("assert") if isinstance(item, dict) else item.config.get("assert")
        pending.extend(nested if isinstance(nested, list) else [nested] if isinstance(nested, dict) else [])
    return False


def without_skill(suite: Suite, base_dir: Path) -> Suite:
    """The suite as run ``without_skill``: its system prompt dropped when it is SKILL.md's body (the
    loader puts the body there for chat targets); a prompt the suite brings itself stays."""
    from eval_pipelines.suite.package import parse_front_matter, skill_folder

    folder = skill_folder(base_dir)
    if folder is None or not suite.system_prompt:
        return suite
    skill_md = folder / "SKILL.md"
    _, body = parse_front_matter(skill_md.read_text(encoding="utf-8"), skill_md)
    if suite.system_prompt.split() != body.split():
        return suite
    return suite.model_copy(update={"system_prompt": None})


def _request(suite: Suite, case: TestCase, trial: int, configuration: str = WITH_SKILL) -> TargetRequest:
    from eval_pipelines.suite.models import DEFAULT_MAX_STEPS, merge_tools

    settings = case.model_settings.model_dump(exclude_none=True) if case.model_settings else None
    if _wants_logprobs(case.assertions):
        settings = {**(settings or {}), "logprobs": True}
    timeout_ms = case.timeout_ms or suite.settings.timeout_ms
    return TargetRequest(
        test_id=case.id,
        trial=trial,
        system_prompt=suite.system_prompt,
        messages=case.input,
        timeout_s=timeout_ms / 1000,
        # The eval-yaml loader already merged the suite's tools into the case;
        # merging again is a no-op there and covers suites built in code.
        tools=merge_tools(suite.tools, case.tools),
        max_steps=case.max_steps or suite.max_steps or DEFAULT_MAX_STEPS,
        response_schema=suite.response_schema,
        model_settings=settings,
        input_files=tuple(case.input_files),
        configuration=configuration,
    )


def files_refusal(case: TestCase, target: Target) -> str | None:
    """Why a target that is not an agent cannot run this case: an input file its prompt could not
    inline (binary, a directory's file). None when it can."""
    left = next((f for f in case.input_files if not f.inlined), None)
    if left is None:
        return None
    plain = _uncached(target)
    if getattr(plain, "takes_input_files", False):  # the agent kinds: a workspace holds the files
        return None
    kind = {"OpenAITarget": "openai", "CommandTarget": "command", "ReplayTarget": "replay"}.get(
        type(plain).__name__, type(plain).__name__)
    return (f"input file {left.path} ({left.reason or 'not text'}) cannot be given to target "
            f"{target.name!r} (type: {kind}): only an agent target (type: agent) or Claude Code "
            f"(type: claude_code) takes such files")


# Grades one output as the pipeline will (True: the case passed). Given by the stage
# that runs the model phase when the suite needs a verdict early: failFast stops after
# the first failing case, and a failing case is re-run up to its retries.
Verdict = Callable[[ModelOutput], Awaitable[bool]]

NOT_RUN_FAIL_FAST = "not run: failFast stopped the suite after an earlier failure"


def _uncached(target: Target) -> Target:
    """The target itself, around the response cache (per-test `cache: false`, re-runs)."""
    return getattr(target, "uncached", target)


async def collect_outputs(
    suite: Suite,
    targets: Mapping[str, Target],
    *,
    concurrency: int | None = None,
    on_output: Callable[[ModelOutput], None] | None = None,
    passes: Verdict | None = None,
    delays: Mapping[str, float] | None = None,
    configuration: str = WITH_SKILL,
) -> list[ModelOutput]:
    """One output (or error) for every case x target x trial; never fewer.

    Without ``passes`` a case counts as failed only when its output is an error. ``delays``
    (seconds, by target): a pause after each call the cache did not answer, in the call's slot."""
    sizes = {name: max(1, concurrency or suite.settings.max_concurrency or target.concurrency)
             for name, target in targets.items()}
    limits = {name: asyncio.Semaphore(size) for name, size in sizes.items()}
    stop = asyncio.Event()
    cost_limit = suite.execution.trials.cost_limit_usd
    spent = 0.0
    redact_patterns = tuple(suite.tracing.redact_attributes) if suite.tracing else ()

    async def passed(result: ModelOutput) -> bool:
        if result.error is not None:
            return False
        return True if passes is None else await passes(result)

    # A conversation turn waits for the answers of its earlier turns (same target and trial).
    # It waits before taking a slot of the target's limit, and earlier turns are earlier jobs,
    # already taken by a worker: a wait always ends.
    # Only answers some job will give are awaited: an earlier turn that does not run on this
    # target or trial (fewer trials of its own) counts as unanswered.
    jobs = [
        (case, target_name, trial)
        for case in suite.tests
        for target_name in suite.targets_for(case)
        for trial in range(suite.trials_for(case))
    ]
    # promptfoo's storeOutputAs: one job at a time, in promptfoo's order (run/registers.py).
    sequential = uses_registers(suite)
    if sequential:
        jobs = in_run_order(suite, jobs)
    registers: dict[str, object] = {}
    loop = asyncio.get_running_loop()
    exists = {(case.id, name, trial) for case, name, trial in jobs}
    awaited = {key: loop.create_future()
               for case in suite.tests for earlier in case.after
               for name in suite.targets_for(case) for trial in range(suite.trials_for(case))
               if (key := (earlier, name, trial)) in exists}

    suite_dir = Path(suite.source_file).parent  # once, not a Path per call

    async def one(case: TestCase, target_name: str, trial: int) -> ModelOutput:
        result: ModelOutput | None = None
        try:
            sent = {n: registers[n] for n in (case.registers.reads if case.registers else {}) if n in registers}
            result = await _one(with_registers(case, sent), target_name, trial, sent)
            result.configuration = configuration
            value = await stored_value(with_registers(case, sent), result, suite_dir)
            if value is not None:
                registers[case.registers.store_as] = value  # type: ignore[union-attr]
            return result
        finally:
            answer = awaited.get((case.id, target_name, trial))
            if answer is not None and not answer.done():
                answer.set_result(result.output if result is not None and result.error is None else None)

    async def _one(case: TestCase, target_name: str, trial: int, sent: dict[str, object]) -> ModelOutput:
        nonlocal spent
        answers: dict[str, str | None] = {}
        for earlier in case.after:
            pending = awaited.get((earlier, target_name, trial))
            # one worker (storeOutputAs): an earlier turn placed later by promptfoo's order (runSerially)
            # has not answered, and waiting for it would stop the run
            answers[earlier] = await pending if pending is not None and not (sequential and not pending.done()) \
                else None
        case = with_answers(case, answers)
        target = targets[target_name]
        pause = (delays or {}).get(target_name, 0.0)
        if case.cache is False:
            target = _uncached(target)
        async with limits[target_name]:
            if case.fails_with is not None:  # the eval cannot run (promptfoo fails it too; a missing file)
                return ModelOutput(case.id, target_name, trial, None, error=case.fails_with, attempts=0)
            if stop.is_set():
                return ModelOutput(case.id, target_name, trial, None, error=NOT_RUN_FAIL_FAST, attempts=0)
            if cost_limit is not None and spent >= cost_limit:
                return ModelOutput(case.id, target_name, trial, None, attempts=0,
                                   error=f"not run: trials.cost_limit_usd {cost_limit:g} reached "
                                         f"(${spent:.4f} spent)")
            refused = files_refusal(case, target)
            if refused:
                return ModelOutput(case.id, target_name, trial, None, error=refused, attempts=0)
            request = traced_request(suite, case, _request(suite, case, trial, configuration))
            result = await _generate(target, request, case, target_name, trial, pause, redact_patterns)
            result.answers, result.registers = answers, sent
            reruns = suite.reruns_for(case)
            ok = await passed(result) if (reruns or suite.settings.fail_fast) else True
            for _ in range(reruns if not ok else 0):
                # A failing case runs again, past the cache (it would give the same answer);
                # the last attempt is stored, `attempts` counts the calls of all of them.
                if not result.cached:
                    spent += result.cost_usd or 0.0
                again = await _generate(_uncached(target), request, case, target_name, trial, pause,
                                        redact_patterns)
                again.attempts += result.attempts
                again.answers, again.registers = answers, sent
                result = again
                ok = await passed(result)
                if ok:
                    break
        if not result.cached:
            spent += result.cost_usd or 0.0
        if not ok and suite.settings.fail_fast:
            stop.set()
        if on_output:
            on_output(result)
        return result

    # A fixed pool of workers, not one task per job: 100,000 pending tasks held
    # about half a gigabyte; the pool keeps only as many as can run at once.
    results: list[ModelOutput | None] = [None] * len(jobs)
    next_job = iter(range(len(jobs)))

    async def worker() -> None:
        for index in next_job:
            results[index] = await one(*jobs[index])

    workers = 1 if sequential else min(len(jobs), sum(sizes.values()))
    await asyncio.gather(*(worker() for _ in range(workers)))
    return [r for r in results if r is not None]


async def _generate(target: Target, request: TargetRequest, case: TestCase, target_name: str,
                    trial: int, pause: float = 0.0, redact_patterns: tuple[str, ...] = ()) -> ModelOutput:
    try:
        result = await target.generate(request)
    except Exception as exc:  # noqa: BLE001 - a target bug must not lose the case
        result = ModelOutput(case.id, target_name, trial, None, error=f"target failed: {type(exc).__name__}: {exc}")
    if pause > 0 and not result.cached:  # promptfoo sleeps after every response not from its cache
        await asyncio.sleep(pause)
    result.configuration = request.configuration
    return with_trace(request, result, redact_patterns)


def _with_suite_retries(config: TargetConfig, suite: Suite) -> TargetConfig:
    """The suite's retry setting wins over the target's, and its ``model`` (seed 002's
    prompt ``model``) over an OpenAI-compatible target's model."""
    if isinstance(config, OpenAITargetConfig) and suite.settings.retry_count is not None:
        config = config.model_copy(update={"max_retries": suite.settings.retry_count})
    if isinstance(config, OpenAITargetConfig) and suite.model:
        config = config.model_copy(update={"model": suite.model})
    return config


async def run_model_phase(
    suite: Suite,
    configs: Mapping[str, TargetConfig],
    base_dir: Path,
    env: Mapping[str, str | None],
    *,
    concurrency: int | None = None,
    cache: "ResponseCache | None" = None,
    workspace_dir: Path | None = None,
    on_output: Callable[[ModelOutput], None] | None = None,
    passes: Verdict | None = None,
    configuration: str = WITH_SKILL,
) -> list[ModelOutput]:
    """Prepare the workspace, build the targets (cached where allowed), collect
    every output, then tear down and close the clients.

    A workspace whose setup fails turns every case into an error row with the
    reason: the run still accounts for each case.
    """
    from eval_pipelines.run import workspace as ws
    from eval_pipelines.run.cache import CachedTarget

    if configuration == WITHOUT_SKILL:
        suite = without_skill(suite, base_dir)
    outputs = await _run_model_phase(suite, configs, base_dir, env, concurrency=concurrency, cache=cache,
                                     workspace_dir=workspace_dir, on_output=on_output, passes=passes,
                                     configuration=configuration)
    for output in outputs:
        output.configuration = configuration
    return outputs


async def _run_model_phase(suite: Suite, configs: Mapping[str, TargetConfig], base_dir: Path,
                           env: Mapping[str, str | None], *, concurrency: int | None,
                           cache: "ResponseCache | None", workspace_dir: Path | None,
                           on_output: Callable[[ModelOutput], None] | None, passes: Verdict | None,
                           configuration: str) -> list[ModelOutput]:
    from eval_pipelines.run import workspace as ws
    from eval_pipelines.run.cache import CachedTarget

    names = sorted({n for case in suite.tests for n in suite.targets_for(case)})
    space = None
    if workspace_dir is not None and ws.needs_workspace(suite, base_dir):
        try:
            space = await asyncio.to_thread(ws.prepare, suite, base_dir, workspace_dir)
        except ws.WorkspaceError as exc:
            return [ModelOutput(case.id, name, trial, None, error=f"workspace {exc}", attempts=0,
                                configuration=configuration)
                    for case in suite.tests for name in suite.targets_for(case)
                    for trial in range(suite.trials_for(case))]
    targets: dict[str, Target] = {}
    try:
        for name in names:
            config = _with_suite_retries(configs[name], suite)
            target = build_target(config, base_dir, env, space.environment if space else None,
                                  with_skill=configuration == WITH_SKILL)
            if cache is not None and suite.execution.cache and isinstance(config, OpenAITargetConfig):
                _, base_url = resolve_connection(config, env)
                target = CachedTarget(target, cache, config, base_url)
            targets[name] = target
        if cache is not None:
            keys = [t.key(_request(suite, case, trial, configuration))
                    # a later conversation turn's request holds earlier answers: its key is not known yet
                    for case in suite.tests if case.cache is not False and not case.after
                    and not reads_registers(case)
                    for n in suite.targets_for(case)
                    if isinstance(t := targets[n], CachedTarget)
                    for trial in range(suite.trials_for(case))]
            await asyncio.to_thread(cache.preload, keys)
        delays = {n: ms / 1000 for n in names if (ms := suite.settings.target_delay_ms.get(n, suite.settings.delay_ms))}
        return await collect_outputs(suite, targets, concurrency=concurrency, on_output=on_output, passes=passes,
                                     delays=delays, configuration=configuration)
    finally:
        for target in targets.values():
            await target.aclose()
        if cache is not None:
            await asyncio.to_thread(cache.flush)
            if cache.unwritten:  # the answers are stored as outputs; only the re-run will pay again
                _log.warning("%d answers were not added to the response cache: the database stayed busy",
                             cache.unwritten)
        if space is not None:
            problem = await asyncio.to_thread(ws.teardown, suite, base_dir, space)
            if problem:
                _log.warning("workspace %s", problem)

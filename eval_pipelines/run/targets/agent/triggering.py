"""Trigger runs: does the agent load the skill for a query, with the skill offered among others?

One run is one query sent to an agent target whose instructions list every offered skill by name
and description only (the skill under test, the project's other skills, the declared distractors;
in an order shuffled per run from a recorded seed, so no skill always comes first). The workspace
holds the skill under test as installed for a case and, for every other skill, a SKILL.md of its
front matter alone, so reading any of them succeeds as it would in a real installation.

The skill counts as loaded when a recorded tool call reads ``skills/<name>/SKILL.md``:
``read_file`` with that path, or ``run_command`` whose command names it (``cat``, ``head``...).
The run stops right after the first SKILL.md read, whichever skill's (the decision is made; the
task itself is not needed), or after ``max_turns`` model turns, or when the model answers without
reading one (the skill was not loaded). Nothing here goes through the response cache: each run
is a fresh sample, as trigger rates need.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from eval_pipelines.run.targets.agent import recording
from eval_pipelines.run.targets.agent.loop import PREAMBLE, SKILLS_INTRO, AgentTarget
from eval_pipelines.run.targets.agent.scripted import scripted_model
from eval_pipelines.run.targets.agent.tools import WorkspaceTools
from eval_pipelines.run.targets.agent.workspace import SKILLS_DIR, StagingError, stage
from eval_pipelines.run.targets.openai_compat import describe_error

_SKILL_MD_IN_COMMAND = re.compile(r"skills/([A-Za-z0-9][A-Za-z0-9._-]*)/SKILL\.md")


@dataclass(frozen=True)
class OfferedSkill:
    name: str
    description: str


@dataclass
class TriggerRun:
    query_number: int  # 1-based, in the trigger set's order
    run: int  # 0-based
    triggered: bool
    loaded_by: dict[str, Any] | None  # the tool call that read the skill's SKILL.md: {tool, args, step}
    skills_read: list[str]  # every skill whose SKILL.md the run read, in order
    offered: list[str]  # the skills listed, in the order the model saw them
    seed: str
    turns: int = 0
    tool_calls: int = 0
    stopped: str | None = None  # "skill_read", "max_turns", "max_tool_calls" or None (the model answered)
    error: str | None = None
    latency_ms: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    answer: str | None = None
    trace: list[dict[str, Any]] = field(default_factory=list)


class SkillDecided(Exception):
    """Raised by a tool right after a SKILL.md was read: the run stops there."""


def _decided(exc: BaseException) -> bool:
    if isinstance(exc, SkillDecided):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return any(_decided(e) for e in exc.exceptions)
    return isinstance(exc.__cause__, SkillDecided)


def skill_read_by(tool: str, args: dict[str, Any]) -> str | None:
    """The skill whose SKILL.md this tool call reads, if it reads one."""
    if tool == "read_file":
        parts = PurePosixPath(str(args.get("path") or "").replace("\\", "/").removeprefix("./")).parts
        if len(parts) == 3 and parts[0] == SKILLS_DIR and parts[2] == "SKILL.md":
            return parts[1]
        return None
    if tool == "run_command":
        found = _SKILL_MD_IN_COMMAND.search(str(args.get("command") or ""))
        return found.group(1) if found else None
    return None


def instructions(offered: list[OfferedSkill]) -> str:
    listed = "\n".join(f"- {s.name}: {s.description} ({SKILLS_DIR}/{s.name}/SKILL.md)" for s in offered)
    return f"{PREAMBLE}\n\n{SKILLS_INTRO}\n{listed}"


def _stub(skill: OfferedSkill) -> str:
    description = skill.description.replace('"', "'")
    return f'---\nname: {skill.name}\ndescription: "{description}"\n---\n'


async def probe(target: AgentTarget, query: str, query_number: int, run: int, others: list[OfferedSkill],
                max_turns: int, seed: int) -> TriggerRun:
    """One run of one query (see the module's docstring)."""
    from pydantic_ai import Agent, Tool, capture_run_messages
    from pydantic_ai.exceptions import UsageLimitExceeded
    from pydantic_ai.usage import UsageLimits

    skill = target.skill
    assert skill is not None, "a trigger run needs the target's skill"
    run_seed = f"{seed}:{query_number}:{run}"
    offered = [OfferedSkill(skill.name, skill.description), *(o for o in others if o.name != skill.name)]
    random.Random(run_seed).shuffle(offered)
    started = time.perf_counter()
    space = await asyncio.to_thread(stage, skill.root, skill.name, [])
    try:
        for other in offered:
            if other.name != skill.name:
                stub = space.root / SKILLS_DIR / other.name / "SKILL.md"
                stub.parent.mkdir(parents=True, exist_ok=True)
                stub.write_text(_stub(other), encoding="utf-8")
        tools = WorkspaceTools(space.root, target.config, time.monotonic() + target.config.timeout_s)

        def read_file(path: str) -> str:
            text = tools.read_file(path)
            if skill_read_by("read_file", {"path": path}):
                raise SkillDecided
            return text

        def run_command(command: str) -> str:
            text = tools.run_command(command)
            if skill_read_by("run_command", {"command": command}):
                raise SkillDecided
            return text

        if target._script is not None:
            model = scripted_model(target._script, str(query_number), [],
                                   steps=target._script.trigger_steps(query_number))
        else:
            model = target._model()
        system = instructions(offered)
        agent = Agent(model, instructions=system, model_settings=target._settings(), tools=[
            Tool(tools.list_files, name="list_files", description="List the files under a folder of the workspace."),
            Tool(read_file, name="read_file", description="Read a text file of the workspace."),
            Tool(tools.write_file, name="write_file",
                 description="Create or replace a text file in the workspace (folders are made)."),
            Tool(run_command, name="run_command",
                 description="Run a shell command in the workspace (sandboxed: no network, no secrets)."),
        ])
        limits = UsageLimits(request_limit=max_turns, tool_calls_limit=target.config.max_tool_calls)
        stopped = error = answer = None
        with capture_run_messages() as messages:
            try:
                async with asyncio.timeout(target.config.timeout_s):
                    answer = str((await agent.run(query, usage_limits=limits)).output)
            except SkillDecided:
                stopped = "skill_read"
            except UsageLimitExceeded as exc:
                stopped = "max_turns" if "request_limit" in str(exc) else "max_tool_calls"
            except TimeoutError:
                error = f"the agent ran out of time: timeout_s {target.config.timeout_s:g} s"
            except Exception as exc:  # noqa: BLE001 - a failing model call ends as an error row
                if _decided(exc):  # raised by a tool run beside others (an exception group)
                    stopped = "skill_read"
                else:
                    cause = exc.__cause__ if isinstance(exc.__cause__, Exception) else exc
                    error = f"agent run failed: {describe_error(cause, target._api_key)}"
        _, trace, metrics = recording.record(list(messages), system)
    finally:
        await asyncio.to_thread(space.remove)
    read = [(item, name) for item in trace if (name := skill_read_by(item["tool"], item.get("args") or {}))]
    loaded = next((item for item, name in read if name == skill.name), None)
    tokens = bool(metrics["input_tokens"] or metrics["output_tokens"])
    return TriggerRun(
        query_number=query_number, run=run, triggered=loaded is not None,
        loaded_by=None if loaded is None else {k: loaded[k] for k in ("tool", "args", "step")},
        skills_read=[name for _, name in read], offered=[s.name for s in offered], seed=run_seed,
        turns=metrics["turns"], tool_calls=len(trace), stopped=stopped, error=error,
        latency_ms=(time.perf_counter() - started) * 1000,
        prompt_tokens=metrics["input_tokens"] if tokens else None,
        completion_tokens=metrics["output_tokens"] if tokens else None, answer=answer,
        trace=[{k: v for k, v in item.items() if k != "result"} for item in trace])


async def probe_all(target: AgentTarget, queries: list[str], runs: int, others: list[OfferedSkill],
                    max_turns: int, seed: int = 0) -> list[TriggerRun]:
    """Every query ``runs`` times, at most the target's ``concurrency`` at once, in query order."""
    gate = asyncio.Semaphore(target.concurrency)

    async def one(number: int, query: str, run: int) -> TriggerRun:
        async with gate:
            try:
                return await probe(target, query, number, run, others, max_turns, seed)
            except StagingError as exc:
                return TriggerRun(number, run, False, None, [], [], f"{seed}:{number}:{run}",
                                  error=f"workspace: {exc}")

    try:
        return list(await asyncio.gather(*(one(n, q, r) for n, q in enumerate(queries, 1) for r in range(runs))))
    finally:
        await target.aclose()

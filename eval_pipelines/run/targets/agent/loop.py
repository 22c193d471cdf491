"""``AgentTarget``: Pydantic AI's agent loop over an OpenAI-compatible model, with the skill installed.

The model is told, in its instructions, each installed skill's name and description (SKILL.md's
front matter) and where its SKILL.md is; never the body, which it reads with ``read_file`` when it
decides to, as agents load skills. The suite's own system prompt, when it is not the skill's body
(skill packages put the body there for chat targets), is added after. The user message is the case's
prompt, followed by the list of input files staged in the workspace.

Per case: a fresh workspace (``workspace.stage``), the tools (``tools.WorkspaceTools``), at most
``max_turns`` model responses and ``max_tool_calls`` tool calls (Pydantic AI's ``UsageLimits``),
``timeout_s`` of wall time for everything. A run that reaches a limit is an output (the last text
the model wrote) with ``run_metrics["stopped"]`` saying which; a run out of time, or whose model
calls fail, is an error row, with its transcript and files kept all the same.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import openai

from eval_pipelines.run.targets.agent import recording
from eval_pipelines.run.targets.agent.scripted import load_script, scripted_model
from eval_pipelines.run.targets.agent.skill_info import SkillInfo, user_prompt  # noqa: F401 - used here, and by importers
from eval_pipelines.run.targets.agent.tools import WorkspaceTools
from eval_pipelines.run.targets.agent.workspace import StagingError, changed_files, deleted_files, stage
from eval_pipelines.run.targets.base import ModelOutput, TargetRequest
from eval_pipelines.run.targets.config import AgentTargetConfig
from eval_pipelines.run.targets.openai_compat import describe_error

PREAMBLE = (
    "You work in a folder, your workspace, with four tools: list_files, read_file and write_file (paths "
    "relative to the workspace) and run_command (a shell command run in the workspace). Files you are asked "
    "to produce go in the workspace.")
SKILLS_INTRO = (
    "Skills are installed under skills/. A skill's SKILL.md holds its instructions: when a skill fits the "
    "task, read its SKILL.md first, then the files it points to as you need them, and run its scripts with "
    "run_command.\n\nAvailable skills:")


def instructions(skill: SkillInfo | None, system_prompt: str | None) -> str:
    parts = [PREAMBLE]
    if skill is not None:
        parts.append(f"{SKILLS_INTRO}\n- {skill.name}: {skill.description} (skills/{skill.name}/SKILL.md)")
    own = (system_prompt or "").strip()
    # The suite's system prompt is SKILL.md's body unless the suite brings its own: compared with line
    # ends and spacing normalised (a CRLF SKILL.md reads back with LF here), else the body the agent
    # must read through read_file would reach it in the instructions.
    if own and (skill is None or own.split() != skill.body.split()):
        parts.append(own)
    return "\n\n".join(parts)


class AgentTarget:
    takes_input_files = True  # staged in the workspace (engine.files_refusal)

    def __init__(self, config: AgentTargetConfig, base_dir: Path, *, api_key: str | None, base_url: str | None,
                 withheld_key: str | None = None, with_skill: bool = True) -> None:
        self.config = config
        self.name = config.name
        self.concurrency = config.concurrency
        self._api_key = api_key
        self._withheld_key = withheld_key
        from eval_pipelines.suite.package import skill_folder

        # The skill's own folder: base_dir (the package root) or, for a plugin repository, skills/<name>/.
        skill_dir = skill_folder(base_dir)
        # without_skill (the baseline of the skill's uplift): nothing staged, nothing listed to the model.
        self.skill = SkillInfo(skill_dir) if skill_dir is not None and with_skill else None
        # A deterministic stand-in for the model (``script:``), read now so a bad script fails the load.
        self._script = load_script(base_dir / config.script) if config.script else None
        self._client = openai.AsyncOpenAI(
            api_key=api_key or "no-key", base_url=base_url, max_retries=config.max_retries,
            timeout=config.timeout_s)

    def _model(self, request: TargetRequest | None = None) -> Any:
        if self._script is not None and request is not None:
            return scripted_model(self._script, request.test_id, [f.path for f in request.input_files])
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        return OpenAIChatModel(self.config.model, provider=OpenAIProvider(openai_client=self._client))

    def _settings(self) -> dict[str, Any]:
        settings: dict[str, Any] = {}
        if self.config.temperature is not None:
            settings["temperature"] = self.config.temperature
        if self.config.max_tokens is not None:
            settings["max_tokens"] = self.config.max_tokens
        if not self._api_key:
            # Without a key no Authorization header at all, as the openai target (never a placeholder
            # bearer); the client accepts that only as a request's own header.
            settings["extra_headers"] = {"Authorization": openai.omit}
        return settings

    def _cost(self, input_tokens: int, output_tokens: int) -> float | None:
        if self.config.price_input_per_million == 0 and self.config.price_output_per_million == 0:
            return None  # unknown, not free: a cost gate must not pass silently
        return (input_tokens * self.config.price_input_per_million
                + output_tokens * self.config.price_output_per_million) / 1_000_000

    async def generate(self, request: TargetRequest) -> ModelOutput:
        started = time.perf_counter()
        limits = self.config.limits()
        try:
            space = await asyncio.to_thread(stage, self.skill.root if self.skill else None,
                                            self.skill.name if self.skill else None, request.input_files)
        except StagingError as exc:
            return ModelOutput(request.test_id, self.name, request.trial, None, error=f"workspace: {exc}",
                               attempts=0, limits=limits)
        try:
            return await self._run(request, space, started, limits)
        finally:
            await asyncio.to_thread(space.remove)

    async def _run(self, request: TargetRequest, space: Any, started: float, limits: dict[str, Any]) -> ModelOutput:
        from pydantic_ai import Agent, Tool, capture_run_messages
        from pydantic_ai.exceptions import UsageLimitExceeded
        from pydantic_ai.usage import UsageLimits

        deadline = time.monotonic() + self.config.timeout_s
        tools = WorkspaceTools(space.root, self.config, deadline)
        system = instructions(self.skill, request.system_prompt)
        agent = Agent(self._model(request), instructions=system, model_settings=self._settings(), tools=[
            Tool(tools.list_files, name="list_files", description="List the files under a folder of the workspace."),
            Tool(tools.read_file, name="read_file", description="Read a text file of the workspace."),
            Tool(tools.write_file, name="write_file",
                 description="Create or replace a text file in the workspace (folders are made)."),
            Tool(tools.run_command, name="run_command",
                 description="Run a shell command in the workspace (sandboxed: no network, no secrets)."),
        ])
        usage_limits = UsageLimits(request_limit=self.config.max_turns, tool_calls_limit=self.config.max_tool_calls)
        answer: str | None = None
        error: str | None = None
        stopped: str | None = None
        with capture_run_messages() as messages:
            try:
                async with asyncio.timeout(self.config.timeout_s):
                    result = await agent.run(user_prompt(request), usage_limits=usage_limits)
                answer = str(result.output)
            except UsageLimitExceeded as exc:
                stopped = str(exc)
            except TimeoutError:
                error = f"the agent ran out of time: timeout_s {self.config.timeout_s:g} s"
            except Exception as exc:  # noqa: BLE001 - a failing model call ends as an error row
                cause = exc.__cause__ if isinstance(exc.__cause__, Exception) else exc
                error = f"agent run failed: {describe_error(cause, self._api_key)}"
                if self._withheld_key:
                    error += f" ({self._withheld_key})"
        transcript, trace, metrics = recording.record(list(messages), system)
        if stopped is not None:
            answer = recording.final_text(list(messages))
            if trace:
                trace[-1]["stopped"] = "max_turns" if "request_limit" in stopped else "max_tool_calls"
        files = await asyncio.to_thread(changed_files, space)
        wall_ms = (time.perf_counter() - started) * 1000
        metrics.update(errors=tools.errors + (error is not None), commands=tools.commands, stopped=stopped,
                       wall_time_ms=round(wall_ms, 1), files_created=[f["path"] for f in files],
                       files_deleted=deleted_files(space),
                       output_chars=sum(len(f["text"] or "") for f in files), input_files=list(space.staged))
        tokens_in, tokens_out = metrics["input_tokens"], metrics["output_tokens"]
        has_usage = bool(tokens_in or tokens_out)
        cost = self._cost(tokens_in, tokens_out) if has_usage else None
        metrics["cost_usd"] = cost
        return ModelOutput(
            request.test_id, self.name, request.trial, None if error else (answer or ""), error=error,
            latency_ms=wall_ms, prompt_tokens=tokens_in if has_usage else None,
            completion_tokens=tokens_out if has_usage else None, cost_usd=cost,
            attempts=max(1, metrics["turns"]), llm_calls=metrics["turns"], tool_calls=len(trace), trace=trace,
            files=files, transcript=transcript, run_metrics=metrics, limits=limits)

    async def aclose(self) -> None:
        await self._client.close()

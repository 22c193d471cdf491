"""AgentV's ``prompt: {command: [...]}``: a judge prompt written by a program.

The program gets the same JSON on stdin as a ``code_judge`` (input, output,
expected, criteria, trace, config, and AgentV's names of them) and prints the
prompt on stdout. It runs like a code judge (sandboxed, no secrets, limits,
timeout); a failure is an ``error`` grade naming the problem.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from eval_pipelines.grading.base import GradeInput


class PromptCommand(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str | list[str] = Field(min_length=1)
    timeout_ms: int = Field(default=30_000, gt=0)
    config: dict[str, Any] = {}


class PromptCommandFailed(Exception):
    """The prompt program could not run or printed nothing."""


async def prompt_from_command(spec: PromptCommand, inp: GradeInput) -> str:
    import json
    from pathlib import Path

    from eval_pipelines.grading.graders.code_judge import CodeJudgeParams, _payload, _Problem, _program
    from eval_pipelines.run.sandbox.runner import arun_sandboxed

    params = CodeJudgeParams(command=spec.command, config=spec.config, timeout_ms=spec.timeout_ms)
    base = Path(inp.suite_dir) if inp.suite_dir is not None else Path.cwd()
    try:
        argv, files = _program(params, base)
    except _Problem as exc:
        raise PromptCommandFailed(str(exc)) from None
    result = await arun_sandboxed(argv, stdin=json.dumps(_payload(params, inp), default=str).encode(),
                                  timeout_s=spec.timeout_ms / 1000, memory_mb=params.memory_mb, files=files)
    if result.error or result.timed_out or result.returncode != 0:
        why = result.error or ("timed out" if result.timed_out else f"exited with {result.returncode}")
        raise PromptCommandFailed(f"prompt command {why}; stderr: {result.stderr_tail(300)}")
    text = result.stdout_text().strip()
    if not text:
        raise PromptCommandFailed("prompt command printed nothing")
    return text

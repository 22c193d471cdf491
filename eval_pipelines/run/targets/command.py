"""Command: run a skill's own program with the test input on stdin.

The program runs in the skill package folder with a timeout; its own process
group is killed whole on timeout. Its environment is the caller's minus
anything that looks like a secret, because skill scripts are not trusted with
API keys they do not need.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import signal
import sys
import time
from pathlib import Path

from eval_pipelines.run.targets.base import ModelOutput, TargetRequest
from eval_pipelines.run.targets.config import CommandTargetConfig

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)
MAX_OUTPUT_BYTES = 1_000_000


def scrubbed_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not _SECRET_NAME.search(k)}


class CommandTarget:
    def __init__(self, config: CommandTargetConfig, base_dir: Path, extra_env: dict[str, str] | None = None) -> None:
        self.extra_env = dict(extra_env or {})
        self.name = config.name
        self.concurrency = config.concurrency
        self.timeout_s = config.timeout_s
        self.cwd = base_dir
        argv = shlex.split(config.command) if isinstance(config.command, str) else list(config.command)
        # `python` means the interpreter running the pipeline, so skills work in a venv.
        if argv and argv[0] in ("python", "python3"):
            argv[0] = sys.executable
        self.argv = argv

    async def generate(self, request: TargetRequest) -> ModelOutput:
        started = time.perf_counter()
        timeout = min(self.timeout_s, request.timeout_s)
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env=scrubbed_environment() | self.extra_env,
                start_new_session=True,
            )
        except OSError as exc:
            return ModelOutput(request.test_id, self.name, request.trial, None,
                               error=f"cannot start {self.argv[0]!r}: {exc.strerror or exc}")
        try:
            stdout, stderr = await asyncio.wait_for(
                proc.communicate(request.user_text.encode()), timeout
            )
        except asyncio.TimeoutError:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            await proc.wait()
            return ModelOutput(request.test_id, self.name, request.trial, None,
                               error=f"command timed out after {timeout:g} s",
                               latency_ms=(time.perf_counter() - started) * 1000)
        latency = (time.perf_counter() - started) * 1000
        text = stdout[:MAX_OUTPUT_BYTES].decode("utf-8", errors="replace")
        if proc.returncode != 0:
            tail = stderr[-500:].decode("utf-8", errors="replace").strip()
            return ModelOutput(request.test_id, self.name, request.trial, None,
                               error=f"command exited with {proc.returncode}: {tail}",
                               latency_ms=latency)
        return ModelOutput(request.test_id, self.name, request.trial, text.rstrip("\n"),
                           latency_ms=latency, llm_calls=0)

    async def aclose(self) -> None:
        return None

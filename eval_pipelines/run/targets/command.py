"""Command: run a skill's own program with the test input on stdin.

Skill packages are uploaded by others (seed 000 is a marketplace), so their
programs are untrusted code and run in :mod:`eval_pipelines.run.sandbox.runner`, like
judges: a copy of the package folder as the working directory, the clean
environment (``PATH``, ``LANG``, ``HOME``, ``TMPDIR``, plus ``EVAL_WORKSPACE``
and the workspace's setup variables when the suite has a workspace, which is
then the one other writable folder), no network unless the target says
``network: true``, resource limits, and the timeout. The sandbox's level is
refused when too weak, unless the operator allows it; the error row says so.
A case whose messages hold image or audio parts is not run: its error row says why.
"""

from __future__ import annotations

import re
import shlex
import time
from pathlib import Path

from eval_pipelines.run.tracing import otlp_receiver as otlp_sandbox
from eval_pipelines.run.targets.base import ModelOutput, TargetRequest
from eval_pipelines.run.tracing.spans import OutputTrace, parse_traceparent
from eval_pipelines.run.targets.config import CommandTargetConfig

# Variables handed to untrusted programs are chosen by the suite; names like these are dropped anyway.
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)
MAX_OUTPUT_BYTES = 1_000_000


def _received(stdout: str, traceparent: str) -> tuple[str, OutputTrace]:
    """The command's own output and the trace its receiver collected (spans of our trace only)."""
    trace_id = (parse_traceparent(traceparent) or ("",))[0]
    output, bodies, dropped = otlp_sandbox.read_traced(stdout)
    if bodies is None:
        return output, OutputTrace(trace_id, (), "the OTLP receiver gave no report (killed before it could)")
    spans, error = otlp_sandbox.spans_of_bodies(bodies)
    if dropped and error is None:
        error = (f"{dropped} OTLP bodies refused as too large (over {otlp_sandbox.MAX_BODY_BYTES // 2**20} MB, "
                 f"or over {otlp_sandbox.MAX_TOTAL_BYTES // 2**20} MB in all)")
    return output, OutputTrace(trace_id, tuple(s for s in spans if s.trace_id == trace_id), error)


class CommandTarget:
    def __init__(self, config: CommandTargetConfig, base_dir: Path, extra_env: dict[str, str] | None = None) -> None:
        # Variables a suite's workspace set: never secrets, but checked like the rest of the environment.
        self.extra_env = {k: v for k, v in (extra_env or {}).items() if not SECRET_NAME.search(k)}
        self.name = config.name
        self.concurrency = config.concurrency
        self.timeout_s = config.timeout_s
        self.memory_mb = config.memory_mb
        self.network = config.network
        self.cwd = base_dir
        self.argv = shlex.split(config.command) if isinstance(config.command, str) else list(config.command)
        workspace = self.extra_env.get("EVAL_WORKSPACE")
        self.writable = (Path(workspace),) if workspace and Path(workspace).is_dir() else ()

    async def generate(self, request: TargetRequest) -> ModelOutput:
        from eval_pipelines.run.sandbox.runner import arun_sandboxed

        started = time.perf_counter()
        timeout = min(self.timeout_s, request.timeout_s)
        if not self.argv:
            return ModelOutput(request.test_id, self.name, request.trial, None, error="empty command")
        media = sorted({p.type for m in request.messages for p in m.parts or [] if p.type != "text"})
        if media:  # stdin is text: the image or audio would be lost, so the case is refused, not run
            return ModelOutput(request.test_id, self.name, request.trial, None,
                               error=f"a command target cannot take {', '.join(media)} content parts "
                                     "(its stdin is text); run this case on an OpenAI-compatible target")
        argv, env = self.argv, self.extra_env
        if request.traceparent:  # a traced suite: promptfoo's receiver, in the sandbox (run/tracing/otlp_receiver.py)
            argv = otlp_sandbox.wrap(self.argv, request.otlp_port, list(request.otlp_formats))
            env = {**self.extra_env, "TRACEPARENT": request.traceparent}
        result = await arun_sandboxed(
            argv,
            stdin=request.user_text.encode(),
            timeout_s=timeout,
            memory_mb=self.memory_mb,
            max_output_bytes=MAX_OUTPUT_BYTES + (otlp_sandbox.REPORT_BYTES if request.traceparent else 0),
            copy_from=self.cwd,
            writable=self.writable,
            extra_env=env,
            network=self.network,
        )
        latency = (time.perf_counter() - started) * 1000
        stdout, otel = result.stdout_text(), None
        if request.traceparent:
            stdout, otel = _received(stdout, request.traceparent)
        if result.error:
            return ModelOutput(request.test_id, self.name, request.trial, None,
                               error=f"cannot start {self.argv[0]!r}: {result.error} [sandbox: {result.isolation}]",
                               latency_ms=latency)
        if result.timed_out:
            return ModelOutput(request.test_id, self.name, request.trial, None,
                               error=f"command timed out after {timeout:g} s", latency_ms=latency)
        if result.returncode != 0:
            return ModelOutput(request.test_id, self.name, request.trial, None,
                               error=f"command exited with {result.returncode}: {result.stderr_tail()}",
                               latency_ms=latency, otel=otel)
        return ModelOutput(request.test_id, self.name, request.trial, stdout.rstrip("\n"),
                           latency_ms=latency, llm_calls=0, otel=otel)

    async def aclose(self) -> None:
        return None

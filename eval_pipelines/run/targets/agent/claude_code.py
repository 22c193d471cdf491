"""``ClaudeCodeTarget``: the Claude Code CLI with the skill installed, one sandboxed run per case.

Per case (docs/claude-code.md has the CLI facts this rests on):

* a fresh workspace (``workspace.stage``, as the agent target) with the skill under
  ``.claude/skills/<name>/`` (where the CLI discovers project skills) and the case's input files;
* ``claude -p --output-format stream-json --verbose --no-session-persistence --tools ...
  --allowedTools ... --max-turns N [--model M] [--append-system-prompt S]``, the prompt on stdin
  (a prompt starting with ``-`` is not read as an option), run by ``arun_sandboxed`` in the
  workspace: an environment of PATH/LANG/HOME/TMPDIR and the CLI's switches that turn telemetry and
  other traffic off; HOME is the sandbox's fresh folder, so none of the operator's CLI settings or
  logins are read; memory/CPU/time limits; everything it started is killed at the case's end;
* without ``network: true`` the sandbox has no network and the CLI reaches the model's host only
  through ``model_bridge.ModelBridge`` (a Unix socket piped to that one host and port), which also
  adds the key (the value of the target's ``api_key_env``) to each request: the sandbox holds a
  placeholder, so the skill's scripts cannot read the key. With ``network: true`` the CLI connects
  itself and gets the key as ``ANTHROPIC_API_KEY``, the one secret in its environment;
* its stream (``claude_stream``) becomes the output: final answer, transcript, tool calls as the
  trace ``tool_trajectory`` reads, tokens, cost, turns, wall time; the files it created or changed
  in the workspace are kept as the agent target keeps them.

A failure (the CLI missing, a non-zero exit without an answer, a stream without a result, the
time limit) is an error row with one line, the transcript and files kept. Failing model calls are
retried by the CLI itself (``max_retries`` -> ``CLAUDE_CODE_MAX_RETRIES``); the whole run is not
re-run (its tool calls would run twice): a suite's ``retries`` re-runs a failed case.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any

from eval_pipelines.run.targets.agent import claude_record
from eval_pipelines.run.targets.agent.claude_stream import parse_claude_stream
from eval_pipelines.run.targets.agent.model_bridge import ModelBridge
from eval_pipelines.run.targets.agent.skill_info import SkillInfo, user_prompt
from eval_pipelines.run.targets.agent.workspace import StagingError, changed_files, deleted_files, stage
from eval_pipelines.run.targets.base import ModelOutput, TargetRequest
from eval_pipelines.run.targets.config import ClaudeCodeTargetConfig

CLAUDE_SKILLS_DIR = ".claude/skills"
# Telemetry, error reports, auto-update and other non-essential traffic off (the CLI's documented
# switches): with them the CLI contacted nothing but the model (strace, docs/claude-code.md).
QUIET_ENV = {"DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1", "DISABLE_AUTOUPDATER": "1",
             "DISABLE_BUG_COMMAND": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
# The CLI's key when the real one stays outside the sandbox (the bridge adds it to each request), or
# when no key may go (none set, or withheld by the key policy): the CLI is always given a key
# (without one it ends at once, "Not logged in · Please run /login"), and a local server that needs
# no key still answers.
PLACEHOLDER_KEY = "sk-ant-placeholder-not-a-key"
MAX_STREAM_BYTES = 32 * 1024 * 1024
NPM_TOOLS_BIN = ".npm-tools/node_modules/.bin/claude"
INSTALL_HINT = "npm install --prefix .npm-tools @anthropic-ai/claude-code (docs/claude-code.md)"


def find_cli(binary: str | None, project: Path | None = None) -> Path | None:
    """The CLI's executable: ``binary`` (a path, or a name on PATH) when given; else ``claude`` on
    PATH, else ``.npm-tools/node_modules/.bin/claude`` of the project (the current folder) or of
    this checkout. Links are resolved (the sandbox runs the file itself)."""
    if binary:
        found = shutil.which(binary) if os.sep not in binary else binary
        candidates = [found]
    else:
        roots = [project or Path.cwd(), Path(__file__).resolve().parents[4]]
        candidates = [shutil.which("claude"), *(str(root / NPM_TOOLS_BIN) for root in roots)]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return Path(candidate).resolve()
    return None


def command_line(config: ClaudeCodeTargetConfig, cli: Path, appended_system: str | None) -> list[str]:
    """The CLI's arguments; the prompt goes on stdin."""
    # --tools takes names, --allowedTools rules (``Bash(git:*)``): a rule offers its tool.
    names = list(dict.fromkeys(re.sub(r"\(.*\)$", "", tool) for tool in config.allowed_tools))
    argv = [str(cli), "-p", "--output-format", "stream-json", "--verbose", "--no-session-persistence",
            "--tools", ",".join(names), "--allowedTools", ",".join(config.allowed_tools),
            "--max-turns", str(config.max_turns)]
    if config.model:
        argv += ["--model", config.model]
    if appended_system:
        argv += ["--append-system-prompt", appended_system]
    return argv


def environment(config: ClaudeCodeTargetConfig, api_key: str | None, base_url: str | None,
                bridge: ModelBridge | None) -> dict[str, str]:
    """What the sandbox adds to its PATH/LANG/HOME/TMPDIR. With the bridge, no secret at all (the
    bridge adds the key on the host side); with ``network: true``, the key (the CLI sends it itself)."""
    sent_key = api_key if bridge is None and api_key else PLACEHOLDER_KEY
    env = {**QUIET_ENV, "ANTHROPIC_API_KEY": sent_key,
           "CLAUDE_CODE_MAX_RETRIES": str(config.max_retries)}
    if bridge is not None:
        env["ANTHROPIC_UNIX_SOCKET"] = str(bridge.socket)
        env["ANTHROPIC_BASE_URL"] = bridge.upstream.cli_base_url
    elif base_url:
        env["ANTHROPIC_BASE_URL"] = base_url
    return env


def appended_system_prompt(system_prompt: str | None, skill_body: str | None) -> str | None:
    """The suite's own system prompt, unless it is the skill's body (which skill packages set for chat
    targets; the CLI must load it through its Skill tool), compared with spacing normalised."""
    own = (system_prompt or "").strip()
    if not own or (skill_body is not None and own.split() == skill_body.split()):
        return None
    return own


class ClaudeCodeTarget:
    takes_input_files = True  # staged in the workspace (engine.files_refusal)

    def __init__(self, config: ClaudeCodeTargetConfig, base_dir: Path, *, api_key: str | None,
                 base_url: str | None, withheld_key: str | None = None, with_skill: bool = True) -> None:
        from eval_pipelines.suite.package import skill_folder

        self.config = config
        self.name = config.name
        self.concurrency = config.concurrency
        self._api_key = api_key
        self._base_url = base_url
        self._withheld_key = withheld_key
        skill_dir = skill_folder(base_dir)
        # without_skill (the baseline configuration): nothing under .claude/skills/, nothing listed
        self.skill = SkillInfo(skill_dir) if skill_dir is not None and with_skill else None
        self.cli = find_cli(config.binary)

    def _error(self, request: TargetRequest, message: str) -> ModelOutput:
        return ModelOutput(request.test_id, self.name, request.trial, None, error=message, attempts=0,
                           limits=self.config.limits())

    async def generate(self, request: TargetRequest) -> ModelOutput:
        started = time.perf_counter()
        if self.cli is None:
            where = f"{self.config.binary!r} not found" if self.config.binary else \
                f"no `claude` on PATH nor {NPM_TOOLS_BIN}"
            return self._error(request, f"claude_code target {self.name!r}: the Claude Code CLI is missing "
                                        f"({where}; install it: {INSTALL_HINT})")
        try:
            space = await asyncio.to_thread(stage, self.skill.root if self.skill else None,
                                            self.skill.name if self.skill else None, request.input_files,
                                            CLAUDE_SKILLS_DIR)
        except StagingError as exc:
            return self._error(request, f"workspace: {exc}")
        try:
            return await self._run(request, space, started)
        finally:
            await asyncio.to_thread(space.remove)

    async def _run(self, request: TargetRequest, space: Any, started: float) -> ModelOutput:
        from eval_pipelines.run.sandbox.runner import arun_sandboxed

        prompt = user_prompt(request)
        appended = appended_system_prompt(request.system_prompt, self.skill.body if self.skill else None)
        try:
            bridge = None if self.config.network else ModelBridge(self._base_url, self._api_key)
        except ValueError as exc:
            return self._error(request, f"claude_code target {self.name!r}: {exc}")
        async with bridge if bridge is not None else contextlib.nullcontext():
            result = await arun_sandboxed(
                command_line(self.config, self.cli, appended), stdin=prompt.encode("utf-8"),
                timeout_s=self.config.timeout_s, memory_mb=self.config.memory_mb, cpu_s=self.config.cpu_s,
                writable=(space.root, *((bridge.folder,) if bridge else ())), cwd=space.root,
                extra_env=environment(self.config, self._api_key, self._base_url, bridge),
                network=self.config.network, max_output_bytes=MAX_STREAM_BYTES)
        run = parse_claude_stream(result.stdout)
        stopped = "max_turns" if run.result is not None and run.result.subtype == "error_max_turns" else None
        error = None if stopped else self._failure(result, run, bridge)
        answer = None if error else ((run.last_text or "") if stopped else (run.answer or ""))
        items = claude_record.transcript(run, prompt, appended)
        trace = claude_record.trace(run)
        metrics = claude_record.metrics(run, items, trace)
        files = await asyncio.to_thread(changed_files, space)
        wall_ms = (time.perf_counter() - started) * 1000
        tokens_in = metrics["input_tokens"] + metrics["cache_read_input_tokens"] + metrics["cache_creation_input_tokens"]
        tokens_out = metrics["output_tokens"]
        has_usage = bool(tokens_in or tokens_out)
        cost = self._cost(run, tokens_in, tokens_out) if has_usage else None
        metrics.update(cost_usd=cost, wall_time_ms=round(wall_ms, 1), stopped=stopped,
                       errors=metrics["tool_errors"] + (error is not None),
                       files_created=[f["path"] for f in files], files_deleted=deleted_files(space),
                       output_chars=sum(len(f["text"] or "") for f in files), input_files=list(space.staged))
        metrics["claude_code"].update(exit_code=result.returncode, sandbox=result.isolation,
                                      network="host" if self.config.network else "model host only (socket)",
                                      bridge_connections=bridge.connections if bridge else None,
                                      bridge_failures=bridge.failures[:5] if bridge else [])
        return ModelOutput(
            request.test_id, self.name, request.trial, answer, error=error, latency_ms=wall_ms,
            prompt_tokens=tokens_in if has_usage else None, completion_tokens=tokens_out if has_usage else None,
            cost_usd=cost, attempts=1, llm_calls=run.turns, tool_calls=len(trace), trace=trace, files=files,
            transcript=items, run_metrics=metrics, limits=self.config.limits())

    def _failure(self, result: Any, run: Any, bridge: ModelBridge | None) -> str | None:
        """One line when the run failed, else None."""
        why = self._why(result, run, bridge)
        return None if why is None else " ".join(why.split())

    def _why(self, result: Any, run: Any, bridge: ModelBridge | None) -> str | None:
        if result.error:
            return f"claude code could not run: {result.error} [sandbox: {result.isolation}]"
        if result.timed_out:
            return f"claude code ran out of time: timeout_s {self.config.timeout_s:g} s (killed)"
        why = run.error
        if why is None and result.returncode != 0:
            why = f"claude code exited with code {result.returncode}"
        if why is None:
            return None
        if run.result is None:
            stderr = " ".join(result.stderr_tail(300).split())
            if result.output_truncated:
                why += f"; its output passed {MAX_STREAM_BYTES // 2**20} MB and was cut"
            elif result.returncode not in (0, None):
                why += f" (exit code {result.returncode}{': ' + stderr if stderr else ''})"
        if bridge is not None and bridge.failures:
            why += f"; the model was unreachable: {bridge.failures[-1]}"
        if self._withheld_key:
            why += f" ({self._withheld_key})"
        elif not self._api_key:
            why += f" (no key in ${self.config.api_key_env}: a placeholder was sent)"
        return why

    def _cost(self, run: Any, tokens_in: int, tokens_out: int) -> float | None:
        if run.result is not None and run.result.total_cost_usd is not None:
            return run.result.total_cost_usd
        if self.config.price_input_per_million == 0 and self.config.price_output_per_million == 0:
            return None  # unknown, not free: a cost gate must not pass silently
        return (tokens_in * self.config.price_input_per_million
                + tokens_out * self.config.price_output_per_million) / 1_000_000

    async def aclose(self) -> None:
        return None

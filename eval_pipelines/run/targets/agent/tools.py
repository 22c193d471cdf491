"""The four tools an agent target offers, all inside its case's workspace.

* ``list_files(path=".")``: the files and folders below ``path`` (sizes), at most ``MAX_LISTED`` entries.
* ``read_file(path)``: a text file's content (up to ``MAX_READ_CHARS``); a binary file is described
  (size, sha256), not sent.
* ``write_file(path, content)``: creates or replaces a text file, making its folders.
* ``run_command(command)``: ``sh -c command`` in the workspace, through the project's sandbox
  (run/sandbox/runner.py): a clean environment without the operator's keys, no network unless the target
  says ``network: true``, memory/CPU/time limits, nothing left running after it returns. Its exit
  code, stdout and stderr come back (each cut at ``MAX_COMMAND_OUTPUT_CHARS``).

A path is relative to the workspace (an absolute one must lie inside it); it is resolved with its
links and refused when it leads outside. A refused or failed call answers with a text starting
``error:`` (the model sees it and may try again) and counts as an error in the run's metrics.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from eval_pipelines.run.targets.config import AgentTargetConfig

MAX_LISTED = 500
MAX_READ_CHARS = 50_000
MAX_COMMAND_OUTPUT_CHARS = 20_000
MAX_WRITE_BYTES = 10 * 1024 * 1024
TOOL_NAMES = ("list_files", "read_file", "write_file", "run_command")


class ToolRefused(Exception):
    """A call the tool will not carry out; its text goes back to the model."""


class WorkspaceTools:
    def __init__(self, root: Path, config: AgentTargetConfig, deadline: float | None = None) -> None:
        self.root = root.resolve()
        self.config = config
        # The case's end (time.monotonic()): no command runs past it, so none outlives the case.
        self.deadline = deadline
        self.errors = 0
        self.commands: list[dict[str, object]] = []  # per run_command: exit code, timed out, sandbox level

    def _path(self, written: str) -> Path:
        raw = Path(written or ".")
        target = (raw if raw.is_absolute() else self.root / raw).resolve()
        if target != self.root and not target.is_relative_to(self.root):
            raise ToolRefused(f"{written!r} is outside the workspace")
        return target

    def _relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() or "."

    def failed(self, message: str) -> str:
        self.errors += 1
        return f"error: {message}"

    def list_files(self, path: str = ".") -> str:
        try:
            top = self._path(path)
        except ToolRefused as exc:
            return self.failed(str(exc))
        if not top.is_dir():
            return self.failed(f"{path!r} is not a folder")
        lines: list[str] = []
        for folder, dirs, names in os.walk(top):
            dirs.sort()
            here = Path(folder)
            for name in sorted(names):
                file = here / name
                size = file.lstat().st_size
                lines.append(f"{self._relative(file)}  ({size} bytes)")
                if len(lines) >= MAX_LISTED:
                    return "\n".join(lines + [f"... (stopped at {MAX_LISTED} entries)"])
        return "\n".join(lines) or "(no files)"

    def read_file(self, path: str) -> str:
        try:
            file = self._path(path)
        except ToolRefused as exc:
            return self.failed(str(exc))
        if not file.is_file():
            return self.failed(f"no file {path!r}")
        data = file.read_bytes()
        try:
            if b"\0" in data[:8192]:
                raise UnicodeDecodeError("utf-8", data[:1], 0, 1, "NUL byte")
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return (f"{path} is a binary file ({len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}); "
                    "use run_command with a program that reads it")
        if len(text) > MAX_READ_CHARS:
            return text[:MAX_READ_CHARS] + f"\n... (cut at {MAX_READ_CHARS} of {len(text)} characters)"
        return text

    def write_file(self, path: str, content: str) -> str:
        try:
            file = self._path(path)
        except ToolRefused as exc:
            return self.failed(str(exc))
        data = content.encode("utf-8")
        if len(data) > MAX_WRITE_BYTES:
            return self.failed(f"content is {len(data)} bytes, at most {MAX_WRITE_BYTES}")
        if file.is_dir():
            return self.failed(f"{path!r} is a folder")
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(data)
        return f"wrote {self._relative(file)} ({len(data)} bytes)"

    async def run_command(self, command: str) -> str:
        from eval_pipelines.run.sandbox.runner import arun_sandboxed

        if not command.strip():
            return self.failed("empty command")
        timeout = self.config.command_timeout_s
        if self.deadline is not None:
            timeout = min(timeout, self.deadline - time.monotonic())
            if timeout <= 0:
                return self.failed("the case's time is up")
        result = await arun_sandboxed(
            ["sh", "-c", command], stdin=b"", timeout_s=timeout,
            memory_mb=self.config.memory_mb, cpu_s=self.config.command_cpu_s, writable=(self.root,), cwd=self.root,
            network=self.config.network,
            max_output_bytes=4 * MAX_COMMAND_OUTPUT_CHARS)
        self.commands.append({"exit_code": result.returncode, "timed_out": result.timed_out,
                              "sandbox": result.isolation})
        if result.error:
            return self.failed(f"the command could not run: {result.error} [sandbox: {result.isolation}]")
        head = (f"timed out after {timeout:g} s (killed)" if result.timed_out
                else f"exit code {result.returncode}")
        if result.timed_out or result.returncode != 0:
            self.errors += 1
        return "\n".join([head, "stdout:", _cut(result.stdout_text()), "stderr:",
                          _cut(result.stderr.decode("utf-8", errors="replace"))])


def _cut(text: str) -> str:
    if len(text) <= MAX_COMMAND_OUTPUT_CHARS:
        return text
    return text[:MAX_COMMAND_OUTPUT_CHARS] + f"\n... (cut at {MAX_COMMAND_OUTPUT_CHARS} of {len(text)} characters)"

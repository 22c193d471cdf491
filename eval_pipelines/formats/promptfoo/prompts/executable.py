"""promptfoo's executable prompts (``exec:./script.sh``, ``exec:python3 gen.py --flag``).

promptfoo (src/prompts/processors/executable.ts) runs the command with ``execFile``, the prompt
context ``{vars, provider: {id, label}, config}`` as JSON appended as the last argument; its
standard output, with ANSI escapes removed and trimmed, is the prompt (then rendered as a
template, as any function prompt's result). Standard error with no standard output, or a
non-zero exit, is an error; the default timeout is 60 s.

Here the command is untrusted code and runs in the sandbox (``run.sandbox``), once per distinct
context: the files it names that lie beside the config (the script, and any argument naming a
file there) are copied into the sandbox's empty directory under the same relative paths, the
command is run there with an environment without secrets and no network. A program named by a
bare word (``python3``, ``ruby``, ``bash``) is looked up on the PATH. A command naming no file
beside the config, or a file that is absent, is a one-line load error.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.suite.source import Document

TIMEOUT_S = 60.0  # promptfoo's default for executable prompts
MEMORY_MB = 1024
MAX_OUTPUT_BYTES = 1_000_000
_ANSI = re.compile(r"\x1b(?:[@-Z\\-_]|\[[0-?]*[ -/]*[@-~])")
_CACHE: dict[str, tuple[bool, str]] = {}
SCRIPT_SUFFIXES = (".sh", ".bash", ".py", ".rb", ".js", ".mjs", ".cjs", ".pl", ".php", ".ts")


@dataclass(frozen=True)
class Executable:
    """An ``exec:`` prompt: the command as words (files as paths relative to the config folder)
    and the files to copy into the sandbox."""

    ref: str
    argv: tuple[str, ...]
    files: tuple[tuple[str, Path], ...]  # (relative path in the sandbox, file beside the config)


def parse_executable(ctx: LoadContext, doc: Document, path: tuple[Any, ...], ref: str) -> Executable | None:
    """The command an ``exec:`` prompt names (errors recorded)."""
    try:
        words = shlex.split(ref.removeprefix("exec:").strip())
    except ValueError as exc:
        ctx.error(doc, path, f"executable prompt {ref!r} does not parse: {exc}", "exec:./script [args]")
        return None
    if not words:
        ctx.error(doc, path, "empty executable prompt", "exec:./script [args]")
        return None
    base = doc.file.parent.resolve()
    argv: list[str] = []
    files: list[tuple[str, Path]] = []
    for i, word in enumerate(words):
        candidate = (base / word).resolve()
        local = candidate.is_relative_to(base) and not Path(word).is_absolute()
        if local and candidate.is_file():
            if not ctx.policy.check(candidate, doc, path, ctx.errors):
                return None
            relative = PurePosixPath(*candidate.relative_to(base).parts)
            files.append((str(relative), candidate))
            argv.append(f"./{relative}" if i == 0 else str(relative))
        elif i == 0 and ("/" in word or Path(word).suffix in SCRIPT_SUFFIXES):
            ctx.error(doc, path, f"file not found: {ref}", "a script beside the config")
            return None
        else:
            argv.append(word)
    if not files:
        ctx.error(doc, path, f"executable prompt {ref!r} names no file beside the config",
                  "exec:./script [args] (a script the package holds)")
        return None
    return Executable(ref, tuple(argv), tuple(files))


def executable_prompt_text(ctx: LoadContext, doc: Document, path: tuple[Any, ...], exe: Executable,
                           variables: dict[str, Any], provider: dict[str, Any] | None,
                           config: dict[str, Any] | None) -> str | None:
    """The prompt the command prints for one test (None: a one-line error recorded)."""
    from eval_pipelines.run.sandbox.runner import run_sandboxed

    context = {"vars": variables, "provider": provider or {"id": "unknown"}, "config": config or {}}
    argv = [*exe.argv, json.dumps(context, ensure_ascii=False, default=str)]
    try:
        files = {name: file.read_bytes() for name, file in exe.files}
    except OSError as exc:
        ctx.error(doc, path, f"cannot read {exe.ref}: {exc.strerror or exc}")
        return None
    digest = hashlib.sha256(json.dumps(argv).encode())
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name])
    key = digest.hexdigest()
    if key not in _CACHE:
        result = run_sandboxed(argv, stdin=b"", timeout_s=TIMEOUT_S, memory_mb=MEMORY_MB, files=files,
                               max_output_bytes=MAX_OUTPUT_BYTES)
        _CACHE[key] = _read(exe, result)
    ok, text = _CACHE[key]
    if not ok:
        ctx.error(doc, path, text)
        return None
    return text


def _read(exe: Executable, result: Any) -> tuple[bool, str]:
    name = exe.ref
    stderr = _ANSI.sub("", result.stderr_tail(2000)).strip()
    if result.output_truncated:
        return False, f"{name} printed more than {MAX_OUTPUT_BYTES} bytes (stopped)"
    if result.error or result.timed_out or result.returncode != 0:
        why = result.error or (f"timed out after {TIMEOUT_S:g} s" if result.timed_out
                               else f"exited with {result.returncode}")
        tail = stderr.splitlines()[-1][-300:] if stderr else ""
        return False, f"{name} failed in the sandbox: {why}" + (f": {tail}" if tail else "")
    text = _ANSI.sub("", result.stdout_text()).strip()
    if stderr and not text:
        return False, f"{name} printed no prompt: {stderr.splitlines()[-1][-300:]}"
    return True, text

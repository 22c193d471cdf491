"""``code_judge`` (001), ``custom`` (000's ``customScript``) and ``script``.

A judge is a user-written Python or JavaScript program (or any command) that
reads one JSON object on stdin::

    {"input": ..., "output": ..., "expected": ..., "criteria": ..., "trace": [...],
     "metadata": {...}, "config": {...}, "test_id": "...",
     "question", "candidate_answer", "reference_answer", "expected_outcome", "input_messages"}

(the last five are AgentV's names of the same values, so its judges run unchanged;
``cwd`` names the folder, relative to the suite, its relative paths are read from)

and prints its verdict as JSON on the last non-empty stdout line (it may log
before that)::

    {"score": 0.0-1.0, "passed": true, "reasoning": "...", "details": {...}}

The judge runs in :mod:`eval_pipelines.run.sandbox.runner`: an empty temporary directory
holding only the judge file(s), no inherited secrets, resource limits, and a
timeout. Anything that goes wrong (missing file, crash, bad JSON, timeout,
score out of range) is an ``error`` outcome with the stderr tail; the grader
never raises.
"""

from __future__ import annotations

import json
import math
import os
import shlex
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders._typescript import TYPESCRIPT, missing_runtime, typescript_runner
from eval_pipelines.suite.models import PASS_THRESHOLD
STDERR_TAIL_CHARS = 500
RUNNERS = {".py": "python", ".js": "node", ".mjs": "node", ".cjs": "node", ".sh": "sh"}


class CodeJudgeParams(Params):
    # A file run by its extension (.py with python, .js/.mjs/.cjs with node, .ts with a
    # TypeScript runtime: _typescript.py) ...
    script: str | None = None
    # ... or AgentV's spelling: a command line or argv list, e.g. [bun, run, judge.ts].
    command: str | list[str] | None = None
    args: list[str] = []
    timeout_ms: int = Field(default=30_000, gt=0)
    memory_mb: int = Field(default=512, ge=64)
    config: dict[str, Any] = {}  # passed through to the judge as `config`
    # AgentV: the folder (relative to the suite file) the command's relative paths are read from.
    cwd: str | None = None

    @model_validator(mode="after")
    def _one_program(self) -> "CodeJudgeParams":
        if (self.script is None) == (self.command is None):
            raise ValueError("give exactly one of `script` or `command`")
        if self.script is not None and not self.script.strip():
            raise ValueError("`script` must not be empty")
        if self.command is not None and not self.argv_of_command():
            raise ValueError("`command` must not be empty")
        return self

    def argv_of_command(self) -> list[str]:
        if isinstance(self.command, str):
            return shlex.split(self.command)
        return list(self.command or [])


class _Problem(Exception):
    """A judge that cannot be run; becomes an ``error`` outcome."""


class CodeJudge(Grader[CodeJudgeParams]):
    type = "code_judge"
    group = "executed"  # section of docs/assertions.md
    score_range = "0..1"
    aliases = ("custom", "script")
    Params = CodeJudgeParams

    def grade(self, params: CodeJudgeParams, inp: GradeInput) -> Outcome:
        import asyncio

        return asyncio.run(self.agrade(params, inp))

    async def agrade(self, params: CodeJudgeParams, inp: GradeInput) -> Outcome:
        from eval_pipelines.run.sandbox.runner import arun_sandboxed

        base = Path(inp.suite_dir) if inp.suite_dir is not None else Path.cwd()
        if params.cwd:
            base = base / params.cwd
        try:
            argv, files = _program(params, Path(base))
        except _Problem as exc:
            return Outcome(0.0, str(exc), {}, status="error")
        payload = _payload(params, inp)
        stdin = json.dumps(payload, ensure_ascii=False, default=str).encode()
        timeout_s = params.timeout_ms / 1000
        result = await arun_sandboxed(
            [*argv, *params.args],
            stdin=stdin,
            timeout_s=timeout_s,
            memory_mb=params.memory_mb,
            files=files,
        )
        return _verdict(result, timeout_s)


def _payload(params: CodeJudgeParams, inp: GradeInput) -> dict[str, Any]:
    """What a judge (or a prompt program) reads on stdin."""
    return {
        "input": inp.case.user_text,
        "output": inp.output,
        "expected": inp.case.expected_output,
        "criteria": inp.case.criteria,
        "trace": inp.trace,
        "metadata": inp.case.metadata,
        "config": params.config,
        "test_id": inp.case.id,
        # AgentV's names for the same values (its code judges read these).
        "question": inp.case.user_text,
        "candidate_answer": inp.output,
        "reference_answer": inp.case.expected_output,
        "expected_outcome": inp.case.criteria,
        "input_messages": [m.model_dump() for m in inp.case.input],
    }


def _verdict(result: Any, timeout_s: float) -> Outcome:
    details: dict[str, Any] = {
        "isolation": result.isolation,
        "duration_ms": round(result.duration_ms, 1),
    }
    tail = result.stderr_tail(STDERR_TAIL_CHARS)

    def error(message: str) -> Outcome:
        if tail:
            details["stderr_tail"] = tail
            message = f"{message}; stderr: {tail}"
        details["returncode"] = result.returncode
        return Outcome(0.0, message, details, status="error")

    if result.error:
        return error(f"judge could not run: {result.error}")
    if result.timed_out:
        return error(f"judge timed out after {timeout_s:g} s")
    if result.returncode != 0:
        return error(f"judge exited with {result.returncode}")
    try:
        verdict = _parse_verdict(result.stdout_text())
    except _Problem as exc:
        return error(str(exc))
    score, passed, reasoning, judge_details = verdict
    details["reasoning"] = reasoning
    details["details"] = judge_details
    if passed is not None and passed != (score >= PASS_THRESHOLD):
        # The judge's own verdict disagrees with its score: the score counts.
        details["judge_passed"] = passed
        details["score_passed"] = score >= PASS_THRESHOLD
    reason = reasoning or f"judge score {score:g}"
    return Outcome(score, reason, details)


def _program(params: CodeJudgeParams, base: Path) -> tuple[list[str], dict[str, bytes]]:
    """The argv to run inside the sandbox and the files to copy into it."""
    if params.script is not None:
        path = _resolve(base, params.script)
        suffix = path.suffix.lower()
        if not path.is_file():
            raise _Problem(f"judge script not found: {path}")
        if suffix in TYPESCRIPT:
            typescript = typescript_runner(suffix)
            if typescript is None:
                raise _Problem(missing_runtime(suffix))
            return [*typescript, path.name], {path.name: _read(path)}
        runner = RUNNERS.get(suffix)
        if runner is None and not os.access(path, os.X_OK):
            raise _Problem(f"don't know how to run judge script {path}: use .py, .js, .mjs, .cjs "
                           f"or .sh, an executable file, or give a `command`")
        files = {path.name: _read(path)}
        return ([runner, path.name] if runner else [f"./{path.name}"]), files

    argv = params.argv_of_command()
    files: dict[str, bytes] = {}
    out: list[str] = []
    for i, arg in enumerate(argv):
        # A bare program name (bun, python, node) is looked up on PATH, not copied.
        if i == 0 and "/" not in arg:
            out.append(arg)
            continue
        candidate = _resolve(base, arg)
        if arg.startswith("-") or not candidate.is_file():
            out.append(arg)
            continue
        name = candidate.name if candidate.name not in files else f"arg{i}/{candidate.name}"
        files[name] = _read(candidate)
        out.append(f"./{name}" if i == 0 else name)
    return out, files


def _resolve(base: Path, name: str) -> Path:
    path = Path(name).expanduser()
    return path if path.is_absolute() else base / path


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise _Problem(f"cannot read judge file {path}: {exc.strerror or exc}") from None


def _parse_verdict(stdout: str) -> tuple[float, bool | None, str | None, dict[str, Any] | None]:
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        raise _Problem("judge printed nothing on stdout; expected a JSON object with `score`")
    last = lines[-1].strip()
    try:
        data = json.loads(last)
    except json.JSONDecodeError:
        raise _Problem(f"judge's last stdout line is not JSON: {last[:200]!r}") from None
    if not isinstance(data, dict):
        raise _Problem(f"judge output must be a JSON object, got {type(data).__name__}")
    score = data.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        raise _Problem(f"judge output needs a numeric `score` in [0, 1], got {score!r}")
    if not 0.0 <= score <= 1.0:
        raise _Problem(f"judge score {score!r} is outside [0, 1]")
    passed = data.get("passed")
    if passed is not None and not isinstance(passed, bool):
        raise _Problem(f"judge `passed` must be true or false, got {passed!r}")
    reasoning = data.get("reasoning")
    if reasoning is not None and not isinstance(reasoning, str):
        reasoning = json.dumps(reasoning, default=str)
    details = data.get("details")
    if details is not None and not isinstance(details, dict):
        details = {"value": details}
    return float(score), passed, reasoning, details

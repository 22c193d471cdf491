"""``agent_judge`` (seed 001): the judge audits the files an agent run produced.

How far it goes
    * Workspace (``GradeInput.workspace``, a directory): every file matching
      ``include_globs`` (``**`` spans directories; ``.git``, ``node_modules``,
      ``__pycache__`` and virtualenvs are skipped, symlinks leading out of the
      workspace are ignored) is listed with its size, at most 500 entries. Text
      files are included in the prompt in path order until ``max_bytes`` of
      content is used (the file that crosses the limit is cut); binary files
      (a NUL byte or invalid UTF-8) are listed but never shown.
    * The judge also sees ``prompt`` (a template or prompt file, as for
      ``llm_judge``: ``{input}``, ``{output}``, ``{expected}``, ``{criteria}``;
      without one, AgentV's default: audit the run against the test's
      ``criteria``) and ``rubrics`` (AgentV: a checklist, required items gate),
      the case, the final output and the run's trace (as JSON, first 20,000
      characters).
    * Steps: this is not a tool-calling agent. It is a JSON request loop of at
      most ``max_steps`` judge calls: while steps remain and some listed text
      files were not shown in full, the judge may answer
      ``{"read": ["path", ...]}`` instead of a verdict; those files (at most 10
      per step, only files from the listing, up to ``max_bytes`` per step) are
      added to the prompt and the judge is asked again. The last step must give
      the verdict ``{"score": 0..1, "passed", "reasoning"}``. There is no shell,
      no code execution and no writing.
    * No workspace (``workspace`` is None): only the output and the trace are
      judged; ``details.mode`` is ``"output_only"`` and ``details.note`` says so.
      A workspace path that is not a directory is an ``error`` grade.

Verdict and score as ``llm_judge``: passed when the judge's score >= ``threshold``
(0.8), grade score the raw score, calibrated score ``_judging.calibrate(score, threshold)``.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from eval_pipelines.grading.graders import _judging as J
from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders.rubrics import RubricItem, plain_string_items

SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache",
             ".pytest_cache"}
MAX_LISTED = 500
MAX_READS_PER_STEP = 10
TRACE_CHARS = 20_000
NUL_PROBE = 8192


# AgentV: an agent_judge without `prompt` judges the run against the test's `criteria`.
DEFAULT_TASK = ("Audit the work of the agent below: does it meet these criteria?\n\n"
                "## Criteria\n{criteria}")


class AgentJudgeParams(Params):
    prompt: str | None = Field(default=None, min_length=1)
    # AgentV: rubric items the audit checks ({id, outcome, weight, required}, or plain strings).
    rubrics: list[RubricItem] = []

    @field_validator("rubrics", mode="before")
    @classmethod
    def _plain_strings(cls, value: Any) -> Any:
        return plain_string_items(value)
    max_steps: int = Field(default=5, ge=1, le=50)
    include_globs: list[str] = Field(default_factory=lambda: ["**/*"], min_length=1)
    max_bytes: int = Field(default=200_000, ge=0)
    threshold: float = Field(default=0.8, ge=0, le=1)
    temperature: float | None = Field(default=0, ge=0, le=2)

    @field_validator("include_globs")
    @classmethod
    def _relative_globs(cls, globs: list[str]) -> list[str]:
        for glob in globs:
            if not glob.strip() or glob.startswith("/") or ".." in glob.split("/"):
                raise ValueError(f"include glob {glob!r} must be a relative pattern inside the workspace")
        return globs


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob over '/'-separated relative paths: ``**`` spans directories, ``*`` and ``?`` do not."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


@dataclass
class WorkspaceFile:
    rel: str
    path: Path
    size: int
    status: str = "listed"  # included | truncated | binary | not included | unreadable
    shown_bytes: int = 0


def scan(root: Path, globs: list[str]) -> tuple[list[WorkspaceFile], int]:
    """(files matching the globs in path order, at most MAX_LISTED; how many matched in all)."""
    patterns = [glob_regex(g) for g in globs]
    root_resolved = root.resolve()
    found: list[WorkspaceFile] = []
    total = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if not any(p.match(rel) for p in patterns):
                continue
            try:
                resolved = path.resolve()
                resolved.relative_to(root_resolved)
                if not resolved.is_file():
                    continue
                size = resolved.stat().st_size
            except (OSError, ValueError):
                continue  # dangling link, or a link out of the workspace
            total += 1
            if len(found) < MAX_LISTED:
                found.append(WorkspaceFile(rel, resolved, size))
    found.sort(key=lambda f: f.rel)
    return found, total


def read_text(path: Path, limit: int) -> tuple[str | None, bool]:
    """(text of at most ``limit`` bytes, truncated?) or (None, False) for a binary file."""
    with path.open("rb") as handle:
        data = handle.read(limit + 1)
    truncated = len(data) > limit
    data = data[:limit]
    if b"\0" in data[:NUL_PROBE]:
        return None, False
    try:
        return data.decode("utf-8"), truncated
    except UnicodeDecodeError as exc:
        if truncated and exc.start >= len(data) - 3:
            return data[: exc.start].decode("utf-8", errors="strict"), True
        return None, False


def show_file(entry: WorkspaceFile, budget: int) -> tuple[str, int]:
    """(prompt text for the file, bytes used); updates ``entry.status``."""
    if budget <= 0:
        if entry.status not in ("binary", "unreadable"):
            entry.status = "not included"
        return "", 0
    try:
        text, truncated = read_text(entry.path, budget)
    except OSError as exc:
        entry.status = "unreadable"
        return f"### {entry.rel}\n(unreadable: {exc.strerror or exc})\n", 0
    if text is None:
        entry.status = "binary"
        return "", 0
    used = len(text.encode("utf-8"))
    entry.shown_bytes = max(entry.shown_bytes, used)
    entry.status = "truncated" if truncated else "included"
    note = f" (first {used} of {entry.size} bytes)" if truncated else ""
    return f"### {entry.rel}{note}\n````\n{text}\n````\n", used


def listing(files: list[WorkspaceFile], total: int) -> str:
    lines = [f"- {f.rel} ({f.size} bytes){'' if f.status == 'included' else ', ' + f.status}" for f in files]
    if total > len(files):
        lines.append(f"- ... and {total - len(files)} more file(s) not listed")
    return "\n".join(lines) if lines else "(no files)"


def trace_text(trace: list[dict[str, Any]]) -> str:
    if not trace:
        return ""
    text = json.dumps(trace, ensure_ascii=False, indent=1, default=str)
    if len(text) > TRACE_CHARS:
        text = text[:TRACE_CHARS] + "\n... (trace truncated)"
    return text


def _normal(rel: str) -> str:
    rel = rel.strip().replace("\\", "/")
    while rel.startswith("./"):
        rel = rel[2:]
    return rel


VERDICT_FORMAT = ('{"score": <number from 0 to 1>, "passed": <true or false>, '
                  '"reasoning": "<brief explanation citing the files>"}')


def rubric_block(items: list[RubricItem]) -> str:
    """The rubric as a checklist; the verdict's score must reflect it (required items gate it)."""
    lines = [f"- **{i.id}** (weight {i.weight:g}{', required' if i.minimum() is not None else ''}): {i.outcome}"
             for i in items]
    return ("## Rubric\nCheck each item against the workspace and the output. The score is the weighted "
            "share of items met; if a required item is not met, the score must be 0.\n" + "\n".join(lines))


class AgentJudge(Grader[AgentJudgeParams]):
    type = "agent_judge"
    group = "model-graded"  # section of docs/assertions.md
    score_range = "0..1"
    needs_judge = True  # graded by the judge model (or its embeddings)
    Params = AgentJudgeParams

    async def agrade(self, params: AgentJudgeParams, inp: GradeInput) -> Outcome:
        judge = inp.judge
        if judge is None:
            return J.no_judge()
        try:
            template, prompt_file = (J.resolve_prompt(params.prompt, inp.suite_dir) if params.prompt is not None
                                     else (DEFAULT_TASK, None))
        except OSError as exc:
            return Outcome(0.0, str(exc), {"judge_model": J.judge_model(judge)}, status="error")
        if params.rubrics:
            template = template.rstrip() + "\n\n" + rubric_block(params.rubrics)
        criteria = inp.case.criteria or J.DEFAULT_CRITERIA
        task = J.render(template, {
            "input": J.input_text(inp.case), "output": inp.output,
            "expected": J.expected_text(inp.case) or J.NO_EXPECTED, "criteria": criteria,
        })
        if not J.mentions(template, "output"):
            block = J.case_block(inp.case, inp.output, None if J.mentions(template, "criteria") else criteria)
            task = f"{task.rstrip()}\n\n{block}"
        sections = [task]
        trace = trace_text(inp.trace)
        if trace:
            sections.append(f"## Run Trace (JSON)\n{trace}")

        details: dict[str, Any] = {"max_steps": params.max_steps}
        if prompt_file:
            details["prompt_file"] = prompt_file
        files: dict[str, WorkspaceFile] = {}
        if inp.workspace is None:
            details.update(mode="output_only",
                           note="no workspace was given: judged the output and the trace only")
            sections.append("## Workspace\nNo workspace files are available for this run; "
                            "judge the output and the trace only.")
        else:
            root = Path(inp.workspace)
            if not root.is_dir():
                return Outcome(0.0, f"workspace {root} is not a directory",
                               {"judge_model": J.judge_model(judge), "workspace": str(root)}, status="error")
            found, total = scan(root, params.include_globs)
            files = {f.rel: f for f in found}
            budget, contents = params.max_bytes, []
            for entry in found:
                text, used = show_file(entry, budget)
                budget -= used
                if text:
                    contents.append(text)
            details.update(mode="workspace", workspace=str(root), files_listed=len(found),
                           files_matched=total, bytes_included=params.max_bytes - budget,
                           files_included=sorted(f.rel for f in found if f.status == "included"))
            sections.append("## Workspace Files Produced by the Run\n" + listing(found, total))
            sections.append("## File Contents\n" + ("\n".join(contents) if contents
                                                    else "(no text content included)"))

        attempts = calls = 0
        latency = cost = 0.0
        requested: list[str] = []
        for step in range(1, params.max_steps + 1):
            unread = [f.rel for f in files.values() if f.status in ("truncated", "not included")]
            may_read = step < params.max_steps and bool(unread)
            if may_read:
                fmt = ("Respond with only a JSON object. Either give your verdict: " + VERDICT_FORMAT
                       + ", or, to see listed files not shown in full above first, ask for them: "
                       '{"read": ["<path>", ...]} (at most ' + f"{MAX_READS_PER_STEP} paths; "
                       f"{params.max_steps - step} request(s) left).")
            else:
                fmt = "Respond with only a JSON object with your verdict: " + VERDICT_FORMAT + "."

            def parse(data: dict[str, Any], may_read: bool = may_read) -> tuple[str, Any, dict[str, Any]]:
                if "score" in data or "overall_score" in data:
                    return "verdict", J.score_0_1(data), data
                wanted = data.get("read")
                if may_read and isinstance(wanted, list) and wanted and all(isinstance(p, str) for p in wanted):
                    return "read", wanted[:MAX_READS_PER_STEP], data
                if not may_read and wanted is not None:
                    raise J.ReplyInvalid('no more files can be read: give the verdict with a "score"')
                raise J.ReplyInvalid('the reply has no "score"' + (' and no "read" list' if may_read else ""))

            user = J.with_format("\n\n".join(sections), fmt)
            try:
                asked = await J.ask(judge, J.SYSTEM_PROMPT, user, parse, temperature=params.temperature)
            except J.JudgeFailure as exc:
                return J.failure(judge, J.JudgeFailure(str(exc), attempts + exc.attempts),
                                 **details, steps_used=step, files_requested=requested)
            attempts, calls = attempts + asked.attempts, calls + asked.calls
            latency, cost = latency + asked.latency_ms, cost + asked.cost_usd
            kind, value, data = asked.value
            if kind == "verdict":
                break
            requested.extend(value)
            shown = []
            for rel in value:
                entry = files.get(_normal(rel))
                if entry is None:
                    shown.append(f"### {rel}\n(not in the workspace listing)\n")
                    continue
                text, _ = show_file(entry, params.max_bytes)
                shown.append(text or f"### {rel}\n({entry.status}: not shown)\n")
            sections.append(f"## Files Read at Step {step}\n" + "\n".join(shown))
        raw = float(value)
        feedback = J.feedback_of(data)
        threshold = params.threshold
        details.update(
            steps_used=step, files_requested=requested, raw_score=round(raw, 4), threshold=threshold,
            passed=raw >= threshold, judge_passed=J.judge_passed(data), feedback=feedback,
            judge_model=J.judge_model(judge), judge_attempts=attempts, judge_calls=calls,
            judge_latency_ms=round(latency, 1), judge_cost_usd=cost,
        )
        return Outcome(raw, J.verdict_reason("agent judge score", raw, threshold, feedback), details,
                       calibrated=J.calibrate(raw, threshold))

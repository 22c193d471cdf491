"""Shared runner of promptfoo's ``javascript`` and ``python`` assertions (not a grader module).

The assertion's code runs in :mod:`eval_pipelines.run.sandbox.runner` (empty working
directory, no secrets, resource limits, timeout), never in-process. Inline code
is, as in promptfoo, an expression (``output.length > 2``; one line starting
with ``const``/``let``/``var`` returns its last statement) or, when it has a line
break, a function body (Python: any line break, even a YAML block's last one, as
promptfoo's buildPythonScript; ``json`` is imported there); ``file://path[:function]`` loads
a file in a read-only copy of the config's folder (its sibling modules and data files beside it,
as promptfoo runs it in place; the file alone when it lies outside that folder) (JavaScript: the module's export, or the named
function; Python: ``get_assert``, or the named function) called with
``(output, context)``; ``context`` holds ``vars``, ``prompt``, ``test`` and
``config``, and in a traced suite ``trace`` (``{traceId, spans}``, run/tracing/spans.py).

promptfoo's reading of the result: a boolean is the verdict (score 1 or 0); a
number is the score, passing when it reaches ``threshold`` (or when it is above
0 without one); a ``{pass, score, reason}`` object gives its own verdict. The
grade score of a number with a threshold in (0, 1) is the number (clipped to
0..1) and its calibrated score ``_judging.calibrate`` with the threshold on 0.8;
otherwise the verdict gives 1 or 0; the raw value is kept in ``details.raw``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from pydantic import Field

from eval_pipelines.grading.base import GradeInput, Outcome, Params
from eval_pipelines.grading.graders._judging import calibrate

JS_RUNNER = r"""
const fs = require('fs');
const req = JSON.parse(fs.readFileSync(0, 'utf8'));
(async () => {
  let fn;
  let output = req.output;
  if (req.output_json) { try { output = JSON.parse(req.output); } catch (e) { /* promptfoo keeps the text */ } }
  if (req.file) {
    const mod = require(require('path').resolve(req.file));
    fn = req.function ? mod[req.function] : (typeof mod === 'function' ? mod : (mod.default || mod));
  } else {
    // promptfoo's buildFunctionBody: several lines are a body as written; one line is an
    // expression, or declarations whose last statement is the returned expression.
    let body = req.code.trimEnd();
    if (!body.includes('\n')) {
      const line = body.trim().replace(/;+\s*$/, '');
      const last = line.lastIndexOf(';');
      body = /^(const|let|var)\s/.test(line) && last >= 0
        ? line.slice(0, last + 1) + ' return ' + line.slice(last + 1).trim() : 'return ' + line;
    }
    fn = new Function('output', 'context', body);
  }
  const result = await fn(output, req.context);
  process.stdout.write('\n' + JSON.stringify({result: result === undefined ? null : result}) + '\n');
})().catch((e) => {  // the code threw: its message (a stack's tail would hide it), as promptfoo reports it
  const text = e && e.name ? `${e.name}: ${e.message}` : String(e);
  process.stdout.write('\n' + JSON.stringify({threw: text.slice(0, 500)}) + '\n');
});
"""
PY_RUNNER = r"""
import importlib.util, json, re, sys
req = json.loads(sys.stdin.read())
if req.get("file"):
    sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(req["file"])))  # promptfoo's wrapper does
    spec = importlib.util.spec_from_file_location("assertion", req["file"])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fn = getattr(mod, req.get("function") or req.get("default_function", "get_assert"))
else:
    # promptfoo's buildPythonScript: code with a line break is the body of `main(output, context)`,
    # each line indented as its first indented line is; one line is `return <code>`; `json` is imported.
    code = req["code"]
    if "\n" in code:
        first = re.search(r"^(?!\s*$)\s+", code, re.M)
        indent = first.group(0) if first else "    "
        body = "\n".join(indent + line for line in code.split("\n"))
    else:
        body = "    return " + code
    scope = {"json": json}
    try:
        exec("def _assert(output, context):\n" + body, scope)
    except SyntaxError as exc:
        print()
        print(json.dumps({"threw": f"SyntaxError: {exc.msg} (line {(exc.lineno or 2) - 1}: {(exc.text or '').strip()})"}))
        sys.exit(0)
    fn = scope["_assert"]
output = req["output"]
if req.get("output_json"):
    try:
        output = json.loads(output)
    except ValueError:  # promptfoo keeps the text when it does not parse
        pass
try:
    result = fn(output, req["context"])
except Exception as exc:  # the code raised: its message, as promptfoo reports it
    print()
    print(json.dumps({"threw": f"{type(exc).__name__}: {exc}"[:500]}))
    sys.exit(0)
print()
print(json.dumps({"result": result}, default=str))
"""


class ScriptAssertParams(Params):
    value: str = Field(min_length=1)
    threshold: float | None = None
    config: dict[str, Any] = {}
    timeout_ms: int = Field(default=30_000, gt=0)
    memory_mb: int = Field(default=512, ge=64)
    # Set by ``transformed`` when a transform produced a non-text value, and by the promptfoo loader
    # for a prompt asking for a json_schema answer: the code gets it parsed (the text if it does not parse).
    output_json: bool = False


def _context(inp: GradeInput, params: ScriptAssertParams) -> dict[str, Any]:
    context = {"vars": inp.case.metadata.get("vars", {}), "prompt": inp.case.user_text,
               "test": {"description": inp.case.description, "metadata": inp.case.metadata},
               "config": params.config}
    if inp.otel is not None:  # a traced suite: promptfoo's `context.trace` = {traceId, spans}
        context["trace"] = inp.otel.as_promptfoo()
    return context


def read_result(raw: Any, threshold: float | None) -> Outcome:
    """promptfoo's reading of a script's return value, as an outcome on our 0.8 pass mark."""
    if isinstance(raw, bool):
        return Outcome.binary(raw, f"returned {str(raw).lower()}", raw=raw)
    if isinstance(raw, (int, float)) and math.isfinite(raw):
        passing = threshold if threshold is not None else 1e-9  # no threshold: any score above 0 passes
        passed = raw >= passing
        calibrated = 0 < passing < 1
        return Outcome(min(1.0, max(0.0, raw)) if calibrated else float(passed),
                       f"returned {raw:g}" + (f" (threshold {threshold:g})" if threshold is not None else ""),
                       {"raw": raw, "passed": passed}, passed=passed,  # stated: `not-` inverts it
                       calibrated=calibrate(min(1.0, max(0.0, raw)), passing) if calibrated else None)
    if isinstance(raw, dict) and "pass" in raw:
        passed = bool(raw["pass"])
        if threshold is not None and isinstance(raw.get("score"), (int, float)):
            passed = passed and raw["score"] >= threshold
        return Outcome(1.0 if passed else 0.0, str(raw.get("reason") or f"pass: {passed}"), {"raw": raw})
    # promptfoo throws on such a value inside the handler's try: a failure, inverted or not.
    return Outcome(0.0, f"the assertion returned {type(raw).__name__}, not a boolean, number or "
                        "{pass, score, reason}", {"raw": raw}, passed=False, final=True)


async def _run(code: str, request: dict[str, Any], inp: GradeInput, timeout_ms: int, memory_mb: int,
               default_function: str, inline_language: str = "javascript") -> tuple[bool, Any]:
    """Run promptfoo-style code (inline JavaScript, or a .js/.py file) in the sandbox:
    (True, its return value) or (False, why it failed)."""
    from eval_pipelines.run.sandbox.runner import arun_sandboxed

    files: dict[str, bytes] = {}
    copy_from: Path | None = None
    language = inline_language
    if code.startswith("file://"):
        ref, _, function = code.removeprefix("file://").partition(":")
        source = (inp.suite_dir or Path.cwd()) / ref
        if not source.is_file():
            return False, f"file not found: {ref}"
        folder = inp.suite_dir.resolve() if inp.suite_dir is not None else None
        if folder is not None and source.resolve().is_relative_to(folder):
            # a read-only copy of the config's folder: the script imports its sibling modules and
            # opens the data files beside it, as it does under promptfoo
            copy_from, name = folder, source.resolve().relative_to(folder).as_posix()
        else:
            files[source.name], name = source.read_bytes(), source.name
        language = "python" if source.suffix == ".py" else "javascript"
        request = {**request, "file": name, "function": function or None,
                   "default_function": default_function}
    else:
        request = {**request, "code": code}
    argv = ["node", "-e", JS_RUNNER] if language == "javascript" else ["python", "-c", PY_RUNNER]
    result = await arun_sandboxed(argv, stdin=json.dumps(request, default=str).encode(),
                                  timeout_s=timeout_ms / 1000, memory_mb=memory_mb, files=files,
                                  copy_from=copy_from, copy_read_only=True)
    if result.error or result.timed_out or result.returncode != 0:
        why = result.error or ("timed out" if result.timed_out else f"exited with {result.returncode}")
        return False, f"{why}; {result.stderr_tail(300)}"
    lines = [line for line in result.stdout_text().splitlines() if line.strip()]
    try:
        reply = json.loads(lines[-1])
        return (False, f"threw {reply['threw']}") if "threw" in reply else (True, reply["result"])
    except (IndexError, ValueError, KeyError, TypeError):
        return False, "printed no result"


# What the languages throw when the sandbox's memory cap refuses an allocation.
OUT_OF_MEMORY = ("threw MemoryError", "threw RangeError: Array buffer allocation failed",
                 "threw RangeError: Invalid array length", "threw RangeError: Invalid typed array length")


def is_tool_call_output(inp: GradeInput) -> bool:
    """The output is the JSON of tool calls a target was offered and did not answer (its own
    ``tools``): promptfoo hands scripts and transforms that output as the calls, not as text."""
    return any(step.get("answered") is False for step in inp.trace)


async def run_script_assert(language: str, params: ScriptAssertParams, inp: GradeInput) -> Outcome:
    request = {"output": inp.output, "context": _context(inp, params),
               "output_json": params.output_json or is_tool_call_output(inp)}
    ok, raw = await _run(params.value, request, inp, params.timeout_ms, params.memory_mb, "get_assert", language)
    if not ok:
        if str(raw).startswith("threw ") and not str(raw).startswith(OUT_OF_MEMORY):
            # promptfoo (assertions/javascript.ts, python.ts): code that throws fails the assertion,
            # `pass: false, score: 0`, also under `not-`. A run that did not finish (timeout, a
            # killed process) or hit the sandbox's memory cap is ours: an error, not a verdict.
            return Outcome(0.0, f"{language} assertion {raw}", {"threw": raw[len("threw "):]},
                           passed=False, final=True)
        what = raw if str(raw).startswith("threw ") else f"failed to run: {raw}"
        return Outcome(0.0, f"{language} assertion {what}", status="error")
    return read_result(raw, params.threshold)


async def run_transform(code: str, value: Any, inp: GradeInput, timeout_ms: int) -> tuple[bool, Any]:
    """Apply one promptfoo transform to ``value`` (the output, or the previous transform's result)."""
    text = value if isinstance(value, str) else json.dumps(value)
    request = {"output": text, "output_json": not isinstance(value, str),
               "context": {"vars": inp.case.metadata.get("vars", {}), "prompt": inp.case.user_text}}
    return await _run(code, request, inp, timeout_ms, 512, "get_transform")

"""``function_output`` (003's code grader ``method: function_output``).

The model's answer is Python code defining ``function_name`` (or JavaScript with
``executor: javascript``, run under Node: see ``_javascript``). Each test case
runs in its own sandboxed Python process (:mod:`eval_pipelines.run.sandbox.runner`): a
small harness reads the case from stdin, executes the code, calls the function
with the case's ``args``/``kwargs`` and prints ``{"result": ...}`` as its last
stdout line. The score is the share of cases whose result matches.

Untrusted code never runs in the pipeline's own process: ``sandbox: false`` is
rejected when the suite loads. The sandbox protects the machine, not the
score: code written to cheat can forge its own harness output.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import secrets
from typing import Any, Literal

from pydantic import Field, field_validator

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders import _javascript as JS

STDERR_TAIL_CHARS = 500
MAX_PARALLEL_CASES = 4

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.DOTALL)

# Runs inside the sandbox. Reads {"args", "kwargs", "function", "nonce"} from
# stdin, executes solution.py in a fresh namespace and prints one JSON line.
HARNESS = r'''
import json
import sys


def _report(payload):
    sys.stdout.write("\n" + json.dumps(payload) + "\n")
    sys.stdout.flush()


def _jsonable(value):
    if isinstance(value, (set, frozenset)):
        items = list(value)
        try:
            return sorted(items)
        except TypeError:
            return items
    raise TypeError(f"result of type {type(value).__name__} is not JSON-serialisable")


def main():
    case = json.loads(sys.stdin.read())
    nonce = case["nonce"]
    with open("solution.py", encoding="utf-8") as handle:
        source = handle.read()
    namespace = {"__name__": "solution", "__builtins__": __builtins__}
    try:
        exec(compile(source, "solution.py", "exec"), namespace)
    except BaseException as exc:  # noqa: BLE001 - the code is under test
        _report({"nonce": nonce, "error": "code failed to load: " + _describe(exc)})
        return
    function = namespace.get(case["function"])
    if not callable(function):
        _report({"nonce": nonce, "error": f"the code defines no function {case['function']!r}"})
        return
    try:
        result = function(*case["args"], **case["kwargs"])
    except BaseException as exc:  # noqa: BLE001
        _report({"nonce": nonce, "error": "raised " + _describe(exc)})
        return
    try:
        text = json.dumps({"nonce": nonce, "result": result}, default=_jsonable)
    except (TypeError, ValueError) as exc:
        _report({"nonce": nonce, "error": str(exc)})
        return
    sys.stdout.write("\n" + text + "\n")
    sys.stdout.flush()


def _describe(exc):
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return text[:500]


main()
'''


class FunctionCase(Params):
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    expected: Any = Field(...)  # required; write `expected: null` for None
    comparator: Literal["equals", "approx", "contains", "set_equals"] = "equals"
    tolerance: float = Field(default=1e-6, ge=0)


class FunctionOutputParams(Params):
    function_name: str
    # Seed 003's executors: the code runs under Python, or under Node (`node` on PATH).
    executor: Literal["python", "javascript"] = "python"
    test_cases: list[FunctionCase] = Field(min_length=1)
    timeout_per_case: float = Field(default=5, gt=0, le=600)
    sandbox: bool = True
    memory_mb: int = Field(default=512, ge=64)
    method: Literal["function_output"] | None = None  # 003's `method:` spelling, accepted as is

    @field_validator("executor", mode="before")
    @classmethod
    def _executor_spelling(cls, value: object) -> object:
        return {"js": "javascript", "node": "javascript", "py": "python", "python3": "python"}.get(
            str(value).lower(), value) if isinstance(value, str) else value

    @field_validator("function_name")
    @classmethod
    def _identifier(cls, value: str) -> str:
        # A Python identifier is also a valid JavaScript one (no `$` needed here).
        if not value.isidentifier():
            raise ValueError(f"{value!r} is not a function name")
        return value

    @field_validator("sandbox")
    @classmethod
    def _always_sandboxed(cls, value: bool) -> bool:
        if not value:
            raise ValueError("`sandbox: false` is not supported: untrusted code never runs "
                             "in-process; every case runs in a sandboxed subprocess")
        return value


class FunctionOutput(Grader[FunctionOutputParams]):
    type = "function_output"
    group = "executed"  # section of docs/assertions.md
    score_range = "0..1"
    aliases = ("functional", "function")
    Params = FunctionOutputParams

    def grade(self, params: FunctionOutputParams, inp: GradeInput) -> Outcome:
        return asyncio.run(self.agrade(params, inp))

    async def agrade(self, params: FunctionOutputParams, inp: GradeInput) -> Outcome:
        if params.executor == "javascript" and not JS.node_available():
            return Outcome(0.0, "executor javascript needs `node` on PATH; it was not found", status="error",
                           details={"executor": "javascript"})
        code = extract_code(inp.output, params.function_name, params.executor)
        limit = asyncio.Semaphore(MAX_PARALLEL_CASES)

        async def run(index: int, case: FunctionCase) -> dict[str, Any]:
            async with limit:
                return await _run_case(index, case, code, params)

        results = await asyncio.gather(*(run(i, c) for i, c in enumerate(params.test_cases)))
        passed = sum(1 for r in results if r["passed"])
        total = len(results)
        reason = f"{passed}/{total} test cases passed"
        errors = [f"case {r['case']}: {r['error']}" for r in results if r["error"]]
        if errors:
            reason += "; " + "; ".join(errors[:3]) + ("; ..." if len(errors) > 3 else "")
        details = {
            "function_name": params.function_name,
            "executor": params.executor,
            "passed_count": passed,
            "total": total,
            "isolation": results[0].pop("isolation") if results else None,
            "cases": results,
        }
        for r in results:
            r.pop("isolation", None)
        return Outcome(passed / total, reason, details)


def fenced_blocks(output: str) -> list[tuple[str, str]]:
    """``_FENCE.findall(output)`` in linear time.

    The regex retries ``[^\\n]*`` from every ```` ``` ```` of a line without a
    newline, quadratic in a hostile answer (4.5 s for 80 000 characters).
    """
    blocks: list[tuple[str, str]] = []
    pos = 0
    while (start := output.find("```", pos)) >= 0:
        line_end = output.find("\n", start + 3)
        if line_end < 0:
            break
        close = output.find("```", line_end + 1)
        if close < 0:
            break
        lang = re.match(r"[ \t]*([\w+-]*)", output[start + 3:line_end]).group(1)
        blocks.append((lang, output[line_end + 1:close]))
        pos = close + 3
    return blocks


def extract_code(output: str, function_name: str, executor: str = "python") -> str:
    """The code in the answer: a fenced block in the executor's language preferred, else all of it.

    Among several blocks the first that defines ``function_name`` wins.
    """
    blocks = [(lang.lower(), body) for lang, body in fenced_blocks(output)]
    languages = JS.LANGUAGES if executor == "javascript" else ("python", "py", "python3")
    own = [body for lang, body in blocks if lang in languages]
    plain = [body for lang, body in blocks if lang == ""]
    # `[ \t]*`, not `\s*`: from every line start `\s*` would run over all blank lines after it.
    defines = (JS.defines(function_name) if executor == "javascript" else
               re.compile(rf"^[ \t]*(async\s+)?def\s+{re.escape(function_name)}\s*\(", re.MULTILINE))
    for group in (own, plain):
        for body in group:
            if defines.search(body):
                return body
    if own:
        return own[0]
    if plain:
        return plain[0]
    return output


async def _run_case(index: int, case: FunctionCase, code: str,
                    params: FunctionOutputParams) -> dict[str, Any]:
    from eval_pipelines.run.sandbox.runner import arun_sandboxed

    nonce = secrets.token_hex(8)
    stdin = json.dumps({"args": case.args, "kwargs": case.kwargs,
                        "function": params.function_name, "nonce": nonce}).encode()
    if params.executor == "javascript":
        argv = ["node", "harness.js"]
        files = {"harness.js": JS.HARNESS.encode(), "solution.js": code.encode()}
    else:
        argv = ["python", "-I", "harness.py"]
        files = {"harness.py": HARNESS.encode(), "solution.py": code.encode()}
    result = await arun_sandboxed(argv, stdin=stdin, timeout_s=params.timeout_per_case,
                                  memory_mb=params.memory_mb, files=files)
    row: dict[str, Any] = {
        "case": index,
        "passed": False,
        "output": None,
        "expected": case.expected,
        "comparator": case.comparator,
        "error": None,
        "duration_ms": round(result.duration_ms, 1),
        "isolation": result.isolation,
    }
    tail = result.stderr_tail(STDERR_TAIL_CHARS)
    if result.error:
        row["error"] = f"could not run {argv[0]}: {result.error}"
        return row
    if result.timed_out:
        row["error"] = f"timed out after {params.timeout_per_case:g} s"
        return row
    lines = [line for line in result.stdout_text().splitlines() if line.strip()]
    payload: Any = None
    if lines:
        try:
            payload = json.loads(lines[-1])
        except json.JSONDecodeError:
            payload = None
    if not isinstance(payload, dict) or payload.get("nonce") != nonce:
        why = f"exited with {result.returncode}" if result.returncode else "printed no result line"
        last = lines[-1][:200] if lines else ""
        row["error"] = (f"harness {why}" + (f"; last stdout line: {last!r}" if last else "")
                        + (f"; stderr: {tail}" if tail else ""))
        return row
    if "error" in payload:
        row["error"] = str(payload["error"])
        return row
    row["output"] = payload.get("result")
    row["passed"] = compare(row["output"], case.expected, case.comparator, case.tolerance)
    return row


def compare(result: Any, expected: Any, comparator: str, tolerance: float = 1e-6) -> bool:
    """Both values are JSON data (tuples became lists, sets sorted lists)."""
    if comparator == "equals":
        return _equal(result, expected)
    if comparator == "approx":
        return _close(result, expected, tolerance)
    if comparator == "contains":
        if isinstance(result, str):
            return str(expected) in result
        if isinstance(result, list):
            wanted = expected if isinstance(expected, list) else [expected]
            return all(any(_equal(item, w) for item in result) for w in wanted)
        if isinstance(result, dict):
            if isinstance(expected, dict):
                return all(k in result and _equal(result[k], v) for k, v in expected.items())
            return expected in result
        return False
    if comparator == "set_equals":
        if not isinstance(result, list) or not isinstance(expected, list):
            return False
        return {_canonical(x) for x in result} == {_canonical(x) for x in expected}
    raise ValueError(f"unknown comparator {comparator!r}")


def _equal(a: Any, b: Any) -> bool:
    """Python equality, except that true/false never equal 1/0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def _close(a: Any, b: Any, tolerance: float) -> bool:
    numbers = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        return _equal(a, b)
    if isinstance(a, numbers) and isinstance(b, numbers):
        return math.isclose(a, b, rel_tol=tolerance, abs_tol=tolerance)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, tolerance) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], tolerance) for k in a)
    return _equal(a, b)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)

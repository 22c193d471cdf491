"""``scoring_function`` (promptfoo's ``assertScoringFunction``): a test's own score and verdict.

promptfoo (src/assertions/assertionsResult.ts ``testResult``) calls the function after the
test's assertions are graded, as ``fn(namedScores, {threshold, componentResults,
tokensUsed, parentAssertionSet})``; its ``{pass, score, reason}`` replaces the test's. A
function that throws or returns something else makes the test fail with score 0 and the
reason ``Scoring function error: ...``. The promptfoo loader adds this assertion last to
every case of a test (or of ``defaultTest``) that names a function; dispatch grades it once
the output's other assertions are graded (``compare_scope = "output"``), and
``scoring.score_case`` takes the case's score and verdict from it.

``namedScores``: for each ``metric:`` name, the weighted mean of the scores of the
assertions carrying it (as ``analysis.derived_metrics`` reads promptfoo's named scores);
``componentResults``: ``{pass, score, reason, assertion: {type, metric}}`` per assertion.
Scores are our stored grade scores, as the graders gave them (not the calibrated ones). The file runs
in the sandbox (only the file in an empty directory, no secrets, no network, 30 s, 1 GB):
JavaScript's export (``file://x.js``) or named export (``:fn``), Python's ``:fn``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Sequence

from pydantic import Field

from eval_pipelines.grading.base import CompareItem, Grader, GradeInput, Outcome, Params
from eval_pipelines.run.sandbox.script_runner import MARK, node_runner, python_runner, read_answer

TIMEOUT_S = 30.0
MEMORY_MB = 1024
SKIPPED = {"select_best", "max_score", "scoring_function"}  # graded after it, or itself

JS_RUNNER = node_runner("""
    let fn = req.function ? (mod[req.function] ?? (mod.default && mod.default[req.function])) : (mod.default ?? mod);
    if (fn && typeof fn !== 'function' && typeof fn.default === 'function') fn = fn.default;
    if (typeof fn !== 'function') throw new Error(`no function ${req.function || '(default export)'} in ${req.file}`);
    const result = await fn(req.named, req.context);
    answer({result: result === undefined ? null : result});
""")
PY_RUNNER = python_runner("""
    fn = getattr(mod, req["function"] or "", None)
    if fn is None:
        sys.stderr.write("no function %r in %s" % (req["function"], req["file"]))
        sys.exit(3)
    try:
        result = fn(req["named"], req["context"])
    except Exception as exc:
        sys.stderr.write("%s: %s" % (type(exc).__name__, exc))
        sys.exit(1)
    answer({"result": result})
""")


class ScoringFunctionParams(Params):
    file: str = Field(min_length=1)  # relative to the suite's folder
    function: str | None = None


def named_scores(item: CompareItem) -> dict[str, float]:
    """Per metric name, the weighted mean of its assertions' scores (the plain mean at weight 0)."""
    by_metric: dict[str, list[tuple[float, float]]] = {}
    for grade in item.grades:
        assertion = item.inp.case.assertions[grade.assertion_index]
        if assertion.name and assertion.type not in SKIPPED:
            by_metric.setdefault(assertion.name, []).append((grade.score, grade.weight))
    out = {}
    for metric, pairs in by_metric.items():
        weight = sum(w for _, w in pairs)
        out[metric] = sum(s * w for s, w in pairs) / weight if weight > 0 else sum(s for s, _ in pairs) / len(pairs)
    return out


class ScoringFunction(Grader[ScoringFunctionParams]):
    type = "scoring_function"
    group = "executed"
    score_range = "0..1"
    compares = True
    compare_scope = "output"
    Params = ScoringFunctionParams

    def grade(self, params: ScoringFunctionParams, inp: GradeInput) -> Outcome:
        return Outcome(0.0, "scoring_function reads the output's other grades; it cannot be graded alone",
                       status="error")

    async def acompare(self, params: ScoringFunctionParams, items: Sequence[CompareItem]) -> list[Outcome]:
        return [await asyncio.to_thread(self._score, params, item) for item in items]

    def _score(self, params: ScoringFunctionParams, item: CompareItem) -> Outcome:
        from eval_pipelines.run.sandbox.runner import run_sandboxed

        named = named_scores(item)
        components = [{"pass": g.passed, "score": g.score, "reason": g.reason,
                       "assertion": {"type": g.assertion_type,
                                     **({"metric": item.inp.case.assertions[g.assertion_index].name}
                                        if item.inp.case.assertions[g.assertion_index].name else {})}}
                      for g in item.grades if g.assertion_type not in SKIPPED]
        context = {"threshold": item.inp.case.threshold, "componentResults": components,
                   "tokensUsed": {"total": 0, "prompt": 0, "completion": 0}}
        details: dict[str, Any] = {"named_scores": named, "function": params.file + (
            f":{params.function}" if params.function else "")}
        file = (item.inp.suite_dir or Path.cwd()) / params.file
        try:
            source = file.read_bytes()
        except OSError as exc:
            return _failed(f"cannot read {params.file}: {exc.strerror or exc}", details)
        python = file.suffix.lower() == ".py"
        request = {"file": file.name, "function": params.function, "named": named, "context": context,
                   "mark": MARK}
        result = run_sandboxed(["python", "-c", PY_RUNNER] if python else ["node", "-e", JS_RUNNER],
                               stdin=json.dumps(request).encode(), timeout_s=TIMEOUT_S, memory_mb=MEMORY_MB,
                               files={file.name: source})
        answer = read_answer(result.stdout.decode(errors="replace"))
        if not result.ok or answer is None or "result" not in answer:
            tail = [line for line in result.stderr.decode(errors="replace").splitlines() if line.strip()]
            why = result.error or ("timed out" if result.timed_out else tail[-1][-300:] if tail
                                   else f"exited with {result.returncode}")
            return _failed(str(why), details)
        value = answer["result"]
        # promptfoo's isGradingResult: an object with a boolean `pass` and a numeric `score`
        if not (isinstance(value, dict) and isinstance(value.get("pass"), bool)
                and isinstance(value.get("score"), (int, float)) and not isinstance(value.get("score"), bool)):
            return _failed("assertion scoring function must return a GradingResult", details)
        reason = str(value.get("reason") or ("passed" if value["pass"] else "failed"))
        return Outcome(float(value["score"]), reason, {**details, "pass": value["pass"]}, passed=value["pass"])


def _failed(why: str, details: dict[str, Any]) -> Outcome:
    return Outcome(0.0, f"Scoring function error: {why}", {**details, "pass": False}, passed=False)

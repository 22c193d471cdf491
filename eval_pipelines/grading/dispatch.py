"""Grade outputs: find each assertion's grader, apply the one negate/threshold rule.

Two paths give identical rows (tests/grading/test_batch.py):

* per output (:func:`agrade_output`): any grader, judges and sandboxed scripts
  included; a grader that raises becomes an ``error`` grade with its message,
  never a crash of the run;
* in batch (:func:`grade_batch`): graders that only read the output text
  (``batchable``) grade whole columns, with parameters validated once per
  assertion. A million stored outputs grade at a few hundred thousand
  assertions a second this way, against about 12k one by one.

:func:`grade_frame` chooses the path per (case, assertion) and returns the
``grades`` rows of a whole partition.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Container, Sequence

import numpy as np
import pandas as pd

from eval_pipelines.grading.base import CompareItem, Grade, GradeInput, GradingContext, Measurements, Outcome
from eval_pipelines.grading.registry import canonical_type, get_grader
from eval_pipelines.run.targets.base import ModelOutput
from eval_pipelines.suite.assertions import COMMON_FIELDS
from eval_pipelines.suite.models import Assertion, Suite, TestCase, with_answers
from eval_pipelines.suite.registers import with_registers
from eval_pipelines.run.registers import reads_registers, replay, uses_registers

if TYPE_CHECKING:
    from eval_pipelines.grading.judge import Judge

GRADE_COLUMNS = ["test_id", "target", "trial", "assertion_index", "assertion_type", "assertion_name",
                 "weight", "required", "score", "passed", "status", "reason", "details", "calibrated_score"]
JUDGE_CONCURRENCY = 8


# ---- the one rule ---------------------------------------------------------------

def apply_rule(scores: np.ndarray, negate: np.ndarray, minimum: np.ndarray,
               graded: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(scores, passed, negated) for outcomes of assertions, as arrays.

    Scores are clipped to [0, 1]; a negated assertion's graded score becomes
    ``1 - score`` (its reason gets ``negated:``); an assertion passes when it was
    graded and its score reaches its minimum (``Assertion.pass_minimum``).
    Both paths call this, one output or a whole column at a time.
    """
    scores = np.clip(scores.astype(float), 0.0, 1.0)
    negated = negate & graded
    scores = np.where(negated, 1.0 - scores, scores)
    return scores, graded & (scores >= minimum), negated


def _grade_from(assertion: Assertion, outcome: Outcome, index: int) -> Grade:
    negate = assertion.negate and not outcome.final  # a final verdict is not inverted (Outcome.final)
    graded = np.array([outcome.status == "graded"])
    # The verdict is decided on the calibrated score when the grader gives one; the stored
    # score is the grader's own (negated the same way).
    basis = outcome.score if outcome.calibrated is None else outcome.calibrated
    decided, passed, negated = apply_rule(np.array([float(basis)]), np.array([negate]),
                                          np.array([assertion.pass_minimum()]), graded)
    scores, _, _ = apply_rule(np.array([float(outcome.score)]), np.array([negate]),
                              np.array([assertion.pass_minimum()]), graded)
    # A grader that decides its verdict (``Outcome.passed``) is negated by inverting that verdict, as
    # promptfoo's `not-` inverts `pass` (not-similar passes below the threshold, not at a quarter of it).
    verdict = (outcome.passed != bool(negated[0]) if outcome.passed is not None and outcome.status == "graded"
               else bool(passed[0]))
    return Grade(
        assertion_index=index, assertion_type=assertion.type, assertion_name=assertion.label,
        score=float(scores[0]), passed=verdict, status=outcome.status,
        reason=f"negated: {outcome.reason}" if negated[0] else outcome.reason,
        weight=assertion.weight, required=assertion.required, details=outcome.details,
        calibrated_score=None if outcome.calibrated is None else float(decided[0]),
    )


# ---- one output ------------------------------------------------------------------

async def agrade_output(assertion: Assertion, inp: GradeInput, index: int = 0) -> Grade:
    grader = get_grader(assertion.type)
    if inp.grade_nested is None:
        # A wrapper (``transformed``) may grade its nested assertion on another input: ``sub``.
        inp = replace(inp, grade_nested=lambda raw, i, sub=None: agrade_output(assertion_from_raw(raw), sub or inp, i))
    try:
        if grader is None:  # the loader rejects unknown types; keep runs safe anyway
            raise KeyError(f"unknown assertion type {assertion.type!r}")
        params = grader.Params.model_validate(assertion.config)
        outcome = await grader.agrade(params, inp)
    except Exception as exc:  # noqa: BLE001 - any grader failure is recorded, not raised
        outcome = Outcome(0.0, f"grader failed: {type(exc).__name__}: {exc}", status="error")
    return _grade_from(assertion, outcome, index)


def grade_output(assertion: Assertion, inp: GradeInput, index: int = 0) -> Grade:
    """Synchronous wrapper for callers outside an event loop (tests, scripts)."""
    return asyncio.run(agrade_output(assertion, inp, index))


def assertion_from_raw(raw: dict[str, Any]) -> Assertion:
    """A nested assertion's mapping (already validated by the loader) as an ``Assertion``."""
    common = {k: raw[k] for k in COMMON_FIELDS if k in raw}
    common["type"] = canonical_type(common["type"]) or common["type"]
    return Assertion(**common, config={k: v for k, v in raw.items() if k not in COMMON_FIELDS})


def grade_input(output: ModelOutput, case: TestCase, suite_dir: Path | None, judge: "Judge | None",
                context: GradingContext) -> GradeInput:
    """Everything a grader may read about one output."""
    key = (output.test_id, output.target, output.trial)
    text = output.output or ""
    return GradeInput(
        case=with_registers(with_answers(case, output.answers), output.registers), output=text,
        measurements=Measurements(latency_ms=output.latency_ms, prompt_tokens=output.prompt_tokens,
                                  completion_tokens=output.completion_tokens, cost_usd=output.cost_usd,
                                  llm_calls=output.llm_calls, tool_calls=output.tool_calls,
                                  finish_reason=output.finish_reason,
                                  logprobs=None if output.logprobs is None else tuple(output.logprobs)),
        trace=output.trace, suite_dir=suite_dir, judge=judge, baseline_output=context.baseline_for(key),
        workspace=context.workspace, human_ratings=context.ratings_for(key, text), otel=output.otel,
        files=output.files, transcript=output.transcript,
    )


async def agrade_outputs(suite: Suite, outputs: Sequence[ModelOutput], suite_dir: Path | None = None,
                         judge: "Judge | None" = None, context: GradingContext | None = None,
                         skip: Container[tuple[str, int]] = frozenset(),
                         compare: bool = True) -> list[tuple[ModelOutput, list[Grade]]]:
    """Every output's grades, one by one; judge calls and scripts run concurrently, bounded.

    ``skip`` holds (test_id, assertion_index) pairs graded elsewhere (in batch).
    Outputs that are errors get no grades (scoring reports them as errors).
    Compare assertions are graded once all outputs are (``compare``; off for a lone
    output graded early, which cannot be compared).
    """
    context = context or GradingContext()
    cases = {case.id: case for case in suite.tests}
    limit = asyncio.Semaphore(JUDGE_CONCURRENCY)
    inputs: dict[tuple[str, str, int], GradeInput] = {}

    async def one(output: ModelOutput) -> tuple[ModelOutput, list[Grade]]:
        if output.error is not None or output.output is None:
            return output, []
        inp = grade_input(output, cases[output.test_id], suite_dir, judge, context)
        inputs[(output.test_id, output.target, output.trial)] = inp
        async with limit:
            grades = [await agrade_output(a, inp, i) for i, a in enumerate(inp.case.assertions)
                      if (inp.case.id, i) not in skip and not _compares(a)]
        return output, grades

    graded = list(await asyncio.gather(*(one(o) for o in outputs)))
    if compare:
        await _grade_compared(suite, graded, inputs)
    return graded


def _compares(assertion: Assertion) -> bool:
    grader = get_grader(assertion.type)
    return grader is not None and grader.compares


async def _grade_compared(suite: Suite, graded: list[tuple[ModelOutput, list[Grade]]],
                          inputs: dict[tuple[str, str, int], GradeInput]) -> None:
    """Compare assertions (select-best, max-score) over each group of outputs: the outputs of one
    test across its prompts (cases sharing ``metadata.compare_group``) and targets, per trial.
    Each output's grades get the compare grade, in assertion order."""
    order = {case.id: n for n, case in enumerate(suite.tests)}
    groups: dict[tuple[int, str, int, int], list[tuple[ModelOutput, list[Grade]]]] = {}
    for output, grades in graded:
        inp = inputs.get((output.test_id, output.target, output.trial))
        if inp is None:
            continue
        for index, assertion in enumerate(inp.case.assertions):
            grader = get_grader(assertion.type)
            if grader is None or not grader.compares:
                continue
            alone = grader.compare_scope == "output"  # these first: they never see the others' grades
            group = f"{output.test_id}\0{output.target}" if alone else \
                str(inp.case.metadata.get("compare_group", inp.case.id))
            groups.setdefault((0 if alone else 1, group, output.trial, index), []).append((output, grades))
    for (_, _, _, index), members in sorted(groups.items(), key=lambda kv: kv[0][0]):
        members.sort(key=lambda m: (order[m[0].test_id], m[0].target))
        items = [CompareItem((o.test_id, o.target, o.trial), inputs[(o.test_id, o.target, o.trial)], list(g))
                 for o, g in members]
        assertion = items[0].inp.case.assertions[index]
        grader = get_grader(assertion.type)
        assert grader is not None
        try:
            outcomes = await grader.acompare(grader.Params.model_validate(assertion.config), items)
        except Exception as exc:  # noqa: BLE001 - recorded as error grades, as one output's failure is
            outcomes = [Outcome(0.0, f"grader failed: {type(exc).__name__}: {exc}", status="error")] * len(items)
        for item, (_, grades), outcome in zip(items, members, outcomes):
            grades.append(_grade_from(item.inp.case.assertions[index], outcome, index))
            grades.sort(key=lambda g: g.assertion_index)


def grading_waits(suite: Suite) -> bool:
    """Whether grading the suite's outputs may wait on something (a judge model, a sandboxed
    script, replayed registers): False only when every assertion is of a batchable grader,
    code over the output text alone. The pipeline keeps its DuckDB connection open across a
    grading that cannot wait (closing and reopening the file costs ~35 ms a run)."""
    if uses_registers(suite):
        return True
    for case in suite.tests:
        if case.after:
            return True
        for assertion in case.assertions:
            grader = get_grader(assertion.type)
            if grader is None or not grader.batchable or grader.compares or grader.needs_judge:
                return True
    return False


# ---- whole columns ---------------------------------------------------------------

def batch_plan(suite: Suite) -> pd.DataFrame:
    """One row per (case, assertion) that can be graded in batch, with the
    validated parameters and the case as Python objects."""
    rows: list[dict[str, Any]] = []
    for case in suite.tests:
        if case.after or reads_registers(case):  # graded filled with earlier answers, one by one
            continue
        for index, assertion in enumerate(case.assertions):
            grader = get_grader(assertion.type)
            if grader is None or not grader.batchable:
                continue
            try:
                params = grader.Params.model_validate(assertion.config)
            except ValueError:
                continue  # the per-output path records the error grade
            if not grader.can_batch(params, case):
                continue
            rows.append({
                "test_id": case.id, "assertion_index": index, "grader": grader.type,
                "params": params, "case": case, "assertion_type": assertion.type,
                "assertion_name": assertion.label, "weight": float(assertion.weight),
                "required": json.dumps(assertion.required), "negate": assertion.negate,
                "minimum": assertion.pass_minimum(),
            })
    return pd.DataFrame(rows, columns=["test_id", "assertion_index", "grader", "params", "case",
                                       "assertion_type", "assertion_name", "weight", "required",
                                       "negate", "minimum"])


def grade_batch(plan: pd.DataFrame, outputs: pd.DataFrame) -> pd.DataFrame:
    """Grades (``GRADE_COLUMNS``) of every planned assertion for every output
    that has text; outputs with an error get no grades, as in the per-output path."""
    if plan.empty or outputs.empty:
        return pd.DataFrame(columns=GRADE_COLUMNS)
    usable = outputs.loc[outputs["error"].isna() & outputs["output"].notna(), ["test_id", "target", "trial", "output"]]
    joined = usable.merge(plan, on="test_id", how="inner", sort=False)
    if joined.empty:
        return pd.DataFrame(columns=GRADE_COLUMNS)
    parts = []
    for grader_type, group in joined.groupby("grader", sort=False):
        grader = get_grader(grader_type)
        assert grader is not None
        result = grader.grade_batch(group["params"].tolist(), group["output"].tolist(), group["case"].tolist())
        graded = np.ones(len(group), dtype=bool)  # batch graders always grade
        scores, passed, negated = apply_rule(np.asarray(result.scores, dtype=float),
                                             group["negate"].to_numpy(dtype=bool),
                                             group["minimum"].to_numpy(dtype=float), graded)
        reasons = pd.Series(result.reasons, index=group.index, dtype=object)
        if negated.any():
            reasons = reasons.where(~negated, "negated: " + reasons)
        parts.append(pd.DataFrame({
            "test_id": group["test_id"], "target": group["target"], "trial": group["trial"],
            "assertion_index": group["assertion_index"], "assertion_type": group["assertion_type"],
            "assertion_name": group["assertion_name"], "weight": group["weight"],
            "required": group["required"], "score": scores, "passed": passed,
            "status": "graded", "reason": reasons,
            "details": pd.Series(result.details, index=group.index, dtype=object),
            "calibrated_score": None,  # batch graders have no threshold of their own
        }))
    return pd.concat(parts, ignore_index=True)[GRADE_COLUMNS]


# ---- a partition -------------------------------------------------------------------

# Grades given during the model phase (failFast, re-runs), by (test_id, target, trial):
# the output that was graded and its grades.
GradedAlready = dict[tuple[str, str, int], tuple[ModelOutput, list[Grade]]]


def _same_output(a: ModelOutput, b: ModelOutput) -> bool:
    """The same answer as far as any grader can tell (attempt counters and the cache flag aside)."""
    def plain(o: ModelOutput) -> ModelOutput:
        return replace(o, cached=False, attempts=0, answers={}, registers={},
                       trace=json.loads(json.dumps(o.trace, default=str)))
    return plain(a) == plain(b)


def _fill_answers(suite: Suite, decoded: list[ModelOutput], outputs: pd.DataFrame) -> None:
    """Give each conversation turn the earlier answers it was sent with (``TestCase.after``),
    from the stored outputs of the same target and trial (an error row's answer is None)."""
    after = {c.id: c.after for c in suite.tests if c.after}
    if not after:
        return
    stored = {(r["test_id"], r["target"], int(r["trial"])):
              r["output"] if isinstance(r["output"], str) and not isinstance(r["error"], str) else None
              for r in outputs[["test_id", "target", "trial", "output", "error"]].to_dict("records")}
    for o in decoded:
        if o.test_id in after and not o.answers:
            o.answers = {earlier: stored.get((earlier, o.target, o.trial)) for earlier in after[o.test_id]}


def grade_frame(suite: Suite, outputs: pd.DataFrame, to_outputs: Callable[[pd.DataFrame], list[ModelOutput]],
                *, suite_dir: Path | None, make_judge: Callable[[], "Judge | None"] = lambda: None,
                context: GradingContext | None = None, graded_already: GradedAlready | None = None) -> pd.DataFrame:
    """``GRADE_COLUMNS`` rows for every stored output x assertion, sorted.

    ``outputs`` are ``model_outputs`` rows; ``to_outputs`` turns a subset of them
    into ``ModelOutput``s: only outputs with an assertion the batch path cannot
    take are decoded and graded one by one, with the judge ``make_judge`` gives
    (created only then, and closed on the same event loop). An output graded already
    (``graded_already``) and stored unchanged keeps those grades: no second judge call.
    """
    # Cases with a compare assertion are graded one by one: max-score reads their other grades, and
    # their outputs are graded again (not kept from the model phase), so their groups are whole.
    comparing = {c.id for c in suite.tests if any(_compares(a) for a in c.assertions)}
    plan = batch_plan(suite)
    plan = plan[~plan["test_id"].isin(comparing)]
    batched = grade_batch(plan, outputs)
    handled = set(zip(plan["test_id"], plan["assertion_index"]))
    scalar_cases = {c.id for c in suite.tests if any((c.id, i) not in handled for i in range(len(c.assertions)))}
    rows = []
    if scalar_cases and not outputs.empty:
        one_by_one = to_outputs(outputs[outputs["test_id"].isin(scalar_cases)])
        _fill_answers(suite, one_by_one, outputs)
        if uses_registers(suite):  # the registers each output was sent with, replayed from the stored outputs
            sent = asyncio.run(replay(suite, to_outputs(outputs), suite_dir))
            for o in one_by_one:
                o.registers = o.registers or sent.get((o.test_id, o.target, o.trial), {})
        kept: list[tuple[ModelOutput, list[Grade]]] = []
        to_grade: list[ModelOutput] = []
        for o in one_by_one:
            earlier = (graded_already or {}).get((o.test_id, o.target, o.trial))
            if earlier is not None and _same_output(earlier[0], o) and o.test_id not in comparing:
                kept.append((o, [g for g in earlier[1] if (o.test_id, g.assertion_index) not in handled]))
            else:
                to_grade.append(o)

        async def run() -> list[tuple[ModelOutput, list[Grade]]]:
            if not to_grade:
                return []
            judge = make_judge()
            try:
                return await agrade_outputs(suite, to_grade, suite_dir, judge, context, handled)
            finally:
                if judge is not None and hasattr(judge, "aclose"):
                    await judge.aclose()

        for o, grades in kept + asyncio.run(run()):
            for g in grades:
                rows.append({
                    "test_id": o.test_id, "target": o.target, "trial": o.trial,
                    "assertion_index": g.assertion_index, "assertion_type": g.assertion_type,
                    "assertion_name": g.assertion_name, "weight": g.weight,
                    "required": json.dumps(g.required), "score": g.score, "passed": g.passed,
                    "status": g.status, "reason": g.reason,
                    "details": json.dumps(g.details, ensure_ascii=False, default=str),
                    "calibrated_score": g.calibrated_score,
                })
    frames = [f for f in (batched, pd.DataFrame(rows, columns=GRADE_COLUMNS)) if not f.empty]
    graded = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=GRADE_COLUMNS)
    return graded.sort_values(["test_id", "target", "trial", "assertion_index"], kind="stable", ignore_index=True)

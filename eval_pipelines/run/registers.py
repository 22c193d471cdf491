"""The model phase's side of promptfoo's ``storeOutputAs`` (suite/registers.py says what it is).

promptfoo sets concurrency to 1 when any test uses ``storeOutputAs`` ("Setting concurrency to 1
because storeOutputAs is used", src/evaluator.ts) and runs the evals in its order, so that each
one sees the registers the evals before it stored. The model phase does the same for such a
suite: ``in_run_order`` sorts its jobs, one worker runs them, and ``stored_value`` gives what a
finished case stores. ``replay`` gives the grades stage the registers each stored output was
sent with, from the stored outputs (they are not stored themselves).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, TypeVar

from eval_pipelines.run.targets.base import ModelOutput
from eval_pipelines.suite.models import Suite, TestCase
from eval_pipelines.suite.registers import with_registers

Job = TypeVar("Job", bound=tuple)


def uses_registers(suite: Suite) -> bool:
    return any(case.registers is not None for case in suite.tests)


def reads_registers(case: TestCase) -> bool:
    """The case holds register marks: its request is known only when it runs."""
    return case.registers is not None and bool(case.registers.reads)


def run_order_key(suite: Suite, case: TestCase, target: str, trial: int) -> tuple[int, ...]:
    """promptfoo's order: runSerially tests first, then by test: repeat, variable combination,
    provider (as listed), prompt."""
    serial, number, combination, prompt = case.registers.order if case.registers else (1, 0, 0, 0)
    targets = suite.execution.targets
    provider = targets.index(target) if target in targets else len(targets)
    return serial, number, trial, combination, provider, prompt


def in_run_order(suite: Suite, jobs: Iterable[Job]) -> list[Job]:
    """``(case, target, trial, ...)`` jobs sorted in promptfoo's run order (stable otherwise)."""
    return sorted(jobs, key=lambda job: run_order_key(suite, job[0], job[1], job[2]))


async def stored_value(case: TestCase, output: ModelOutput, suite_dir: Path | None) -> Any | None:
    """What ``case`` (filled as it was sent) stores from ``output``: the output through its
    transforms, None when nothing is stored (no store name, an error, an empty value, a transform
    that failed: promptfoo stores ``ret.response.output`` only when it is truthy and the eval did
    not throw)."""
    registers = case.registers
    if registers is None or registers.store_as is None or output.error is not None or output.output is None:
        return None
    from eval_pipelines.grading.base import GradeInput
    from eval_pipelines.grading.graders._script_assert import is_tool_call_output, run_transform

    value: Any = output.output
    inp = GradeInput(case=case, output=output.output, trace=output.trace, suite_dir=suite_dir)
    if registers.output_json or is_tool_call_output(inp):
        try:
            value = json.loads(value)
        except ValueError:
            pass  # promptfoo keeps the text
    for code in registers.transforms:
        ok, value = await run_transform(code, value, inp, 30_000)
        if not ok:
            return None
    return value if value not in ("", 0, False, None) else None


async def replay(suite: Suite, outputs: list[ModelOutput], suite_dir: Path | None) -> dict[tuple[str, str, int],
                                                                                          dict[str, Any]]:
    """The registers each output's case was sent with, by (test id, target, trial): the stored
    outputs walked in promptfoo's run order, as the model phase ran them."""
    cases = {case.id: case for case in suite.tests}
    ordered = in_run_order(suite, ((cases[o.test_id], o.target, o.trial, o) for o in outputs if o.test_id in cases))
    values: dict[str, Any] = {}
    seen: dict[tuple[str, str, int], dict[str, Any]] = {}
    for case, target, trial, output in ordered:
        sent = {name: values[name] for name in (case.registers.reads if case.registers else {}) if name in values}
        seen[(case.id, target, trial)] = sent
        value = await stored_value(with_registers(case, sent), output, suite_dir)
        if value is not None:
            values[case.registers.store_as] = value  # type: ignore[union-attr]
    return seen

"""promptfoo's ``options.storeOutputAs``: a test's output kept as a variable of the tests after it.

promptfoo (src/evaluator.ts, 0.121) keeps one ``registers`` mapping per eval. Every eval starts
with the registers merged over its test's variables (``Object.assign(vars, registers)``, before
the prompt and the assertion values are rendered); an eval whose test has ``storeOutputAs: NAME``
then stores its output, as the provider's and the test's ``transform`` left it, under ``NAME``
when that output is not empty (an error stores nothing). The registers are shared by every
provider, prompt and repeat, so a later eval sees the output of the last eval that stored the
name, in run order; promptfoo runs such a suite one eval at a time (concurrency 1), tests with
``runSerially`` first, then test by test: repeat, variable combination, provider, prompt.

A case is rendered when the suite loads, before any output exists, so a variable a register
may fill stands in the case as ``register_mark(NAME)``; ``Registers.reads`` keeps what it is when
nothing was stored (the test's own value, as text, else ""). The model phase (run/registers.py)
runs the cases in promptfoo's order one at a time and replaces the marks with the registers as
they stand (``with_registers``); the grades stage replays the stored outputs to give graders the
same filled case. The ``test_cases`` table keeps the marks.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, TypeVar

from pydantic import BaseModel, ConfigDict, Field


class Registers(BaseModel):
    """A case's part in a suite that uses ``storeOutputAs`` (every case of such a suite has one)."""

    model_config = ConfigDict(extra="forbid")

    # promptfoo's run order of the case's evals: (0 for runSerially tests, else 1; test number;
    # variable combination; prompt). Providers and repeats are placed by the model phase.
    order: tuple[int, int, int, int]
    # The name the case's output is stored under, and the transforms it goes through first
    # (the provider's, then the test's), as the ``transformed`` grader runs them.
    store_as: str | None = None
    transforms: list[str] = Field(default_factory=list)
    # The output is parsed as JSON first (a json_schema answer, as promptfoo's OpenAI provider parses it).
    output_json: bool = False
    # Registers the case's variables may take: name -> the text when none was stored before it.
    reads: dict[str, str] = Field(default_factory=dict)


def register_mark(name: str) -> str:
    """Where a register's value goes in a case rendered before the value exists."""
    return f"\u27e6stored output {name}\u27e7"


def as_text(value: Any) -> str:
    """A register's value as a template prints it (suite formats render as Nunjucks prints)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return ",".join(str(v) for v in value)
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


Case = TypeVar("Case", bound=BaseModel)


def with_registers(case: Case, values: Mapping[str, Any]) -> Case:
    """``case`` with each register mark replaced by the register's value (as text), or by what the
    variable is without one: in its messages, assertions and variables alike."""
    registers: Registers | None = getattr(case, "registers", None)
    if registers is None or not registers.reads:
        return case
    text = case.model_dump_json()
    for name, fallback in registers.reads.items():
        mark = json.dumps(register_mark(name), ensure_ascii=False)[1:-1]
        value = as_text(values[name]) if name in values else fallback
        text = text.replace(mark, json.dumps(value, ensure_ascii=False)[1:-1])
    return type(case).model_validate_json(text)

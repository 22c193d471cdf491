"""Seed 003's folder layout beside a suite file: ``config/thresholds.yaml`` and
``config/graders.yaml``.

``config/thresholds.yaml`` holds the pass/fail gates: threshold names with their
minimums, and/or one section per environment of the seed's table (``development``,
``staging``, ``production``, ``critical``), the one ``eval_suite.environment`` names
being applied. The suite file's own ``thresholds`` win over the file, and the file
over the table's defaults. Sections but no ``environment`` to pick one is refused:
the gates would silently be none.

``config/graders.yaml`` is refused in one line: the seed does not say how an eval
refers to a grader configuration there, and a file that is present but not read
would leave every case graded by something else than its author wrote.
"""

from __future__ import annotations

from typing import Any

from eval_pipelines.suite.errors import SpecErrors, closest_key
from eval_pipelines.formats.harness.suite import ENVIRONMENT_THRESHOLDS, HarnessContext
from eval_pipelines.suite.source import Document, load_document
from eval_pipelines.analysis.threshold_names import EXPECTED_THRESHOLD, threshold_name_problem

THRESHOLDS_FILE = ("config", "thresholds.yaml")
GRADERS_FILE = ("config", "graders.yaml")


def layout_thresholds(ctx: HarnessContext, doc: Document, environment: Any) -> dict[str, float]:
    """The gates ``config/thresholds.yaml`` gives this suite ({} without the file)."""
    folder = doc.file.parent
    graders = folder.joinpath(*GRADERS_FILE)
    if graders.exists():
        ctx.error(Document(graders, {}, {(): 1}), (), "config/graders.yaml is not read",
                  "each eval's grader written in its `grader` mapping (remove or move this file)")
    file = folder.joinpath(*THRESHOLDS_FILE)
    if not file.exists() or not ctx.policy.check(file, doc, ("eval_suite",), ctx.errors):
        return {}
    try:
        tdoc = load_document(file)
    except SpecErrors as exc:
        ctx.errors.extend(exc.errors)
        return {}
    data = tdoc.data
    if not isinstance(data, dict):
        ctx.error(tdoc, (), f"top level is {type(data).__name__}",
                  "a mapping of threshold name to minimum, or environment name to such a mapping")
        return {}
    flat = _gates(ctx, tdoc, (), {k: v for k, v in data.items() if not isinstance(v, dict)})
    sections = {k: v for k, v in data.items() if isinstance(v, dict)}
    for name in sections:
        if name not in ENVIRONMENT_THRESHOLDS:
            guess = closest_key(str(name), ENVIRONMENT_THRESHOLDS)
            ctx.error(tdoc, (name,), f"unknown environment {name!r}" + (f"; did you mean {guess!r}?" if guess else ""),
                      ", ".join(ENVIRONMENT_THRESHOLDS))
    if sections and environment is None:
        ctx.error(tdoc, (next(iter(sections)),), "environment sections but the suite names no environment",
                  "eval_suite.environment: one of " + ", ".join(sections))
    chosen = sections.get(environment) if isinstance(environment, str) else None
    return flat | (_gates(ctx, tdoc, (environment,), chosen) if chosen else {})


def _gates(ctx: HarnessContext, tdoc: Document, path: tuple[Any, ...], raw: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, value in raw.items():
        if (problem := threshold_name_problem(name)) is not None:
            ctx.error(tdoc, path + (name,), problem, EXPECTED_THRESHOLD)
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            ctx.error(tdoc, path + (name,), f"invalid threshold {value!r}", "a number in [0, 1]")
        else:
            out[str(name)] = float(value)
    return out

"""Seed 003: what a harness case's ``grader``, ``expected``, ``comparison`` and ``current``
may say, checked before they become assertions.

Every name these mappings hold either shapes an assertion or is refused here in
one line with the closest known name: an unknown grader ``type`` (``robot``) or
code ``method`` (``fuzzy_match``) used to fall back to an exact comparison, and a
misspelt comparison option was dropped. The grader's ``config`` keys are checked
by the assertion they become (``equals``, ``regex``, ``structural`` ... refuse
unknown parameters).
"""

from __future__ import annotations

import difflib
from typing import Any

from eval_pipelines.formats.harness.suite import HarnessContext
from eval_pipelines.suite.source import Document

GRADER_KEYS = {"type", "config"}
GRADER_TYPES = ("code", "model", "human")
CODE_METHODS = ("exact_match", "regex", "function_output", "structural_match", "contains")
EXPECTED_KEYS = {"type", "value", "alternatives"}
EXPECTED_TYPES = ("exact", "contains", "pattern", "semantic", "functional")
COMPARISON_KEYS = {"type", "tolerance", "ignore_fields", "options"}
COMPARISON_TYPES = ("exact", "semantic", "numeric", "structural")
COMPARISON_OPTION_KEYS = {"ignore_fields", "ignore_values", "require_keys"}
STRUCTURAL_TOLERANCE_KEYS = {"allow_additional_fields", "allow_field_reordering"}
# `current.input` is the request; `current.execution` (the seed's http / skill runners)
# is refused: a case runs against the suite's targets, nothing else.
CURRENT_KEYS = {"input", "execution"}


def _one_of(ctx: HarnessContext, doc: Document, path: tuple[Any, ...], what: str, value: Any,
            known: tuple[str, ...]) -> bool:
    if value is None or value in known:
        return True
    # Looser than for field names: the set is small and closed (`fuzzy_match` -> `exact_match`).
    guess = next(iter(difflib.get_close_matches(str(value), known, n=1, cutoff=0.5)), None)
    ctx.error(doc, path, f"unknown {what} {value!r}" + (f"; did you mean {guess!r}?" if guess else ""),
              ", ".join(known))
    return False


def _mapping(ctx: HarnessContext, doc: Document, path: tuple[Any, ...], raw: Any,
             known: set[str]) -> dict[str, Any] | None:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        ctx.error(doc, path, f"got {type(raw).__name__}", "a mapping")
        return None
    ctx.unknown(doc, path, raw, known)
    return raw


def check_grader(ctx: HarnessContext, doc: Document, path: tuple[Any, ...], grader: Any) -> bool:
    """``grader: {type, config}``: a known type, and a known ``method`` for code graders."""
    before = len(ctx.errors)
    raw = _mapping(ctx, doc, path, grader, GRADER_KEYS)
    if raw is None:
        return False
    gtype = raw.get("type")
    _one_of(ctx, doc, path + ("type",), "grader type", gtype, GRADER_TYPES)
    config = raw.get("config")
    if config is not None and not isinstance(config, dict):
        ctx.error(doc, path + ("config",), f"got {type(config).__name__}", "a mapping")
    elif config and "method" in config:
        if gtype in (None, "code"):
            _one_of(ctx, doc, path + ("config", "method"), "grader method", config["method"], CODE_METHODS)
        else:
            ctx.error(doc, path + ("config", "method"), f"a {gtype} grader has no method",
                      "`method` only with `type: code`")
    return len(ctx.errors) == before


def check_expected(ctx: HarnessContext, doc: Document, path: tuple[Any, ...], expected: Any) -> bool:
    if not isinstance(expected, dict):
        return True  # a bare value is an exact expectation
    before = len(ctx.errors)
    ctx.unknown(doc, path, expected, EXPECTED_KEYS)
    _one_of(ctx, doc, path + ("type",), "expected type", expected.get("type"), EXPECTED_TYPES)
    return len(ctx.errors) == before


def check_current(ctx: HarnessContext, doc: Document, path: tuple[Any, ...], current: Any) -> bool:
    before = len(ctx.errors)
    raw = _mapping(ctx, doc, path, current, CURRENT_KEYS)
    if raw and "execution" in raw:
        ctx.error(doc, path + ("execution",), "current.execution is not run: a case runs against the "
                  "suite's targets (targets.yaml)", "no `execution`; define the system under test as a target")
    return len(ctx.errors) == before


def check_comparison(ctx: HarnessContext, doc: Document, path: tuple[Any, ...], comparison: Any) -> bool:
    before = len(ctx.errors)
    raw = _mapping(ctx, doc, path, comparison, COMPARISON_KEYS)
    if raw is None:
        return False
    kind = raw.get("type", "exact")
    if not _one_of(ctx, doc, path + ("type",), "comparison type", kind, COMPARISON_TYPES):
        return False
    options = _mapping(ctx, doc, path + ("options",), raw.get("options"), COMPARISON_OPTION_KEYS)
    tolerance = raw.get("tolerance")
    if kind == "structural":
        _mapping(ctx, doc, path + ("tolerance",), tolerance, STRUCTURAL_TOLERANCE_KEYS)
    else:
        # numeric: `tolerance` is checked by the `numeric` assertion; the rest apply to structural only.
        for key in ("ignore_fields", "options") + (("tolerance",) if kind != "numeric" else ()):
            if raw.get(key):
                ctx.error(doc, path + (key,), f"{key} does not apply to a {kind} comparison",
                          "type: structural" + (" or numeric" if key == "tolerance" else ""))
        options = {}
    return options is not None and len(ctx.errors) == before

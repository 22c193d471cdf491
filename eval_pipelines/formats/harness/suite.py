"""Seed 003 suite-level settings: ``eval_suite.config``, ``thresholds``/``environment``
and ``reporting``, and the context the harness loader records problems in.

Every ``config`` key either shapes the run (``max_workers``, ``parallel_execution``,
``retry_failed``/``retry_count``, ``trials``) or is stored as a warning
(``timeout_global``); any other key is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from pydantic import ValidationError

from eval_pipelines.analysis.threshold_names import canonical_threshold, threshold_k
from eval_pipelines.suite.assertions import pydantic_errors
from eval_pipelines.suite.errors import SpecError, accepted_not_used, unknown_field_errors
from eval_pipelines.suite.models import Reporting
from eval_pipelines.suite.paths import PathPolicy
from eval_pipelines.suite.source import Document
from eval_pipelines.analysis.threshold_names import EXPECTED_THRESHOLD, threshold_name_problem

# Seed 003 "Common Thresholds" table: (pass@1, pass@k, pass^k).
ENVIRONMENT_THRESHOLDS = {
    "development": (0.70, 0.90, 0.50),
    "staging": (0.80, 0.95, 0.65),
    "production": (0.90, 0.99, 0.80),
    "critical": (0.95, 0.999, 0.90),
}
# `eval_suite.config` (seed 003 "Phase 1"; `trials` is ours: runs per case for pass@k / pass^k).
SUITE_CONFIG_KEYS = {"parallel_execution", "max_workers", "timeout_global", "retry_failed", "retry_count", "trials"}


@dataclass
class HarnessContext:
    policy: PathPolicy
    errors: list[SpecError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)

    def error(self, doc: Document, path: tuple[Any, ...], message: str, expected: str | None = None) -> None:
        self.errors.append(SpecError(str(doc.file), path, message, doc.line_of(path), expected))

    def unknown(self, doc: Document, path: tuple[Any, ...], raw: dict[str, Any], known: set[str]) -> None:
        self.errors.extend(unknown_field_errors(doc, path, raw, known))

    def count(self, doc: Document, path: tuple[Any, ...], value: Any, low: int, high: int) -> int | None:
        """An integer setting in [low, high], or None (with an error) when it is not one."""
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            self.error(doc, path, f"invalid value {value!r}", f"an integer from {low} to {high}")
            return None
        return value

    def config(self, doc: Document, path: tuple[Any, ...], raw: Any, known: set[str]) -> dict[str, Any]:
        if raw is None:
            return {}
        if not isinstance(raw, dict):
            self.error(doc, path, f"got {type(raw).__name__}", "a mapping")
            return {}
        self.unknown(doc, path, raw, known)
        return raw


def suite_config(ctx: HarnessContext, doc: Document, config: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    """``eval_suite.config`` as settings, and its ``trials`` (None when not given)."""
    path = ("eval_suite", "config")
    settings: dict[str, Any] = {}
    if config.get("max_workers") is not None:
        settings["max_concurrency"] = ctx.count(doc, path + ("max_workers",), config["max_workers"], 1, 1000) or 1
    if config.get("parallel_execution") is False:
        settings["max_concurrency"] = 1  # one case at a time, whatever max_workers says
    retry_count = None
    if "retry_count" in config:
        retry_count = ctx.count(doc, path + ("retry_count",), config["retry_count"], 0, 20)
    # retry_failed + retry_count: a failing case runs again up to retry_count times (once by default).
    if config.get("retry_failed") is True:
        settings["rerun_failed"] = 1 if retry_count is None else retry_count
    elif config.get("retry_failed") is None and retry_count is not None:
        settings["rerun_failed"] = retry_count
    if "timeout_global" in config:
        ctx.warnings.append(accepted_not_used(doc, path + ("timeout_global",), (
            "no limit on the whole run; each call has its timeout (metadata.timeout_seconds)")))
    trials = None
    if "trials" in config:
        trials = ctx.count(doc, path + ("trials",), config["trials"], 1, 1000)
    return settings, trials


def suite_thresholds(ctx: HarnessContext, doc: Document, raw: dict[str, Any],
                      trials: int | None) -> tuple[dict[str, float], int]:
    """The suite's gates, and the trials per case they need.

    Seed 003 writes ``pass_hat_3`` gates without saying how many trials to run: without
    ``config.trials`` the largest k a gate names is run; with fewer trials than a gate
    names, the gate could never be computed and the suite is refused.
    """
    out: dict[str, float] = {}
    thresholds = raw.get("thresholds") or {}
    if not isinstance(thresholds, dict):
        ctx.error(doc, ("eval_suite", "thresholds"), "invalid thresholds", "a mapping of metric to minimum")
        thresholds = {}
    for name, value in thresholds.items():
        if (problem := threshold_name_problem(name)) is not None:
            ctx.error(doc, ("eval_suite", "thresholds", name), problem, EXPECTED_THRESHOLD)
        elif not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 1:
            ctx.error(doc, ("eval_suite", "thresholds", name), f"invalid threshold {value!r}", "a number in [0, 1]")
        else:
            out[canonical_threshold(name)] = float(value)  # `pass^3` is `pass_hat_3`
    needed = max([k for name in out if (k := threshold_k(name))] or [1])
    if trials is None:
        trials = needed
    elif trials < needed:
        ctx.error(doc, ("eval_suite", "config", "trials"), f"{trials} trial(s) cannot compute a k={needed} gate",
                  f"config.trials of at least {needed}, as the thresholds ask")
    environment = raw.get("environment")
    if environment is not None:
        if environment not in ENVIRONMENT_THRESHOLDS:
            ctx.error(doc, ("eval_suite", "environment"), f"unknown environment {environment!r}",
                      ", ".join(ENVIRONMENT_THRESHOLDS))
        else:
            p1, pk, phk = ENVIRONMENT_THRESHOLDS[environment]
            # The seed's table: pass@1, pass@k and pass^k for the suite's k = trials;
            # explicit thresholds win.
            defaults = {"pass_at_1": p1}
            if trials > 1:
                defaults |= {f"pass_at_{trials}": pk, f"pass_hat_{trials}": phk}
            out = defaults | out
    return out, trials


def suite_reporting(ctx: HarnessContext, doc: Document, raw: Any) -> Reporting | None:
    """``eval_suite.reporting``: formats, ``output_dir`` (relative, inside the project) and
    ``include_details`` shape the reports; ``notify_on_failure`` is stored as a warning."""
    path = ("eval_suite", "reporting")
    if raw is None:
        return None
    if not isinstance(raw, dict):
        ctx.error(doc, path, f"got {type(raw).__name__}", "a mapping")
        return None
    try:
        reporting = Reporting.model_validate(raw)
    except ValidationError as exc:
        ctx.errors.extend(pydantic_errors(doc, path, exc, list(Reporting.model_fields)))
        return None
    if reporting.output_dir is not None:
        folder = PurePosixPath(reporting.output_dir.replace("\\", "/"))
        if folder.is_absolute() or ".." in folder.parts or not reporting.output_dir.strip():
            ctx.error(doc, path + ("output_dir",), f"{reporting.output_dir!r} leaves the project",
                      "a folder relative to the project root, without `..`")
            return None
    if reporting.notify_on_failure:
        ctx.warnings.append(accepted_not_used(doc, path + ("notify_on_failure",), (
            "nobody is notified; a failed gate shows as a failed check (exit code 1 for `run`)")))
    return reporting

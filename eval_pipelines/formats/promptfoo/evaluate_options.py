"""promptfoo's ``evaluateOptions`` (AgentV v5's ``evaluate_options``, in snake case) as suite settings."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.suite.models import Execution, Settings, Trials
from eval_pipelines.suite.source import Document
from eval_pipelines.formats import compat

EVALUATE_KEYS = {"repeat", "maxConcurrency", "timeoutMs", "cache", "delay", "showProgressBar", "generateSuggestions",
                 "silent", "interactiveProviders", "eventSource"}
# promptfoo's EvaluateOptionsSchema keys that change what a run does, and that we do not do.
EVALUATE_READ_NOT_SUPPORTED = {"maxEvalTimeMs", "isRedteam", "progressCallback"}
# Keys promptfoo reads that change nothing of the results (console output, a deprecated switch).
_COSMETIC = {"generateSuggestions": "prompt suggestions are not generated", "silent": "console output",
             "interactiveProviders": "removed from promptfoo in 2024 (maxConcurrency: 1 runs serially)",
             "eventSource": "where promptfoo says the eval came from"}
# AgentV v5's snake-case spellings of evaluate options.
AGENTV_EVALUATE_NAMES = {"max_concurrency": "maxConcurrency", "timeout_ms": "timeoutMs"}


def read_evaluate_options(ctx: LoadContext, doc: Document, raw: Any, key: str, dialect: str, settings: Settings,
                          execution: Execution) -> None:
    """``evaluateOptions``: ``repeat`` -> trials, ``maxConcurrency``, ``timeoutMs``, ``cache: false``;
    ``delay`` (ms after each uncached call, one call at a time); ``showProgressBar`` a stored warning (cosmetic)."""
    if raw is None:
        return
    if not isinstance(raw, dict):
        ctx.error(doc, (key,), f"got {type(raw).__name__}", "a mapping")
        return
    if dialect == "agentv":  # AgentV spells them in snake case
        raw = {AGENTV_EVALUATE_NAMES.get(k, k): v for k, v in raw.items()}
    compat.unknown_fields(ctx, doc, (key,), raw, EVALUATE_KEYS, reads=EVALUATE_READ_NOT_SUPPORTED)
    for name, why in _COSMETIC.items():
        if name in raw:
            compat.not_used(ctx, doc, f"{key}.{name}", why)
    if "repeat" in raw:
        try:
            execution.trials = Trials(count=raw["repeat"])
        except ValidationError:
            ctx.error(doc, (key, "repeat"), f"invalid repeat {raw['repeat']!r}",
                      "a whole number from 1 to 1000")
    for ours, theirs in (("max_concurrency", "maxConcurrency"), ("timeout_ms", "timeoutMs")):
        if theirs in raw:
            try:
                setattr(settings, ours, getattr(Settings.model_validate({ours: raw[theirs]}), ours))
            except ValidationError as exc:
                message = exc.errors()[0]["msg"].removeprefix("Value error, ")
                ctx.error(doc, (key, theirs), f"invalid {theirs} {raw[theirs]!r}: {message}")
    if raw.get("cache") is False:
        execution.cache = False
    delay = read_delay(ctx, doc, (key, "delay"), raw.get("delay"))
    if delay:  # promptfoo: a pause after each uncached call, and concurrency 1 (src/commands/eval.ts)
        settings.delay_ms = int(delay)
        if (settings.max_concurrency or 1) > 1:
            ctx.warnings.append(f"{doc.file}: {key}.maxConcurrency {settings.max_concurrency}: a delay runs one "
                                "call at a time, as promptfoo does")
        settings.max_concurrency = 1
    if "showProgressBar" in raw:
        ctx.warnings.append(f"{doc.file}: {key}.showProgressBar is cosmetic and has no effect here")


def read_delay(ctx: LoadContext, doc: Document, path: tuple[Any, ...], value: Any) -> float | None:
    """A promptfoo ``delay`` (evaluateOptions or a provider's): milliseconds, 0 or more; None when
    absent, or when invalid (the error recorded)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        ctx.error(doc, path, f"invalid delay {value!r}", "milliseconds (0 or more)")
        return None
    return value

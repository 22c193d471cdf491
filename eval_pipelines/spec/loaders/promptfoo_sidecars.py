"""promptfoo blocks that ``promptfoo eval`` of a config's tests does not depend on: ``tracing``, ``redteam``.

* ``tracing`` starts promptfoo's OTLP receiver and hands the spans of each call to the
  assertions (``trace-span-count``, ``trace-span-duration``, ``trace-error-spans``, and
  ``context.trace`` in ``javascript``/``python`` code). We collect no OpenTelemetry traces:
  a config whose assertions use them is refused in one line; otherwise ``tracing`` is accepted
  with a stored warning (it only records spans).
* ``redteam`` configures ``promptfoo redteam generate`` (src/redteam/), which writes new tests;
  ``promptfoo eval`` runs the config's own ``tests`` and does not generate any (src/util/config/
  load.ts keeps the block; src/evaluator.ts only marks the run as a red-team one). With tests it
  is accepted with a stored warning; without tests the config is only a generation recipe and
  stays refused.
"""

from __future__ import annotations

from typing import Any

from eval_pipelines.spec.loaders.eval_yaml_fields import LoadContext
from eval_pipelines.spec.source import Document

TRACE_TYPES = ("trace-span-count", "trace-span-duration", "trace-error-spans")


def _assertions(value: Any) -> list[dict[str, Any]]:
    """Every mapping with a ``type`` under ``value`` (tests, defaultTest, scenarios as written)."""
    found: list[dict[str, Any]] = []
    if isinstance(value, dict):
        if isinstance(value.get("type"), str):
            found.append(value)
        for item in value.values():
            found += _assertions(item)
    elif isinstance(value, list):
        for item in value:
            found += _assertions(item)
    return found


def _uses_traces(assertion: dict[str, Any]) -> bool:
    kind = str(assertion["type"]).removeprefix("not-")
    if kind in TRACE_TYPES:
        return True
    return kind in ("javascript", "python") and "context.trace" in str(assertion.get("value", ""))


def check_sidecars(ctx: LoadContext, doc: Document, raw: dict[str, Any]) -> None:
    """Accept ``tracing`` / ``redteam`` with a stored warning, or refuse them (one line each)."""
    written = [a for key in ("tests", "defaultTest", "scenarios") for a in _assertions(raw.get(key))]
    if "tracing" in raw:
        uses = sorted({str(a["type"]) for a in written if _uses_traces(a)})
        if uses:
            ctx.error(doc, ("tracing",), f"assertions on OpenTelemetry traces ({', '.join(uses)}) are not "
                      "supported: traces are not collected", "assertions on the output")
        else:
            ctx.warnings.append(f"{doc.file}: tracing: accepted without effect (OpenTelemetry traces are "
                                "not collected; no assertion here reads them)")
    if "redteam" in raw:
        if raw.get("tests") or raw.get("scenarios"):
            ctx.warnings.append(f"{doc.file}: redteam: not used (only `promptfoo redteam generate` reads it; "
                                "the config's own tests run, as `promptfoo eval` runs them), except "
                                "`redteam.purpose`: the purpose promptfoo:redteam:* graders read for tests "
                                "without metadata.purpose")
        else:
            ctx.error(doc, ("redteam",), "red-team generation (`redteam`) without tests is not supported",
                      "`tests` (the block only configures `promptfoo redteam generate`)")

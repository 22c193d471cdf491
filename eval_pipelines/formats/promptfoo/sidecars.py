"""promptfoo blocks beside a config's tests: ``tracing`` (honoured), ``redteam`` (not used by ``eval``).

* ``tracing`` (src/tracing/evaluatorTracing.ts): with ``enabled: true`` every provider call gets a
  trace (``context.traceparent``); promptfoo's own providers record a GenAI span per call, script
  providers export theirs to the OTLP/HTTP receiver, and assertions read the spans
  (``trace-span-count``, ``trace-span-duration``, ``trace-error-spans``, ``context.trace`` in
  ``javascript``/``python``). :func:`read_tracing` gives ``Suite.tracing`` (run/tracing/spans.py,
  run/tracing/context.py). Without it (absent or ``enabled: false``), trace assertions load and
  fail with promptfoo's ``No trace data available`` (stored warning). ``otlp.http.port``,
  ``acceptFormats`` and ``redactAttributes`` are honoured; ``host``, ``forwarding``,
  ``failOnReceiverStartFailure`` and a gRPC receiver are not (stored warnings).
* ``redteam`` configures ``promptfoo redteam generate`` (src/redteam/), which writes new tests;
  ``promptfoo eval`` runs the config's own ``tests`` and does not generate any (src/util/config/
  load.ts keeps the block; src/evaluator.ts only marks the run as a red-team one). With tests it
  is accepted with a stored warning; without tests the config is only a generation recipe and
  stays refused.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.suite.models import Tracing
from eval_pipelines.suite.source import Document
from eval_pipelines.formats import compat

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
    code = str(assertion.get("value", ""))
    return kind in ("javascript", "python") and any(
        ref in code for ref in ("context.trace", "context['trace']", 'context["trace"]', "context.get('trace')",
                                'context.get("trace")'))


def check_sidecars(ctx: LoadContext, doc: Document, raw: dict[str, Any]) -> None:
    """Accept ``redteam`` with a stored warning, or refuse it (one line); ``tracing`` is read by
    :func:`read_tracing`."""
    if "redteam" in raw:
        if raw.get("tests") or raw.get("scenarios"):
            ctx.warnings.append(f"{doc.file}: redteam: not used (only `promptfoo redteam generate` reads it; "
                                "the config's own tests run, as `promptfoo eval` runs them), except "
                                "`redteam.purpose`: the purpose promptfoo:redteam:* graders read for tests "
                                "without metadata.purpose, and `redteam.provider`: their grading model when "
                                "defaultTest names none")
        else:
            ctx.error(doc, ("redteam",), "red-team generation (`redteam`) without tests is not supported by "
                      f"this command: run `eval-pipelines redteam generate {doc.file}` (writes redteam.yaml, "
                      "a suite), then run that file", "`tests` (the block only configures test generation)")


TRACING_KEYS = {"enabled", "otlp", "forwarding", "failOnReceiverStartFailure", "storage"}
HTTP_KEYS = {"enabled", "port", "host", "acceptFormats", "redactAttributes"}
NOT_HONOURED = {
    ("otlp", "http", "host"): "the receiver listens on the loopback of each script provider's own sandbox",
    ("forwarding",): "spans are stored with the outputs, not forwarded to another collector",
    ("failOnReceiverStartFailure",): "the receiver starts inside each script provider's sandbox; a failure "
                                     "there is the output's error",
    ("storage",): "spans are stored with the outputs in DuckDB",
    ("otlp", "grpc"): "only the OTLP/HTTP receiver is run",
}


def read_tracing(ctx: LoadContext, doc: Document, raw: dict[str, Any]) -> Tracing | None:
    """``Suite.tracing`` from promptfoo's ``tracing`` block (None: outputs are not traced)."""
    block = raw.get("tracing")
    written = [a for key in ("tests", "defaultTest", "scenarios") for a in _assertions(raw.get(key))]
    uses = sorted({str(a["type"]) for a in written if _uses_traces(a)})
    enabled = isinstance(block, dict) and block.get("enabled") is True
    # promptfoo also traces a test whose metadata says `tracingEnabled: true` (run/tracing/context.py).
    tests = raw.get("tests") if isinstance(raw.get("tests"), list) else []
    per_test = any(isinstance(t, dict) and isinstance(t.get("metadata"), dict) and t["metadata"].get("tracingEnabled")
                   is True for t in [raw.get("defaultTest"), *tests])
    if uses and not enabled and not per_test:
        ctx.warnings.append(f"{doc.file}: tracing: not enabled, so {', '.join(uses)} find no trace and fail with "
                            "\"No trace data available\" (as in promptfoo)")
    if block is None:
        return None
    if not isinstance(block, dict):
        ctx.error(doc, ("tracing",), "invalid tracing", "a mapping with `enabled` and `otlp`")
        return None
    compat.unknown_fields(ctx, doc, ("tracing",), block, TRACING_KEYS)
    if not isinstance(block.get("enabled", False), bool):
        ctx.error(doc, ("tracing", "enabled"), "invalid tracing.enabled", "true or false")
        return None
    otlp = block.get("otlp") or {}
    http = otlp.get("http") if isinstance(otlp, dict) else None
    if not isinstance(otlp, dict) or not isinstance(http if http is not None else {}, dict):
        ctx.error(doc, ("tracing", "otlp"), "invalid tracing.otlp", "a mapping with `http`")
        return None
    http = http or {}
    compat.unknown_fields(ctx, doc, ("tracing", "otlp"), otlp, {"http", "grpc"})
    compat.unknown_fields(ctx, doc, ("tracing", "otlp", "http"), http, HTTP_KEYS)
    if not enabled:
        if "enabled" in block:
            ctx.warnings.append(f"{doc.file}: tracing: enabled is false, so outputs are not traced")
        return None
    for path, why in NOT_HONOURED.items():
        node: Any = block
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if node is not None and not (isinstance(node, dict) and node.get("enabled") is False):
            compat.not_used(ctx, doc, f"tracing.{'.'.join(path)}", why)
    if http.get("enabled") is False:
        ctx.error(doc, ("tracing", "otlp", "http", "enabled"), "tracing without the OTLP/HTTP receiver is not "
                  "supported (script providers export their spans to it)", "true, or omitted")
        return None
    fields = {"otlp_port": http.get("port", 4318), "accept_formats": http.get("acceptFormats", ["json", "protobuf"]),
              "redact_attributes": http.get("redactAttributes", [])}
    try:
        return Tracing(**fields)
    except ValidationError as exc:
        error = exc.errors()[0]
        name = {"otlp_port": "port", "accept_formats": "acceptFormats", "redact_attributes": "redactAttributes"}
        field = name.get(str(error["loc"][0]), str(error["loc"][0]))
        ctx.error(doc, ("tracing", "otlp", "http", field), f"invalid tracing.otlp.http.{field}: {error['msg']}")
        return None

"""promptfoo's response-field and metric assertion types (issue 18), as our assertion mappings.

Builders in the shape of ``promptfoo_vocabulary.VOCABULARY`` (a promptfoo type without
``not-`` -> a function of the raw assertion returning our mapping or raising ``Refused``);
``promptfoo_asserts`` adds them to the vocabulary. Each follows promptfoo's
src/assertions/<type>.ts; the table is in docs/promptfoo.md.
"""

from __future__ import annotations

from typing import Any, Callable

from eval_pipelines.spec.loaders.promptfoo_vocabulary import Refused, _text, _threshold, _value


def _similar(metric: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    # similar.ts: `threshold ?? 0.75` for every metric; for euclidean it is the largest distance.
    def build(raw: dict[str, Any]) -> dict[str, Any]:
        threshold = _threshold(raw, 0.75)
        if threshold is not None and threshold < 0:
            raise Refused("`threshold` must be 0 or more")
        if metric != "euclidean" and threshold is not None and threshold > 1:
            raise Refused(f"`threshold` above 1 is not supported for similar:{metric} (scores here are 0..1)")
        return {"type": "semantic_sim", "value": _text(raw), "threshold": threshold,
                "metric": metric}
    return build


def _references(raw: dict[str, Any]) -> str | list[str]:
    # gleu.ts / meteor.ts: a string or a non-empty array of strings.
    value = _value(raw)
    if isinstance(value, str) or (isinstance(value, list) and value and all(isinstance(v, str) for v in value)):
        return value
    raise Refused("`value` must be a string or a non-empty list of strings")


def _meteor(raw: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "meteor", "value": _references(raw), "threshold": _threshold(raw, 0.5)}
    for key in ("alpha", "beta", "gamma"):  # meteor.ts reads them from the assertion itself
        if key in raw:
            if isinstance(raw[key], bool) or not isinstance(raw[key], (int, float)):
                raise Refused(f"`{key}` must be a number")
            out[key] = raw[key]
    return out


RESPONSE_VOCABULARY: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "similar:cosine": _similar("cosine"),
    "similar:dot": _similar("dot"),
    "similar:euclidean": _similar("euclidean"),
    # finishReason.ts: a string value, compared case-insensitively with the provider's reason.
    "finish-reason": lambda r: {"type": "finish_reason", "value": _text(r)},
    "gleu": lambda r: {"type": "gleu", "value": _references(r), "threshold": _threshold(r, 0.5)},
    "meteor": _meteor,
}
# Fields a type reads besides promptfoo_vocabulary.COMMON.
RESPONSE_KEYS: dict[str, set[str]] = {"meteor": {"alpha", "beta", "gamma"}}
# Stored with every assertion of the type ("accepted, with this difference").
RESPONSE_WARNINGS: dict[str, str] = {
    "meteor": ("meteor is scored from exact and Porter-stem matches only: promptfoo's WordNet synonym "
               "stage is not run here (no WordNet data), so a score can be lower than promptfoo's"),
}

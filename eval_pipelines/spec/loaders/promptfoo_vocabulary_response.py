"""promptfoo's response-field and metric assertion types (issue 18), as our assertion mappings.

Builders in the shape of ``promptfoo_vocabulary.VOCABULARY`` (a promptfoo type without
``not-`` -> a function of the raw assertion returning our mapping or raising ``Refused``);
``promptfoo_asserts`` adds them to the vocabulary. Each follows promptfoo's
src/assertions/<type>.ts; the table is in docs/promptfoo.md.
"""

from __future__ import annotations

from typing import Any, Callable

from eval_pipelines.spec.loaders.promptfoo_vocabulary import Refused, _text, _threshold


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


RESPONSE_VOCABULARY: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "similar:cosine": _similar("cosine"),
    "similar:dot": _similar("dot"),
    "similar:euclidean": _similar("euclidean"),
    # finishReason.ts: a string value, compared case-insensitively with the provider's reason.
    "finish-reason": lambda r: {"type": "finish_reason", "value": _text(r)},
}

"""promptfoo's response-field and metric assertion types (issue 18), as our assertion mappings.

Builders in the shape of ``promptfoo_vocabulary.VOCABULARY`` (a promptfoo type without
``not-`` -> a function of the raw assertion returning our mapping or raising ``Refused``);
``promptfoo_asserts`` adds them to the vocabulary. Each follows promptfoo's
src/assertions/<type>.ts; the table is in docs/promptfoo.md.
"""

from __future__ import annotations

from typing import Any, Callable

from eval_pipelines.formats.promptfoo.assertions.vocabulary import Refused, _text, _threshold, _trajectory, _value


def _similar(metric: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    # similar.ts: `threshold ?? 0.75` for every metric; for euclidean it is the largest distance.
    def build(raw: dict[str, Any]) -> dict[str, Any]:
        threshold = _threshold(raw, 0.75)
        if threshold is not None and threshold < 0:
            raise Refused("`threshold` must be 0 or more")
        if metric != "euclidean" and threshold is not None and threshold > 1:
            raise Refused(f"`threshold` above 1 is not supported for similar:{metric} (scores here are 0..1)")
        return {"type": "semantic_sim", "value": similar_value(raw), "threshold": threshold, "metric": metric}
    return build


def similar_value(raw: dict[str, Any]) -> str | list[str]:
    """similar.ts: a string or a non-empty list of strings (similar to at least one of them)."""
    value = _value(raw)
    if not isinstance(value, list):
        return _text(raw)
    if not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise Refused("`value` must be text or a non-empty list of texts")
    if any(v.startswith("file://") for v in value):
        raise Refused("a file:// reference inside a `value` list is not read: write the text, or one file:// value")
    return value


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


def _tool_call_f1(raw: dict[str, Any]) -> dict[str, Any]:
    # toolCallF1.ts: a list of names or a comma-separated string, trimmed, empty names dropped.
    value = _value(raw)
    if isinstance(value, str):
        names = [v.strip() for v in value.split(",")]
    elif isinstance(value, list) and all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value):
        names = [str(v).strip() for v in value]
    else:
        raise Refused("`value` must be a list of tool names or a comma-separated string")
    names = [n for n in names if n]
    if not names:
        raise Refused("`value` must name at least one expected tool")
    return {"type": "tool_call_f1", "value": names, "threshold": _threshold(raw, 1.0)}


STEP_TYPES = {"tool", "command", "message", "reasoning", "search", "span"}
# Step types only a traced run's spans give (grading/graders/_trajectory_spans.py).
FROM_SPANS = {"message", "reasoning", "search", "span"}


def _step_count(raw: dict[str, Any]) -> dict[str, Any]:
    # trajectory.ts resolveStepCountValue: {type?, pattern? | name?, min?, max?}, a min or a max.
    value = _value(raw)
    if not isinstance(value, dict):
        raise Refused("`value` must be a mapping with `min` and/or `max` (and `type`, `pattern`)")
    unknown = sorted(set(value) - {"type", "pattern", "name", "min", "max"})
    if unknown:
        raise Refused(f"`value` has unknown field(s) {', '.join(unknown)} (expected type, pattern, name, min, max)")
    types = value.get("type")
    listed = types if isinstance(types, list) else [types] if types is not None else []
    if not all(isinstance(t, str) for t in listed):
        raise Refused("`value.type` must be a step type or a list of them")
    bad = [t for t in listed if t not in STEP_TYPES]
    if bad:
        raise Refused(f"`value.type` {', '.join(bad)} is not a step type ({', '.join(sorted(STEP_TYPES))})")
    for bound in ("min", "max"):
        if bound in value and (isinstance(value[bound], bool) or not isinstance(value[bound], int) or value[bound] < 0):
            raise Refused(f"`value.{bound}` must be a whole number of steps, 0 or more")
    if "min" not in value and "max" not in value:
        raise Refused("`value` must include `min` or `max`")
    for key in ("pattern", "name"):
        if key in value and (not isinstance(value[key], str) or not value[key]):
            raise Refused(f"`value.{key}` must be a non-empty glob pattern")
    if "pattern" in value and "name" in value and value["pattern"] != value["name"]:
        raise Refused("`value` has both `pattern` and `name` (promptfoo matches `pattern` only): give one")
    # promptfoo's `type` (of step) is our `step_type`, and its `name` a `pattern` (`pattern || name`):
    # `type` and `name` are an assertion's own fields here.
    renamed = {"type": "step_type", "name": "pattern"}
    return {"type": "trajectory_step_count", **{renamed.get(k, k): v for k, v in value.items()}}


def _step_count_warning(raw: dict[str, Any]) -> str | None:
    value = raw.get("value")
    if not isinstance(value, dict) or "type" not in value:
        return ("trajectory:step-count without `type` counts the run's recorded tool calls (in a traced run "
                "without any, its spans: promptfoo's trace also holds model, message and reasoning spans)")
    listed = value["type"] if isinstance(value["type"], list) else [value["type"]]
    from_spans = [t for t in listed if t in FROM_SPANS]
    return (f"`value.type` {', '.join(from_spans)}: those steps come only from a traced run's spans "
            "(`tracing.enabled` and a provider that exports them)") if from_spans else None


def _tool_used(raw: dict[str, Any]) -> dict[str, Any]:
    """trajectory:tool-used. Its object form with a pattern or a bound, ``{pattern | name, min?, max?}``
    (trajectory.ts resolveToolMatchers), counts the matching tool steps within ``min`` (default 1) ..
    ``max``: step-count over tool steps. Names and lists stay promptfoo_vocabulary's mapping."""
    value = raw.get("value", raw.get("tools", raw.get("sequence")))
    if not (isinstance(value, dict) and ("pattern" in value or "max" in value)):
        return _trajectory(raw, "trajectory:tool-used")
    unknown = sorted(set(value) - {"pattern", "name", "min", "max"})
    if unknown:
        raise Refused(f"`value` has unknown field(s) {', '.join(unknown)} (expected pattern or name, min, max)")
    counted = {"type": "tool", "min": 1, **{k: value[k] for k in ("min", "max") if k in value},
               "pattern": value.get("pattern") or value.get("name")}
    return _step_count({"value": counted})


def _goal_success(raw: dict[str, Any]) -> dict[str, Any]:
    # trajectory.ts resolveGoalSuccessValue: a string, or {goal}.
    value = _value(raw)
    goal = value.get("goal") if isinstance(value, dict) else value
    if not isinstance(goal, str) or not goal.strip():
        raise Refused("`value` must be the goal (text) or a mapping with `goal`")
    out: dict[str, Any] = {"type": "trajectory_goal_success", "goal": goal.strip()}
    if raw.get("threshold") is not None:
        out["threshold"] = _threshold(raw, None)
    return out


def _perplexity(kind: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    # perplexity.ts: only `threshold` (optional: without it the assertion always passes).
    def build(raw: dict[str, Any]) -> dict[str, Any]:
        threshold = _threshold(raw, None)
        if threshold is None and str(raw.get("type", "")).startswith("not-"):
            raise Refused("`not-` without `threshold` always passes in promptfoo: give a threshold")
        return {"type": kind, **({"threshold": threshold} if threshold is not None else {})}
    return build


RESPONSE_VOCABULARY: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    # plain `similar` too, for its list values (promptfoo_vocabulary's entry reads text only)
    "similar": lambda r: {"type": "semantic_sim", "value": similar_value(r), "threshold": _threshold(r, 0.75)},
    "similar:cosine": _similar("cosine"),
    "similar:dot": _similar("dot"),
    "similar:euclidean": _similar("euclidean"),
    # finishReason.ts: a string value, compared case-insensitively with the provider's reason.
    "finish-reason": lambda r: {"type": "finish_reason", "value": _text(r)},
    "gleu": lambda r: {"type": "gleu", "value": _references(r), "threshold": _threshold(r, 0.5)},
    "meteor": _meteor,
    "tool-call-f1": _tool_call_f1,
    "trajectory:step-count": _step_count,
    "trajectory:tool-used": _tool_used,
    "trajectory:goal-success": _goal_success,
    "perplexity": _perplexity("perplexity"),
    "perplexity-score": _perplexity("perplexity_score"),
}
# Fields a type reads besides promptfoo_vocabulary.COMMON.
RESPONSE_KEYS: dict[str, set[str]] = {"meteor": {"alpha", "beta", "gamma"}}
# A warning stored with an assertion of the type ("accepted, with this difference"), or None.
RESPONSE_WARNINGS: dict[str, Callable[[dict[str, Any]], str | None]] = {
    "meteor": lambda raw: ("meteor is scored from exact and Porter-stem matches only: promptfoo's WordNet "
                           "synonym stage is not run here (no WordNet data), so a score can be lower than "
                           "promptfoo's"),
    "trajectory:step-count": lambda raw: _step_count_warning(raw),
    **{kind: (lambda raw: f"value: accepted but not used ({raw['type']} reads only `threshold`)"
              if raw.get("value") is not None else None) for kind in ("perplexity", "perplexity-score")},
}

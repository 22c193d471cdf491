"""promptfoo's assertion vocabulary (and AgentV v5's own types) as our assertion mappings.

``VOCABULARY`` maps a promptfoo type (without ``not-``) to a function building our
assertion mapping from the promptfoo one; a builder raises ``Refused`` with the
reason when the promptfoo fields cannot be honoured. ``promptfoo_asserts`` adds the
common fields (negation, weight, metric, gates, transforms) and validates the result.
The table is documented in docs/promptfoo.md.
"""

from __future__ import annotations

from typing import Any, Callable


class Refused(ValueError):
    """An assertion we cannot honour; the message says why."""


def _value(raw: dict[str, Any]) -> Any:
    if "value" not in raw:
        raise Refused("`value` is required for this assertion type")
    return raw["value"]


def _text(raw: dict[str, Any]) -> str:
    value = _value(raw)
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise Refused(f"`value` must be text, got {type(value).__name__}")
    return str(value)


def _values(raw: dict[str, Any]) -> list[str]:
    value = _value(raw)
    if isinstance(value, str):  # promptfoo splits a string on commas
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list):
        return [str(v) for v in value]
    raise Refused("`value` must be a list of strings or a comma-separated string")


def _criteria(raw: dict[str, Any]) -> str | list[str]:
    # g-eval: one criterion, or a list, each judged on its own and averaged (src/assertions/geval.ts).
    value = _value(raw)
    if isinstance(value, list):
        if not value or not all(isinstance(v, str) and v.strip() for v in value):
            raise Refused("`value` must be a criterion or a list of criteria (non-empty text)")
        return value
    return _text(raw)


def _threshold(raw: dict[str, Any], default: float | None) -> float | None:
    value = raw.get("threshold", default)
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise Refused("`threshold` must be a number")
    return value


def _judge(rubric: str, default_threshold: float) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def build(raw: dict[str, Any]) -> dict[str, Any]:
        value = _text(raw) if "{value}" in rubric else raw.get("value")
        text = rubric.replace("{value}", value or "")
        return {"type": "llm_judge", "rubric": text, "threshold": _threshold(raw, default_threshold)}
    return build


def _is_json(raw: dict[str, Any]) -> dict[str, Any]:
    if raw.get("value") is None:
        return {"type": "is_json"}
    if not isinstance(raw["value"], dict):
        raise Refused("`value` must be a JSON Schema mapping (file:// schemas are read by the loader)")
    return {"type": "json_schema", "schema": raw["value"], "allow_fence": False}


def _regex_flags(flags: Any) -> list[str]:
    names = {"i": "ignorecase", "m": "multiline", "s": "dotall"}
    if not isinstance(flags, str) or any(f not in names for f in flags):
        raise Refused("`flags` must be a string of i, m and s")
    return [names[f] for f in flags]


def _word_count(raw: dict[str, Any]) -> dict[str, Any]:
    value = _value(raw)
    if isinstance(value, dict):
        return {"type": "word_count", "value": {k: value[k] for k in ("min", "max") if k in value}}
    return {"type": "word_count", "value": value}


def _assert_set(raw: dict[str, Any]) -> dict[str, Any]:
    # No threshold: the set passes when all its assertions pass (score 1 or 0). A threshold:
    # the weighted mean of its assertions, passing at the outer mark 0.8 (a warning says so
    # when the threshold differs).
    aggregator = "all" if raw.get("threshold") is None else "weighted_average"
    return {"type": "composite", "aggregator": aggregator, "assert": raw.get("assert") or []}


def _max_score(raw: dict[str, Any]) -> dict[str, Any]:
    value = raw.get("value") or {}
    if not isinstance(value, dict):
        raise Refused("`value` must be a mapping with `method` (average or sum) and `threshold`")
    unknown = sorted(set(value) - {"method", "threshold", "weights"})
    if unknown:
        raise Refused(f"`value` has unknown field(s) {', '.join(unknown)} (expected method, threshold, weights)")
    weights = value.get("weights") or {}
    if not isinstance(weights, dict) or not all(
            isinstance(w, (int, float)) and not isinstance(w, bool) and w >= 0 for w in weights.values()):
        raise Refused("`value.weights` must map assertion types to numbers (0 or more)")
    # By type as written; promptfoo_asserts adds the test's assertion types, by position, to read them.
    return {"type": "max_score", **{k: value[k] for k in ("method", "threshold") if k in value},
            **({"weights": {str(k): float(w) for k, w in weights.items()}} if weights else {})}


def _needs(key: str) -> Callable[[dict[str, Any]], Any]:
    def get(raw: dict[str, Any]) -> Any:
        if key not in raw:
            raise Refused(f"`{key}` is required for this assertion type")
        return raw[key]
    return get


CLOSEDQA = ("Does the output meet this criterion? Criterion: {value}. Score 1 when it does, 0 when it does not.")
FACTUALITY = ("Is the output factually consistent with this reference answer? Reference: {value}. "
              "Score 1 when it agrees with the reference (a subset, superset or the same facts), "
              "0 when it disagrees with it.")
RELEVANCE = ("Is the output relevant to the input: does it answer the question asked, without "
             "unrelated content? Score from 0 (irrelevant) to 1 (fully relevant).")

VOCABULARY: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "equals": lambda r: {"type": "equals", "value": _value(r), "trim_whitespace": False,
                         "normalize_newlines": False},
    "contains": lambda r: {"type": "contains", "value": _text(r)},
    "icontains": lambda r: {"type": "icontains", "value": _text(r)},
    "contains-any": lambda r: {"type": "contains_any", "value": _values(r)},
    "contains-all": lambda r: {"type": "contains", "value": _values(r)},
    "icontains-any": lambda r: {"type": "icontains_any", "value": _values(r)},
    "icontains-all": lambda r: {"type": "icontains_all", "value": _values(r)},
    "starts-with": lambda r: {"type": "starts_with", "value": _text(r)},
    "ends-with": lambda r: {"type": "ends_with", "value": _text(r)},
    "regex": lambda r: {"type": "regex", "value": _text(r),
                        **({"flags": _regex_flags(r["flags"])} if "flags" in r else {})},
    "is-json": _is_json,
    "contains-json": lambda r: {"type": "contains_json", **({"value": r["value"]} if r.get("value") else {})},
    "is-valid-openai-tools-call": lambda r: {"type": "openai_tools_call"},
    "is-valid-openai-function-call": lambda r: {"type": "openai_function_call"},  # functions: the loader
    "javascript": lambda r: {"type": "javascript", "value": _text(r),
                             **({"threshold": _threshold(r, None)} if "threshold" in r else {}),
                             **({"config": r["config"]} if "config" in r else {})},
    "python": lambda r: {"type": "python", "value": _text(r),
                         **({"threshold": _threshold(r, None)} if "threshold" in r else {}),
                         **({"config": r["config"]} if "config" in r else {})},
    "similar": lambda r: {"type": "semantic_sim", "value": _text(r), "threshold": _threshold(r, 0.75)},
    # Without `value` (with a rubricPrompt), the judge grades on its prompt alone.
    "llm-rubric": lambda r: {"type": "llm_judge", "rubric": _text(r) if "value" in r else None,
                             "threshold": _threshold(r, 0.5)},
    "model-graded-closedqa": _judge(CLOSEDQA, 0.5),
    "factuality": _judge(FACTUALITY, 0.5),
    "answer-relevance": _judge(RELEVANCE, 0.7),
    "g-eval": lambda r: {"type": "llm_judge", "rubric": _criteria(r), "threshold": _threshold(r, 0.7)},
    "levenshtein": lambda r: {"type": "levenshtein", "value": _text(r), "threshold": _threshold(r, 5)},
    "rouge-n": lambda r: {"type": "rouge_n", "value": _text(r), "threshold": _threshold(r, 0.75)},
    "bleu": lambda r: {"type": "bleu", "value": _value(r), "threshold": _threshold(r, 0.5)},
    "latency": lambda r: {"type": "latency", "max_ms": _needs("threshold")(r)},
    "cost": lambda r: {"type": "cost", "max_usd": _needs("threshold")(r)},
    "word-count": _word_count,
    "assert-set": _assert_set,
    # Graded over all outputs of a test (its prompts x providers), after they exist.
    "select-best": lambda r: {"type": "select_best", "criteria": _text(r)},
    "max-score": _max_score,
}
COMPARE_TYPES = {"select-best", "max-score"}
COMPARE_GRADERS = {"select_best", "max_score"}  # ours: their cases carry metadata.compare_group
# promptfoo's own fields every assertion may carry, besides type/value/threshold.
COMMON = {"type", "value", "threshold", "weight", "metric", "provider", "transform", "rubricPrompt",
          "config", "assert"}
AGENTV_COMMON = COMMON | {"name", "required", "min_score", "command", "prompt", "tools", "sequence",
                          "skill", "script", "flags", "negate", "id"}


def _tool_names(value: Any) -> list[dict[str, Any]]:
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if isinstance(item, str) and item:
            out.append({"tool": item})
        elif isinstance(item, dict) and isinstance(item.get("name"), str):
            extra = set(item) - {"name", "min"} if item.get("min", 1) == 1 else set(item) - {"name"}
            if extra:
                raise Refused(f"tool counts and patterns ({', '.join(sorted(extra))}) are not supported")
            out.append({"tool": item["name"]})
        else:
            raise Refused("`value` must name the tools: a name, a list of names or {name}")
    return out


def _trajectory(raw: dict[str, Any], kind: str) -> dict[str, Any]:
    """promptfoo's (and AgentV v5's) trajectory assertions, read from the run's tool calls."""
    value = raw.get("value", raw.get("tools", raw.get("sequence")))
    if value is None:
        raise Refused("`value` is required for this assertion type")
    if kind == "trajectory:tool-used":
        items = value if isinstance(value, list) else [value]
        counted = [i for i in items if isinstance(i, dict) and set(i) == {"name", "min"}
                   and isinstance(i["min"], int) and not isinstance(i["min"], bool) and i["min"] >= 0]
        if len(counted) == len(items) and any(i["min"] != 1 for i in counted):  # called at least `min` times
            return {"type": "tool_trajectory", "mode": "any_order",
                    "minimums": {str(i["name"]): i["min"] for i in counted}}
        return {"type": "tool_trajectory", "mode": "any_order", "expected": _tool_names(value)}
    if kind == "trajectory:tool-sequence":
        mode = "in_order"
        if isinstance(value, dict):
            mode = {"exact": "exact", "in_order": "in_order"}.get(value.get("mode", "in_order"), "")
            if not mode:
                raise Refused("`value.mode` must be exact or in_order")
            value = value.get("steps")
        return {"type": "tool_trajectory", "mode": mode, "expected": _tool_names(value)}
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise Refused("`value` must be {name, args, mode}")
    args_match = {"exact": "exact", "partial": "subset", None: "subset"}.get(value.get("mode"), "")
    if not args_match:
        raise Refused("`value.mode` must be partial or exact")
    return {"type": "tool_trajectory", "mode": "any_order", "args_match": args_match,
            "expected": [{"tool": value["name"], "args": value.get("args") or {}}]}


def _skill_used(raw: dict[str, Any]) -> dict[str, Any]:
    # A skill is used through the `Skill` tool (Claude Code's convention): its `skill` argument names it.
    value = raw.get("value", raw.get("skill"))
    names = value if isinstance(value, list) else [value]
    if not names or not all(isinstance(n, str) and n for n in names):
        raise Refused("`value` must name the skill (or a list of skills)")
    return {"type": "tool_trajectory", "mode": "any_order",
            "expected": [{"tool": "Skill", "args": {"skill": n}} for n in names]}


VOCABULARY.update({
    "trajectory:tool-used": lambda r: _trajectory(r, "trajectory:tool-used"),
    "trajectory:tool-sequence": lambda r: _trajectory(r, "trajectory:tool-sequence"),
    "trajectory:tool-args-match": lambda r: _trajectory(r, "trajectory:tool-args-match"),
    "skill-used": _skill_used,
})


SCRIPT_TYPES = ("script", "code-grader", "code-judge")
SCRIPT_KEYS = {"cwd"}  # fields of AgentV's script assertions besides AGENTV_COMMON (others go to its config)


def _rubric_items(items: list[Any]) -> list[dict[str, Any]]:
    """AgentV's structured ``llm-rubric`` value (grader-parser.ts ``normalizeRubricCriteria`` and
    ``parseRubricItems``) as our ``rubrics`` criteria: ids ``rubric-N`` unless given, weight 1, a
    checklist item required unless it says ``required: false``, ``min_score`` (0..1) its minimum."""
    out: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            item = {"outcome": item}
        if not isinstance(item, dict):
            raise Refused(f"`value[{i}]` must be a criterion (text or a mapping with `outcome`)")
        criterion = {k: v for k, v in item.items() if k not in ("min_score", "criteria")}
        criterion.setdefault("id", f"rubric-{i + 1}")
        if "outcome" not in criterion and isinstance(item.get("criteria"), str):
            criterion["outcome"] = item["criteria"]
        if "score_ranges" not in item:  # a checklist item: required unless it says otherwise
            criterion["required"] = item.get("min_score", item.get("required", True))
        elif "min_score" in item:
            criterion["required"] = item["min_score"]
        out.append(criterion)
    return out


def agentv_extras(raw: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """AgentV v5's own types; None when ``kind`` is not one of them."""
    if kind in SCRIPT_TYPES:
        command = raw.get("command", raw.get("script"))
        if command is None:
            raise Refused("`command` is required for a script assertion")
        if raw.get("cwd", ".") not in (".", "./"):
            raise Refused("`cwd` other than the suite's folder is not supported (commands run from it)")
        extra = {k: v for k, v in raw.items() if k not in AGENTV_COMMON | SCRIPT_KEYS}
        out: dict[str, Any] = {"type": "code_judge", "command": command}
        if "config" in raw or extra:
            out["config"] = {**(raw.get("config") or {}), **extra}
        return out
    if kind == "llm-rubric" and isinstance(raw.get("value"), list) and raw["value"]:
        return {"type": "rubrics", "criteria": _rubric_items(raw["value"])}
    if kind == "llm-rubric" and "value" not in raw:
        out = {"type": "llm_judge"}
        if "prompt" in raw:
            out["prompt"] = str(raw["prompt"]).removeprefix("file://")
        return out
    return None

"""promptfoo's assertion vocabulary (and AgentV v5's), each mapped onto one of our graders.

``VOCABULARY`` maps a promptfoo type to a function building our assertion
mapping from the promptfoo one; ``docs/promptfoo.md`` lists the table. The
common fields: ``not-`` prefix -> ``negate``; ``weight``; ``metric`` -> the
assertion's name (the metric rows are grouped by); ``threshold`` -> the
grader's own threshold (see each entry). AgentV v5 adds ``required`` and
``min_score`` (a gate at that score), ``name``, plain strings (a rubric
criterion), ``script`` and the ``trajectory:*`` / ``skill-used`` types.

Anything else (``transform``, ``rubricPrompt``, unknown types) is refused with
one line naming the field; nothing is dropped silently.
"""

from __future__ import annotations

from typing import Any, Callable

import jinja2

from eval_pipelines.grading.registry import get_grader
from eval_pipelines.spec.assertions import parse_assertion
from eval_pipelines.spec.errors import SpecErrors
from eval_pipelines.spec.loaders.eval_yaml_fields import LoadContext
from eval_pipelines.spec.loaders.promptfoo_prompts import read_structured, render, resolve_refs
from eval_pipelines.spec.models import Assertion
from eval_pipelines.spec.source import Document, read_text


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
    "g-eval": lambda r: {"type": "llm_judge", "rubric": _text(r), "threshold": _threshold(r, 0.7)},
    "levenshtein": lambda r: {"type": "levenshtein", "value": _text(r), "threshold": _threshold(r, 5)},
    "rouge-n": lambda r: {"type": "rouge_n", "value": _text(r), "threshold": _threshold(r, 0.75)},
    "bleu": lambda r: {"type": "bleu", "value": _value(r), "threshold": _threshold(r, 0.5)},
    "latency": lambda r: {"type": "latency", "max_ms": _needs("threshold")(r)},
    "cost": lambda r: {"type": "cost", "max_usd": _needs("threshold")(r)},
    "word-count": _word_count,
    "assert-set": _assert_set,
}
# promptfoo's own fields every assertion may carry, besides type/value/threshold.
COMMON = {"type", "value", "threshold", "weight", "metric", "provider", "transform", "rubricPrompt",
          "config", "assert"}
AGENTV_COMMON = COMMON | {"name", "required", "min_score", "command", "prompt", "tools", "sequence",
                          "skill", "script", "flags", "negate"}


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


def _agentv_extras(raw: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """AgentV v5's own types; None when ``kind`` is not one of them."""
    if kind in SCRIPT_TYPES:
        command = raw.get("command", raw.get("script"))
        if command is None:
            raise Refused("`command` is required for a script assertion")
        if raw.get("cwd", ".") not in (".", "./"):
            raise Refused("`cwd` other than the suite's folder is not supported (commands run from it)")
        extra = {k: v for k, v in raw.items() if k not in AGENTV_COMMON | {"cwd"}}
        out: dict[str, Any] = {"type": "code_judge", "command": command}
        if "config" in raw or extra:
            out["config"] = {**(raw.get("config") or {}), **extra}
        return out
    if kind == "llm-rubric" and "value" not in raw:
        out = {"type": "llm_judge"}
        if "prompt" in raw:
            out["prompt"] = str(raw["prompt"]).removeprefix("file://")
        return out
    return None


def _resolve_value(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: dict[str, Any],
                   variables: dict[str, Any]) -> dict[str, Any] | None:
    """``value`` rendered with the test's variables (promptfoo templates assertion values),
    and a ``file://`` value read (JSON/YAML as data, anything else as text); scripts stay paths."""
    value = raw.get("value")
    try:
        if isinstance(value, str):
            value = render(value, variables)
        elif isinstance(value, list):
            value = [render(v, variables) if isinstance(v, str) else v for v in value]
    except jinja2.TemplateError as exc:
        ctx.error(doc, path + ("value",), f"value does not render: {exc}")
        return None
    base = str(raw.get("type", "")).removeprefix("not-")
    if isinstance(value, str) and value.startswith("file://") and base in ("javascript", "python"):
        ref = value.removeprefix("file://").split(":", 1)[0]
        wanted = (".js", ".cjs", ".mjs") if base == "javascript" else (".py",)
        if not ref.endswith(wanted):
            ctx.error(doc, path + ("value",), f"{base} assertion file {ref!r} is not supported",
                      "a " + " or ".join(wanted) + " file (TypeScript is not run)")
            return None
        if not resolve_refs(ctx, doc, path + ("value",), "file://" + ref):
            return None
    elif isinstance(value, str) and value.startswith("file://"):
        files = resolve_refs(ctx, doc, path + ("value",), value)
        if not files:
            return None
        if files[0].suffix.lower() in (".json", ".yaml", ".yml"):
            loaded = read_structured(ctx, doc, path + ("value",), files[0])
            if loaded is None:
                return None
            value = loaded.data
        else:
            try:
                value = read_text(files[0])
            except SpecErrors as exc:
                ctx.errors.extend(exc.errors)
                return None
    return {**raw, "value": value} if "value" in raw else raw


def _reference(ctx: LoadContext, doc: Document, path: tuple[Any, ...], ref: Any, root: Any) -> Any:
    """A local JSON pointer (``$ref: '#/assertionTemplates/name'``) into the config."""
    if not isinstance(ref, str) or not ref.startswith("#/"):
        ctx.error(doc, path + ("$ref",), f"unsupported $ref {ref!r}", "a local reference '#/path/in/config'")
        return None
    node = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            ctx.error(doc, path + ("$ref",), f"$ref {ref!r} points at nothing", "a path that exists in the config")
            return None
    return node


def _transform_ok(ctx: LoadContext, doc: Document, path: tuple[Any, ...], code: Any) -> bool:
    if not isinstance(code, str) or not code.strip():
        ctx.error(doc, path, "invalid transform", "a JavaScript expression or a file:// .js/.py file")
        return False
    if code.startswith("file://"):
        ref = code.removeprefix("file://").split(":", 1)[0]
        if not ref.endswith((".js", ".cjs", ".mjs", ".py")):
            ctx.error(doc, path, f"transform file {ref!r} is not supported", "a .js or .py file")
            return False
        return bool(resolve_refs(ctx, doc, path, "file://" + ref))
    return True


def rubric_prompt(raw: Any, variables: dict[str, Any]) -> str:
    """promptfoo's ``rubricPrompt`` (text or chat messages, Nunjucks with ``{{ output }}`` and
    ``{{ rubric }}``) as our judge template: the test's variables rendered now, the output,
    rubric and input left as our ``{output}``, ``{criteria}`` and ``{input}`` slots."""
    if isinstance(raw, list):
        text = "\n\n".join(f"{m.get('role', 'user')}: {m.get('content', '')}" if isinstance(m, dict) else str(m)
                            for m in raw)
    else:
        text = str(raw)
    slots = {"output": "{output}", "rubric": "{criteria}", "prompt": "{input}", "input": "{input}"}
    return render(text, {**variables, **slots})


def convert_assertion(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: Any,
                      dialect: str = "promptfoo", variables: dict[str, Any] | None = None,
                      root: Any = None, transforms: list[str] | None = None) -> Assertion | None:
    """One promptfoo/AgentV ``assert`` item as our validated ``Assertion`` (None: errors recorded)."""
    if isinstance(raw, str) and dialect == "agentv":
        return parse_assertion({"type": "llm_judge", "rubric": raw}, doc, path, ctx.errors)
    if isinstance(raw, dict) and set(raw) == {"$ref"}:
        raw = _reference(ctx, doc, path, raw["$ref"], root)
        if raw is None:
            return None
    if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
        ctx.error(doc, path, "invalid assertion", "a mapping with a promptfoo `type`"
                  + (" or a rubric string" if dialect == "agentv" else ""))
        return None
    script = dialect == "agentv" and str(raw["type"]) in SCRIPT_TYPES
    if not script:  # a script grader gets its other fields as its config, as in AgentV
        ctx.unknown_keys(doc, path, raw, AGENTV_COMMON if dialect == "agentv" else COMMON)
    resolved = _resolve_value(ctx, doc, path, raw, variables or {})
    if resolved is None:
        return None
    raw = resolved
    kind: str = raw["type"]
    negate = kind.startswith("not-")
    base = kind.removeprefix("not-")
    for key, feature in (("provider", "a per-assertion grading provider"),):
        if key in raw:
            ctx.error(doc, path + (key,), f"{feature} (`{key}`) are not supported",
                      "the suite's judge target grades model-graded assertions" if key == "provider"
                      else "an assertion without it")
            return None
    try:
        built = _agentv_extras(raw, base) if dialect == "agentv" else None
        if built is None:
            if base not in VOCABULARY:
                ctx.error(doc, path + ("type",), f"promptfoo assertion type {kind!r} is not supported",
                          "one of " + ", ".join(sorted(VOCABULARY)) + " (optionally with `not-`)")
                return None
            built = VOCABULARY[base](raw)
        if base == "assert-set":
            built["assert"] = [_nested(ctx, doc, path + ("assert", i), item, dialect, variables or {}, root)
                               for i, item in enumerate(raw.get("assert") or [])]
            if any(b is None for b in built["assert"]):
                return None
    except Refused as exc:
        ctx.error(doc, path, f"{kind}: {exc}")
        return None
    if "config" in raw and built.get("type") not in ("javascript", "python", "code_judge"):
        ctx.error(doc, path + ("config",), f"`config` is not supported on {kind}", "no config")
        return None
    built = {k: v for k, v in built.items() if v is not None}
    name = raw.get("metric", raw.get("name"))
    if name is not None:
        built["name"] = str(name)
    if "weight" in raw:
        built["weight"] = raw["weight"]
    if negate or raw.get("negate") is True:
        built["negate"] = True
    if "rubricPrompt" in raw:
        if built.get("type") != "llm_judge":
            ctx.error(doc, path + ("rubricPrompt",), f"`rubricPrompt` is not supported on {kind}",
                      "rubricPrompt on llm-rubric and the other model-graded types")
            return None
        built["prompt"] = rubric_prompt(raw["rubricPrompt"], variables or {})
    steps = list(transforms or []) + ([raw["transform"]] if "transform" in raw else [])
    if steps:
        if not all(_transform_ok(ctx, doc, path + ("transform",), t) for t in steps):
            return None
        outer = {k: built.pop(k) for k in ("name", "weight", "required") if k in built}
        built = {"type": "transformed", "transform": steps, "assert": built, **outer}
    if base == "assert-set" and raw.get("threshold") not in (None, 0.8):
        ctx.warnings.append(f"{doc.file}: {'.'.join(map(str, path))}: assert-set threshold {raw['threshold']} "
                            "is applied as the pass mark 0.8 of the weighted mean")
    if "min_score" in raw:
        built["required"] = raw["min_score"]
    elif "required" in raw:
        built["required"] = raw["required"]
    inner_type = built["assert"]["type"] if built["type"] == "transformed" else built["type"]
    if get_grader(inner_type) is None:  # icontains_any/icontains_all come with issue 17's graders
        ctx.error(doc, path + ("type",), f"promptfoo assertion type {kind!r} needs the {inner_type!r} grader, "
                  "which this installation lacks", "an assertion type whose grader is registered")
        return None
    return parse_assertion(built, doc, path, ctx.errors)


def _nested(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: Any, dialect: str,
            variables: dict[str, Any], root: Any) -> dict[str, Any] | None:
    assertion = convert_assertion(ctx, doc, path, raw, dialect, variables, root)
    if assertion is None:
        return None
    out: dict[str, Any] = {"type": assertion.type, **assertion.config, "weight": assertion.weight}
    if assertion.name:
        out["name"] = assertion.name
    if assertion.negate:
        out["negate"] = True
    return out


def convert_assertions(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: Any,
                       dialect: str = "promptfoo", variables: dict[str, Any] | None = None,
                       root: Any = None, transforms: list[str] | None = None) -> list[Assertion]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        ctx.error(doc, path, f"got {type(raw).__name__}", "a list of assertions")
        return []
    return [a for i, item in enumerate(raw)
            if (a := convert_assertion(ctx, doc, path + (i,), item, dialect, variables, root, transforms))]

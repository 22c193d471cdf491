"""promptfoo (and AgentV v5) ``assert`` items as validated ``Assertion``s.

The per-type mapping is ``promptfoo_vocabulary.VOCABULARY``. Here the fields
every type shares: ``not-`` prefix (and AgentV's ``negate``) -> ``negate``;
``weight``; ``metric`` (AgentV also ``name``) -> the assertion's name;
``required`` / ``min_score`` (AgentV) -> a gate; ``rubricPrompt`` -> the judge
template; ``transform`` (and the test's ``options.transform``) -> a
``transformed`` wrapper; ``$ref`` to ``#/assertionTemplates/...``; values
rendered with the test's variables and ``file://`` values read. A per-assertion
``provider`` and unknown types are refused with one line; a ``threshold`` on a
pass/fail type, or a ``value`` on a type that reads none, is stored as an
"accepted but not used" warning; nothing is dropped.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import jinja2

from eval_pipelines.grading.registry import get_grader
from eval_pipelines.suite.assertions import parse_assertion
from eval_pipelines.suite.errors import SpecErrors, format_path
from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.formats.promptfoo.assertions.conversation_relevance import WITH_VARIABLES as CONVERSATION_TYPES
from eval_pipelines.formats.promptfoo.prompts.templates import read_structured, render, resolve_refs
from eval_pipelines.formats.promptfoo.providers import openai_target, provider_model, request_defaults, target_name
from eval_pipelines.formats.promptfoo.assertions.rag import RAG_TYPES
from eval_pipelines.formats.promptfoo.assertions.vocabulary import (
    AGENTV_COMMON, COMMON, COMPARE_TYPES, SCRIPT_TYPES, VOCABULARY, Refused, agentv_extras,
)
from eval_pipelines.formats.promptfoo.assertions.text import REFUSED_TYPES, TEXT_VALUE_NOT_READ, TEXT_VOCABULARY
from eval_pipelines.formats.promptfoo.assertions.redteam import (
    PREFIX as REDTEAM_PREFIX, redteam_assertion, redteam_grading_provider, redteam_warning,
)
from eval_pipelines.formats.promptfoo.assertions.response import (
    RESPONSE_KEYS, RESPONSE_VOCABULARY, RESPONSE_WARNINGS,
)
from eval_pipelines.formats.promptfoo.assertions.trace import TRACE_VOCABULARY
from eval_pipelines.suite.models import Assertion
from eval_pipelines.suite.source import Document, read_text
from eval_pipelines.formats import compat

VOCABULARY.update(RESPONSE_VOCABULARY)  # response-field and metric types (promptfoo_vocabulary_response)
# Types whose vocabulary entry reads `threshold` into another field (a limit, an aggregator).
THRESHOLD_READ_BY_VOCABULARY = {"latency", "cost", "assert-set"}
# Types whose vocabulary entry never reads `value` (their limit is `threshold`, or they have none).
VALUE_NOT_READ = {"latency", "cost", "assert-set", "is-valid-openai-tools-call", "is-valid-openai-function-call",
                  "context-relevance", "context-faithfulness"} | TEXT_VALUE_NOT_READ

VOCABULARY.update(TEXT_VOCABULARY)  # is-xml, is-html, is-sql, is-refusal, webhook, ... (and refusals)
VOCABULARY.update(TRACE_VOCABULARY)  # trace-span-count, trace-span-duration, trace-error-spans

# promptfoo types whose mapping reads the test's variables.
WITH_VARIABLES = {**CONVERSATION_TYPES, **RAG_TYPES}


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
    except (jinja2.TemplateError, ValueError, TypeError) as exc:
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
    slots = {"output": "{output}", "rubric": "{criteria}", "prompt": "{input}", "input": "{input}",
             "rubrics": "{criteria}", "expected_output": "{expected}"}  # the last two: AgentV's names
    return render(text, {**variables, **slots})


def convert_assertion(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: Any,
                      dialect: str = "promptfoo", variables: dict[str, Any] | None = None,
                      root: Any = None, transforms: list[str] | None = None,
                      default_provider: tuple[Any, tuple[Any, ...]] | None = None) -> Assertion | None:
    """One promptfoo/AgentV ``assert`` item as our validated ``Assertion`` (None: errors recorded).
    ``default_provider``: the test's ``options.provider`` and where it is written."""
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
        compat.unknown_fields(ctx, doc, path, raw, (AGENTV_COMMON if dialect == "agentv" else COMMON)
                         | RESPONSE_KEYS.get(str(raw["type"]).removeprefix("not-"), set()))
    resolved = _resolve_value(ctx, doc, path, raw, variables or {})
    if resolved is None:
        return None
    raw = resolved
    kind: str = raw["type"]
    negate = kind.startswith("not-")
    base = kind.removeprefix("not-")
    grading_provider = None
    if "provider" in raw and not script:  # on a script, AgentV's model proxy: passed on with a warning (below)
        grading_provider = assertion_provider(ctx, doc, path + ("provider",), raw["provider"], base)
        if grading_provider is None:
            return None
    try:
        built = agentv_extras(raw, base) if dialect == "agentv" else None
        if built is None and base in WITH_VARIABLES:
            built = WITH_VARIABLES[base](raw, variables or {})
        elif built is None and base.startswith(REDTEAM_PREFIX):  # red-team graders (promptfoo_vocabulary_redteam)
            built = redteam_assertion(raw, root)
        elif built is None:
            if base not in VOCABULARY:
                ctx.error(doc, path + ("type",), f"promptfoo assertion type {kind!r} is not supported",
                          "one of " + ", ".join(sorted({*VOCABULARY, *WITH_VARIABLES} - REFUSED_TYPES))
                          + ", promptfoo:redteam:<plugin> (optionally with `not-`)")
                return None
            built = VOCABULARY[base](raw)
        if base == "assert-set":
            if not isinstance(raw.get("assert"), list) or not raw["assert"]:
                raise Refused("`assert` must be a non-empty list of assertions")
            built["assert"] = [_nested(ctx, doc, path + ("assert", i), item, dialect, variables or {}, root)
                               for i, item in enumerate(raw.get("assert") or [])]
            if any(b is None for b in built["assert"]):
                return None
    except Refused as exc:
        ctx.error(doc, path, f"{kind}: {exc}")
        return None
    if "threshold" in raw and "threshold" not in built and base not in THRESHOLD_READ_BY_VOCABULARY:
        # promptfoo allows `threshold` on every assertion; on a pass/fail type it means nothing.
        compat.not_used(ctx, doc, f"{compat.field_name(path)}.threshold", f"{kind} passes or fails without a threshold")
    warning = (RESPONSE_WARNINGS[base](raw) if base in RESPONSE_WARNINGS
               else redteam_warning(raw) if base.startswith(REDTEAM_PREFIX) else None)
    if warning:
        ctx.warnings.append(f"{doc.file}: {'.'.join(map(str, path))}: {warning}")
    if "value" in raw and base in VALUE_NOT_READ:
        compat.not_used(ctx, doc, f"{compat.field_name(path)}.value", f"{kind} reads no value")
    if "config" in raw and built.get("type") not in ("javascript", "python", "code_judge") \
            and base not in WITH_VARIABLES:  # conversation-relevance reads its `windowSize`
        ctx.error(doc, path + ("config",), f"`config` is not supported on {kind}", "no config")
        return None
    for proxy in ("target", "provider") if script else ():
        # AgentV's model proxy for a script (`max_calls`), as eval.yaml's code_judge `target`
        # (agentv_assertions): passed to the script in its `config`, with a stored warning.
        if proxy in raw:
            built["config"] = {**(built.get("config") or {}), proxy: raw[proxy]}
            ctx.warnings.append(f"{doc.file}: {'.'.join(map(str, path))}.{proxy}: code_judge `{proxy}` (a judge "
                                "calling a model through AgentV's target proxy) is not available here: the judge "
                                f"runs without model access; `{proxy}` is passed to it in `config`")
    built = {k: v for k, v in built.items() if v is not None}
    name = raw.get("metric", raw.get("name", raw.get("id") if dialect == "agentv" else None))
    if name is not None:
        built["name"] = str(name)
    if "weight" in raw:
        built["weight"] = raw["weight"]
    if negate or raw.get("negate") is True:
        built["negate"] = True
    if "rubricPrompt" in raw:
        if built.get("type") not in ("llm_judge", "rubrics"):
            ctx.error(doc, path + ("rubricPrompt",), f"`rubricPrompt` is not supported on {kind}",
                      "rubricPrompt on llm-rubric and the other model-graded types")
            return None
        try:
            built["prompt"] = rubric_prompt(raw["rubricPrompt"], variables or {})
        except (jinja2.TemplateError, ValueError, TypeError) as exc:
            ctx.error(doc, path + ("rubricPrompt",), f"rubricPrompt does not render: {exc}")
            return None
    steps = list(transforms or []) + ([raw["transform"]] if "transform" in raw else [])
    if steps and base in COMPARE_TYPES:  # graded over a test's outputs together, never one by one
        ctx.error(doc, path + ("transform",), f"a transform on {kind} is not supported", f"{kind} without a transform")
        return None
    if steps:
        if not all(_transform_ok(ctx, doc, path + ("transform",), t) for t in steps):
            return None
        outer = {k: built.pop(k) for k in ("name", "weight", "required") if k in built}
        built = {"type": "transformed", "transform": steps, "assert": built, **outer}
    if base.startswith(REDTEAM_PREFIX) and dialect == "promptfoo":  # promptfoo's red-team grading provider
        default_provider = redteam_grading_provider(root)
    # The type that grades (a transform wraps it); only model-graded types read a grading model.
    graded_type = str((built.get("assert") or {}).get("type") if built["type"] == "transformed" else built["type"])
    grader = get_grader(graded_type)
    judged = base not in COMPARE_TYPES and grader is not None and grader.needs_judge
    if grading_provider is None and default_provider is not None and not script and judged:
        # a test's `options.provider` (also from defaultTest): promptfoo's grading.provider of every
        # model-graded assertion without its own; the other types do not read it
        grading_provider = assertion_provider(ctx, doc, default_provider[1], default_provider[0], base)
        if grading_provider is None:
            return None
    if grading_provider is not None:
        if not judged:
            ctx.error(doc, path + ("provider",), f"a grading `provider` on {kind} is not supported",
                      "`provider` on a model-graded assertion (llm-rubric, similar, g-eval, ...)")
            return None
        outer = {k: built.pop(k) for k in ("name", "weight", "required") if k in built}
        built = {"type": "with_provider", "provider": grading_provider, "assert": built, **outer}
    if base == "assert-set" and raw.get("threshold") not in (None, 0.8):
        ctx.warnings.append(f"{doc.file}: {'.'.join(map(str, path))}: assert-set threshold {raw['threshold']} "
                            "is applied as the pass mark 0.8 of the weighted mean")
    if "min_score" in raw:
        built["required"] = raw["min_score"]
    elif "required" in raw:
        built["required"] = raw["required"]
    if grader is None:  # icontains_any/icontains_all come with issue 17's graders
        ctx.error(doc, path + ("type",), f"promptfoo assertion type {kind!r} needs the {graded_type!r} grader, "
                  "which this installation lacks", "an assertion type whose grader is registered")
        return None
    return parse_assertion(built, doc, path, ctx.errors)


PROVIDER_KINDS = ("text", "embedding", "classification")


def _kind_needed(base: str) -> str:
    """Which entry of a by-kind provider (``{text: ..., embedding: ...}``) promptfoo's
    getGradingProvider takes for this type: the similarity types ask for ``embedding``."""
    return "embedding" if base == "similar" or base.startswith("similar:") else "text"


def _provider_by_kind(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: dict[str, Any],
                      base: str) -> dict[str, Any] | None:
    """promptfoo's by-kind grading provider: the entry of the kind the type asks for. Without one,
    promptfoo's getGradingProvider throws "Invalid provider definition for output type" and that
    assertion fails while the others run: here its grades are errors saying so, and a stored
    warning names it at load."""
    need = _kind_needed(base)
    if need not in raw:
        reason = (f"{format_path(path)}: the grading provider has no `{need}` entry, which {base} needs (it names "
                  f"{', '.join(sorted(raw))}); promptfoo fails the assertion: Invalid provider definition "
                  f"for output type '{need}'")
        if f"{doc.file}: {reason}" not in ctx.warnings:
            ctx.warnings.append(f"{doc.file}: {reason}")
        return {"ref": f"{{{', '.join(sorted(raw))}}}", "unavailable": reason}
    chosen = assertion_provider(ctx, doc, path + (need,), raw[need], base)
    if chosen is None or base != "answer-relevance" or "embedding" not in raw:
        return chosen
    # answer-relevance asks promptfoo for both: questions from `text`, similarity from `embedding`.
    embedding = assertion_provider(ctx, doc, path + ("embedding",), raw["embedding"], "similar")
    if embedding is None:
        return None
    own = ("name", "model", "temperature", "max_tokens")  # per model; the rest says which server
    same_server = {k: v for k, v in (embedding.get("openai") or {}).items() if k not in own} == \
        {k: v for k, v in (chosen.get("openai") or {}).items() if k not in own}
    if chosen.get("openai") is None or not embedding.get("embedding_model") or not same_server:
        ctx.error(doc, path, "answer-relevance with `text` and `embedding` grading providers on different "
                  "servers (or a script) is not supported", "both on the same OpenAI-compatible server")
        return None
    return {**chosen, "ref": f"{chosen['ref']} + {embedding['ref']}", "embedding_model": embedding["embedding_model"]}


def assertion_provider(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: Any,
                       base: str = "llm-rubric") -> dict[str, Any] | None:
    """An assertion's grading ``provider`` as ``with_provider``'s mapping: an ``openai:`` or
    ``litellm:`` id (chat or ``embedding``; LiteLLM's defaults as its providers under test), as a
    suite provider with its ``config``, or a .js/.py provider file beside
    the config. Anything else is refused in one line (errors recorded, None)."""
    if isinstance(raw, dict) and "id" not in raw and raw and set(raw) <= set(PROVIDER_KINDS):
        return _provider_by_kind(ctx, doc, path, raw, base)
    pid, config = (raw.get("id"), raw.get("config") or {}) if isinstance(raw, dict) else (raw, {})
    if not isinstance(pid, str) or not pid or not isinstance(config, dict) or \
            (isinstance(raw, dict) and set(raw) - {"id", "config", "label"}):
        ctx.error(doc, path, "invalid grading provider",
                  "a provider id (openai:..., a .js or .py file), {id, config} or {text: ..., embedding: ...}")
        return None
    if pid.startswith("ollama:"):
        return ollama_provider(ctx, doc, path, pid, config)
    if pid.startswith(("openai:", "litellm:")):
        proxy = pid.split(":")[0]
        kind, model = provider_model(pid)
        if kind not in ("chat", "embedding", "embeddings") or not model:
            ctx.error(doc, path, f"grading provider {pid!r} is not supported",
                      f"{proxy}:MODEL, {proxy}:chat:MODEL or {proxy}:embedding:MODEL")
            return None
        target = openai_target(ctx, doc, path, target_name(pid), model, config, proxy=proxy)
        if target is None:
            return None
        if kind != "chat":  # an embeddings request carries no sampling settings
            target = {k: v for k, v in target.items() if k not in ("temperature", "max_tokens")}
        return {"ref": pid, "openai": {k: v for k, v in target.items() if v is not None},
                **({"embedding_model": model} if kind != "chat" else {})}
    ref = pid.removeprefix("file://")
    if ref.lower().endswith((".js", ".cjs", ".mjs", ".py")):
        if config:
            ctx.error(doc, path + ("config",), "`config` for a provider file is not supported", "no config")
            return None
        files = resolve_refs(ctx, doc, path, "file://" + ref)
        if not files:
            return None
        return {"ref": pid, "script": Path(os.path.relpath(files[0].resolve(), doc.file.parent.resolve())).as_posix()}
    ctx.error(doc, path, f"grading provider {pid!r} is not supported",
              "an OpenAI-compatible id (openai:...) or a .js/.py provider file")
    return None


def ollama_provider(ctx: LoadContext, doc: Document, path: tuple[Any, ...], pid: str,
                    config: dict[str, Any]) -> dict[str, Any] | None:
    """An ``ollama:MODEL`` / ``ollama:chat:MODEL`` / ``ollama:embeddings:MODEL`` grading provider:
    Ollama serves an OpenAI-compatible API under ``/v1`` at its base URL (promptfoo's
    src/providers/ollama.ts: ``config.apiBaseUrl``, else OLLAMA_BASE_URL, else http://localhost:11434).
    Sent through an ``openai`` target with promptfoo's chat defaults; no key unless OLLAMA_API_KEY."""
    parts = pid.split(":")
    kind, model = (parts[1], ":".join(parts[2:])) if len(parts) > 2 and parts[1] in (
        "chat", "completion", "embeddings", "embedding") else ("chat", ":".join(parts[1:]))
    if kind == "completion" or not model:
        ctx.error(doc, path, f"grading provider {pid!r} is not supported",
                  "ollama:MODEL, ollama:chat:MODEL or ollama:embeddings:MODEL")
        return None
    base = str(config.get("apiBaseUrl") or os.environ.get("OLLAMA_BASE_URL") or "http://localhost:11434").rstrip("/")
    target = {"name": target_name(pid), "type": "openai", "model": model, "api_key_env": "OLLAMA_API_KEY",
              "base_url": base if base.endswith("/v1") else base + "/v1"}
    if kind == "chat":
        target.update(request_defaults(model, config))
    return {"ref": pid, "openai": {k: v for k, v in target.items() if v is not None},
            **({"embedding_model": model} if kind != "chat" else {})}


def _nested(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: Any, dialect: str,
            variables: dict[str, Any], root: Any) -> dict[str, Any] | None:
    if isinstance(raw, dict) and str(raw.get("type", "")).removeprefix("not-") in COMPARE_TYPES:
        ctx.error(doc, path + ("type",), f"{raw['type']} inside assert-set is not supported",
                  f"{raw['type']} directly in the test's `assert`")
        return None
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
                       root: Any = None, transforms: list[str] | None = None,
                       default_provider: tuple[Any, tuple[Any, ...]] | None = None) -> list[Assertion]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        ctx.error(doc, path, f"got {type(raw).__name__}", "a list of assertions")
        return []
    out = [a for i, item in enumerate(raw)
           if (a := convert_assertion(ctx, doc, path + (i,), item, dialect, variables, root, transforms,
                                      default_provider))]
    if len(out) == len(raw):  # max-score's weights are keyed by type: it is told each position's type
        types = [str(item.get("type", "")) if isinstance(item, dict) else "llm-rubric" for item in raw]
        out = [a.model_copy(update={"config": {**a.config, "assertion_types": types}})
               if a.type == "max_score" and a.config.get("weights") else a for a in out]
    return out

"""promptfoo ``providers`` (and AgentV v5's) as targets.

Each provider becomes a named target (its ``label``, else its ``id`` with the
characters a target name cannot hold replaced by ``-``):

* ``openai:chat:MODEL``, ``openai:MODEL``, and any ``openai:*`` id with
  ``config.apiBaseUrl``/``apiHost`` (an OpenAI-compatible server): an ``openai``
  target; ``config.apiKeyEnvar`` names the key's variable, ``temperature``,
  ``max_tokens``, ``response_format``, ``tools`` and ``tool_choice`` are applied (the model's tool
  calls are then the output, as promptfoo's); other config keys are listed in a warning.
  A literal ``config.apiKey`` is refused: secrets come from the environment.
* ``litellm:MODEL`` / ``litellm:chat:MODEL``: promptfoo's LiteLLM provider is its OpenAI chat
  provider with other defaults (src/providers/litellm.ts): the base URL is ``config.apiBaseUrl``,
  else the variable ``LITELLM_API_BASE``, else ``http://0.0.0.0:4000``; the key is read from
  ``LITELLM_API_KEY`` (never from ``OPENAI_API_KEY``). An ``openai`` target with those settings.
* ``echo``: a command target answering with its input (``cat``).
* ``exec:COMMAND``: a command target running COMMAND with the prompt as its
  first argument (promptfoo's calling convention), output on stdout.
* ``file://x.py`` / ``python:x.py``: promptfoo's Python provider, run as a
  command target by a small runner that calls ``call_api(prompt, options,
  context)`` (or the function named after ``:``) and prints ``output``.
* ``prompts``: the labels of the prompts this provider runs (promptfoo's providerPromptMap,
  src/evaluator.ts ``isAllowedPrompt``); the loader gives each case only the providers allowing
  its prompt.
* anything else (``anthropic:...``, ``http``, ``file://x.js``...): the name must
  be defined in targets.yaml; the load stores a warning saying so, and
  ``load_skill`` fails with one line if it is not.

A plain string that is not a provider id (AgentV's ``providers: [gh-models]``)
is a target name from targets.yaml.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass
from typing import Any

from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.formats.promptfoo.evaluate_options import read_delay
from eval_pipelines.formats.promptfoo.assertions.openai_functions import provider_functions
from eval_pipelines.formats.promptfoo.prompts.templates import read_structured, resolve_refs
from eval_pipelines.suite.source import Document
from eval_pipelines.formats import compat

# A provider given by `python:`/`file:` keeps an `id` no provider answers to: promptfoo fails.
FAILING_KEYS = {"python", "file"}
PROVIDER_KEYS = {"id", "label", "config", "prompts", "transform", "delay", "env", "inputs"}
# promptfoo renders `config.apiKey` as a template: `{{ env.NAME | default("...", true) }}` reads NAME.
_KEY_FROM_ENV = re.compile(r"^\s*\{\{\s*env\.([A-Za-z_]\w*)\s*(?:\|[^{}]*)?\}\}\s*$")
OPENAI_CONFIG_APPLIED = {"omitDefaults", "apiKey", "apiBaseUrl", "apiHost", "apiKeyEnvar", "temperature", "max_tokens", "max_completion_tokens",
                         "response_format", "tools", "tool_choice"}
# promptfoo's Python provider protocol, run in the command target's subprocess.
PYTHON_RUNNER = """\
import importlib.util, json, os, sys
path, function, options = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # sibling modules, as promptfoo's wrapper
spec = importlib.util.spec_from_file_location("provider", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
context = {"vars": {}}
if os.environ.get("TRACEPARENT"):  # a traced suite: promptfoo's context.traceparent
    context["traceparent"] = os.environ["TRACEPARENT"]
result = getattr(module, function)(sys.stdin.read(), options, context)
if isinstance(result, dict) and result.get("error"):
    sys.exit(str(result["error"]))
output = result.get("output") if isinstance(result, dict) else result
print(output if isinstance(output, str) else json.dumps(output))
"""
_NAME_BAD = re.compile(r"[^A-Za-z0-9._-]+")
LITELLM_BASE_DEFAULT = "http://0.0.0.0:4000"  # promptfoo's createLiteLLMProvider default
# promptfoo's default grading and embedding providers when no other is configured
# (src/providers/openai/defaults.ts): the judge of a promptfoo suite when the project defines
# neither a `judge` nor a `default` target, at OPENAI_BASE_URL with OPENAI_API_KEY.
PROMPTFOO_GRADER = "promptfoo-default-grader"
PROMPTFOO_GRADER_CONFIG = {"name": PROMPTFOO_GRADER, "type": "openai", "model": "gpt-5.5-2026-04-23",
                           "embedding_model": "text-embedding-3-large", "temperature": None}


@dataclass
class Provider:
    name: str
    config: dict[str, Any] | None  # a targets.yaml entry, or None: must come from targets.yaml
    names: tuple[str, ...] = ()  # its label and id as written (tests[].providers match them)
    functions: list[dict[str, Any]] | None = None  # config.functions, for is-valid-openai-function-call only
    prompts: list[str] | None = None  # its `prompts`: the labels of the prompts it runs (None: all)
    delay_ms: int | None = None  # its `delay`: a pause after each uncached call
    transform: str | None = None  # its `transform` of the output, before the test's (pairing.output_transforms)


def target_name(text: str) -> str:
    name = _NAME_BAD.sub("-", text).strip("-._")[:64]
    return name or "provider"


def provider_model(pid: str) -> tuple[str, str]:
    """(kind, model) of an ``openai:`` or ``litellm:`` id: ``PREFIX:MODEL`` is a chat model (promptfoo's
    default). ``openai:KIND:MODEL`` takes any kind; a LiteLLM model name may hold colons, so only
    LiteLLM's own kinds (src/providers/litellm.ts) are read as one."""
    parts = pid.split(":")
    if parts[0] == "litellm":
        if len(parts) > 2 and parts[1] in ("chat", "completion", "embedding", "embeddings"):
            return parts[1], ":".join(parts[2:])
        return "chat", ":".join(parts[1:])
    return (parts[1], ":".join(parts[2:])) if len(parts) > 2 else ("chat", parts[1])


def openai_target(ctx: LoadContext, doc: Document, path: tuple[Any, ...], name: str, model: str,
                  config: dict[str, Any], proxy: str = "openai") -> dict[str, Any] | None:
    """An ``openai`` target for an OpenAI-compatible provider; ``proxy="litellm"`` takes LiteLLM's
    defaults (base URL variable and address, key variable) where the config does not set them."""
    target = _openai(ctx, doc, path, name, model, config)
    if target is not None and proxy == "litellm":
        if "base_url" not in target:
            target.update(base_url_env="LITELLM_API_BASE", base_url_default=LITELLM_BASE_DEFAULT)
        target.setdefault("api_key_env", "LITELLM_API_KEY")
    return target


def _openai(ctx: LoadContext, doc: Document, path: tuple[Any, ...], name: str, model: str,
            config: dict[str, Any]) -> dict[str, Any] | None:
    key_env = None
    if "apiKey" in config:  # `{{ env.NAME }}` (optionally with filters) names the variable: read there
        match = _KEY_FROM_ENV.match(config["apiKey"]) if isinstance(config["apiKey"], str) else None
        if match is None or (config.get("apiKeyEnvar") and config["apiKeyEnvar"] != match.group(1)):
            ctx.error(doc, path + ("config", "apiKey"), "a literal API key is not accepted" if match is None
                      else "`apiKey` and `apiKeyEnvar` name different variables",
                      "`apiKeyEnvar: NAME` or `apiKey: '{{ env.NAME }}'`: secrets come from the environment")
            return None
        key_env = match.group(1)
    target: dict[str, Any] = {"name": name, "type": "openai", "model": model, "temperature": None}
    if key_env:  # no fallback to OPENAI_API_KEY: an unset NAME fails the call, as promptfoo's `default` sentinel
        target["api_key_env"] = key_env
    base = config.get("apiBaseUrl") or config.get("apiHost")
    if base:
        base = str(base)
        target["base_url"] = base if "://" in base else f"https://{base}/v1"
    if config.get("apiKeyEnvar"):
        target["api_key_env"] = str(config["apiKeyEnvar"])
    target.update(request_defaults(model, config))
    if config.get("response_format") is not None:
        fmt = _response_format(ctx, doc, path + ("config", "response_format"), config["response_format"])
        if fmt is None:
            return None
        target["response_format"] = fmt
    if config.get("functionToolCallbacks") is not None:  # promptfoo runs them and answers with their results
        ctx.error(doc, path + ("config", "functionToolCallbacks"), "functionToolCallbacks (code answering the "
                  "model's tool calls) are not supported", "`tools` alone: the calls are the output")
        return None
    if config.get("tools") is not None:  # offered as written; the model's calls are the output
        tools = _load_ref(ctx, doc, path + ("config", "tools"), config["tools"])
        if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
            if tools is not None:
                ctx.error(doc, path + ("config", "tools"), "invalid tools", "a list of OpenAI tool definitions")
            return None
        target["tools"] = tools
        if config.get("tool_choice") is not None:
            target["tool_choice"] = config["tool_choice"]
    ignored = sorted(set(config) - OPENAI_CONFIG_APPLIED)
    if ignored:
        ctx.warnings.append(f"{doc.file}: {_where(path)}.config: {', '.join(ignored)} not applied "
                            f"(only {', '.join(sorted(OPENAI_CONFIG_APPLIED))} are)")
    return target


def is_reasoning_model(model: str) -> bool:
    """promptfoo's OpenAiGenericProvider.isReasoningModel (src/providers/openai/index.ts): o1, o3, o4 and
    gpt-5 models (also after a `/` or an `ft:` prefix)."""
    name = re.sub(r"(^|/)ft:", r"\1", model)
    return name.startswith(("o1", "o3", "o4", "gpt-5")) or any(f"/{p}" in name for p in ("o1", "o3", "o4", "gpt-5"))


def request_defaults(model: str, config: dict[str, Any]) -> dict[str, Any]:
    """The sampling settings promptfoo's OpenAI chat provider sends (getOpenAiBody in
    src/providers/openai/chat.ts, promptfoo 0.121): a reasoning model gets no `max_tokens` and no
    `temperature`, only `max_completion_tokens` when the config or OPENAI_MAX_COMPLETION_TOKENS sets
    it; any other model `max_tokens` = config, else OPENAI_MAX_TOKENS, else 1024, and `temperature` =
    config, else OPENAI_TEMPERATURE, else 0. `omitDefaults: true` drops the 1024 and the 0."""
    env = os.environ
    if is_reasoning_model(model):
        tokens = config.get("max_completion_tokens")
        if tokens is None and env.get("OPENAI_MAX_COMPLETION_TOKENS"):
            tokens = int(env["OPENAI_MAX_COMPLETION_TOKENS"])
        return {"temperature": None, **({"max_completion_tokens": tokens} if tokens is not None else {})}
    omit = bool(config.get("omitDefaults"))
    tokens = config.get("max_tokens")
    if tokens is None and (env.get("OPENAI_MAX_TOKENS") or not omit):
        tokens = int(env.get("OPENAI_MAX_TOKENS") or 1024)
    temperature = config.get("temperature")
    if temperature is None and (env.get("OPENAI_TEMPERATURE") or not omit):
        temperature = float(env.get("OPENAI_TEMPERATURE") or 0)
    return {"temperature": temperature, **({"max_tokens": tokens} if tokens is not None else {})}


def _load_ref(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: Any) -> Any:
    """``raw``, or the data of the JSON/YAML file a ``file://`` string names (relative to the config)."""
    if not (isinstance(raw, str) and raw.startswith("file://")):
        return raw
    files = resolve_refs(ctx, doc, path, raw)
    loaded = read_structured(ctx, doc, path, files[0]) if files else None
    return loaded.data if loaded is not None else None


def _response_format(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: Any) -> dict[str, Any] | None:
    """``response_format`` as sent: a mapping, or a ``file://`` JSON/YAML file holding one, whose
    json_schema ``schema`` may itself be a ``file://`` reference (promptfoo's
    maybeLoadResponseFormatFromExternalFile)."""
    raw = _load_ref(ctx, doc, path, raw)
    if raw is None:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
        ctx.error(doc, path, "invalid response_format", "{type: json_object|json_schema|text, ...}")
        return None
    inner = raw.get("json_schema") if isinstance(raw.get("json_schema"), dict) else None
    nested = raw.get("schema", (inner or {}).get("schema"))
    if raw["type"] == "json_schema" and isinstance(nested, str):
        schema = _load_ref(ctx, doc, path + ("schema",), nested)
        if schema is None:
            return None
        raw = {**raw, "schema": schema} if "schema" in raw else {**raw, "json_schema": {**(inner or {}), "schema": schema}}
    return raw


def _where(path: tuple[Any, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(path))


def parse_provider(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: Any,
                   dialect: str = "promptfoo") -> Provider | None:
    if isinstance(raw, dict) and "id" not in raw and len(raw) == 1:
        (pid, body), = raw.items()  # legacy {id: {config...}}
        if not isinstance(body, dict):
            ctx.error(doc, path, f"invalid provider {{{pid}: {body!r}}}",
                      "a provider id string (quote 'exec: ...') or {id, label, config}")
            return None
        raw = {"id": pid, **body}
    if isinstance(raw, str):
        raw = {"id": raw}
    if isinstance(raw, dict) and "id" not in raw and isinstance(raw.get("model"), str):
        raw = {"id": raw["model"], **{k: v for k, v in raw.items() if k != "model"}}  # legacy `model:`
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
        ctx.error(doc, path, "invalid provider", "a provider id or {id, label, config}")
        return None
    for key in FAILING_KEYS & set(raw):  # promptfoo fails on these ("Could not identify provider")
        ctx.error(doc, path + (key,), f"unknown field {key!r}")  # hints.py says what to write instead
    compat.unknown_fields(ctx, doc, path, {k: v for k, v in raw.items() if k not in FAILING_KEYS}, PROVIDER_KEYS)
    delay = read_delay(ctx, doc, path + ("delay",), raw.get("delay"))
    for key in ("env", "inputs"):
        if key in raw:
            ctx.error(doc, path + (key,), f"provider `{key}` is not supported", "id, label, config and prompts")
    prompts = raw.get("prompts")
    if prompts is not None and (not isinstance(prompts, list) or not all(isinstance(p, str) for p in prompts)):
        ctx.error(doc, path + ("prompts",), f"got {type(prompts).__name__}", "a list of prompt labels")
        prompts = None
    provider = _parse(ctx, doc, path, raw, dialect)
    if provider is not None:
        provider.names = tuple(str(n) for n in (raw.get("label"), raw["id"]) if n)
        provider.prompts = prompts
        provider.delay_ms = None if delay is None else int(delay)  # its target pauses after each call
        if raw.get("transform") is not None and not isinstance(raw["transform"], str):
            ctx.error(doc, path + ("transform",), "invalid transform", "a JavaScript expression or file://x.js")
        provider.transform = raw.get("transform") if isinstance(raw.get("transform"), str) else None
        if isinstance(raw.get("config"), dict):
            provider.functions = provider_functions(ctx, doc, path, raw["id"], raw["config"])
    return provider


def _parse(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: dict[str, Any],
           dialect: str) -> Provider | None:
    pid: str = raw["id"]
    config = raw.get("config") or {}
    if not isinstance(config, dict):
        ctx.error(doc, path + ("config",), "invalid config", "a mapping")
        return None
    name = target_name(str(raw.get("label") or pid))
    if pid.startswith("openai:"):
        kind, model = provider_model(pid)
        if kind == "chat":
            target = _openai(ctx, doc, path, name, model, config)
            return Provider(name, target) if target else None
    elif pid.startswith("litellm:"):
        kind, model = provider_model(pid)
        if kind == "chat" and model:
            target = openai_target(ctx, doc, path, name, model, config, proxy="litellm")
            return Provider(name, target) if target else None
    elif pid == "echo":
        if config:  # echo answers with its input: no setting changes that
            ctx.warnings.append(f"{doc.file}: {_where(path)}.config: {', '.join(sorted(config))} not used "
                                "(echo answers with its input)")
        return Provider(name, {"name": name, "type": "command", "command": ["cat"]})
    elif pid.startswith("exec:"):
        command = pid.removeprefix("exec:").strip()
        options = json.dumps({"config": config})
        script = f'{command} "$(cat)" {shlex.quote(options)} {shlex.quote("{}")}'
        return Provider(name, {"name": name, "type": "command", "command": ["sh", "-c", script]})
    elif pid.startswith(("file://", "python:")) and ".py" in pid:
        ref = pid.removeprefix("file://").removeprefix("python:")
        file, _, function = ref.partition(":")
        source = (doc.file.parent / file).resolve()
        if not ctx.policy.check(source, doc, path + ("id",), ctx.errors):
            return None
        if not source.is_file():
            ctx.error(doc, path + ("id",), f"provider file not found: {file}", "a .py file beside the config")
            return None
        # Command targets run in a sandboxed copy of the package, from its root: the path
        # must be the package-relative one (an absolute path would name the original).
        roots = [r.resolve() for r in ctx.policy.allowed_roots if source.is_relative_to(r.resolve())]
        where = str(source.relative_to(roots[0])) if roots else str(source)
        command = ["python", "-c", PYTHON_RUNNER, where,
                   function or "call_api", json.dumps({"config": config})]
        return Provider(name, {"name": name, "type": "command", "command": command})
    elif dialect == "agentv" and ":" not in pid and "/" not in pid:
        return Provider(name, None)  # a target defined in targets.yaml
    ctx.warnings.append(f"{doc.file}: {_where(path)}: provider {pid!r} is not OpenAI-compatible, echo or a "
                        f"script; it runs only if targets.yaml defines a target named {name!r}")
    return Provider(name, None)


def parse_providers(ctx: LoadContext, doc: Document, key: str, raw: Any, dialect: str = "promptfoo") -> list[Provider]:
    if raw is None:
        return []
    if isinstance(raw, str) and raw.startswith("file://"):
        out: list[Provider] = []
        for file in resolve_refs(ctx, doc, (key,), raw):
            loaded = read_structured(ctx, doc, (key,), file)
            if loaded is not None:
                items = loaded.data if isinstance(loaded.data, list) else [loaded.data]
                out += [p for i, item in enumerate(items)
                        if (p := parse_provider(ctx, loaded, (i,), item, dialect)) is not None]
        return out
    items = raw if isinstance(raw, list) else [raw]
    providers = []
    for i, item in enumerate(items):
        # promptfoo's isProviderConfigFileReference (src/providers/index.ts loadApiProviders): a list
        # entry `file://x.yaml|yml|json` holds provider configs (one or a list), read in its place.
        if isinstance(item, str) and item.startswith("file://") and item.lower().endswith((".yaml", ".yml", ".json")):
            providers += parse_providers(ctx, doc, key, item, dialect)
        elif (p := parse_provider(ctx, doc, (key, i) if isinstance(raw, list) else (key,), item, dialect)):
            providers.append(p)
    _distinct_names(ctx, doc, key, providers)
    return providers


def _distinct_names(ctx: LoadContext, doc: Document, key: str, providers: list[Provider]) -> None:
    """promptfoo runs every entry, also two with the same id/label (openai-responses' reasoning
    example repeats one): each repeat becomes its own target, named NAME-2, NAME-3... in the
    order written (the stored rows' target tells them apart), with a stored warning."""
    taken = {p.name for p in providers}
    seen: set[str] = set()
    for i, provider in enumerate(providers):
        if provider.name not in seen:
            seen.add(provider.name)
            continue
        n = 2
        while f"{provider.name}-{n}" in taken:
            n += 1
        renamed = f"{provider.name}-{n}"
        taken.add(renamed)
        seen.add(renamed)
        where = "targets.yaml must define it" if provider.config is None else "same settings as written"
        ctx.warnings.append(f"{doc.file}: {key}: entry {i + 1} repeats the provider name {provider.name!r}; "
                            f"it runs as its own target {renamed!r} ({where})")
        provider.name = renamed
        if provider.config is not None:
            provider.config = {**provider.config, "name": renamed}

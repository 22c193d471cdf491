"""How promptfoo pairs prompts with providers, as the loader builds one case per test and prompt.

* A provider's ``prompts`` (src/prompts/index.ts ``readProviderPromptMap``, src/evaluator.ts
  ``isAllowedPrompt``): the provider runs only the prompts named (a label equal to an entry or
  starting with ``entry:``); a case's targets are the providers allowing its prompt.
* A prompt's own ``config``: promptfoo's providers call the model with
  ``{...provider.config, ...prompt.config}`` (src/providers/openai/chat.ts ``getOpenAiBody``).
  The settings our OpenAI-compatible target sends (``temperature``, ``max_tokens`` /
  ``max_completion_tokens``, ``response_format``) go on the case as ``model_settings`` and
  win over the target's; other keys are listed in a stored warning, as a provider's are. When
  ``response_format`` is a ``json_schema``, promptfoo's OpenAI chat provider hands assertions
  the output parsed as JSON (the text when it does not parse): the case's ``javascript`` and
  ``python`` assertions get it so (``output_json``).
* What load-time code is told about a provider (``provider_context``) and a prompt (``prompt_raw``).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.formats.promptfoo.prompts.templates import Prompt, matches_ref
from eval_pipelines.formats.promptfoo.providers import Provider
from eval_pipelines.suite.models import Assertion, PromptModelSettings
from eval_pipelines.suite.source import Document

PROMPT_CONFIG_APPLIED = ("response_format", "temperature", "max_tokens", "max_completion_tokens")
PARSED_OUTPUT_TYPES = ("javascript", "python")  # assertions handed a parsed (non-text) output


def allowed_targets(targets: list[str] | None, providers: list[Provider],
                    prompt: Prompt) -> tuple[list[str] | None, list[Provider]]:
    """A case's targets and providers once each provider's ``prompts`` is applied; ``targets``
    stays None (every suite target) when all of them run the prompt."""
    allowed = [p for p in providers if p.prompts is None or any(matches_ref(prompt.names(), r) for r in p.prompts)]
    if len(allowed) == len(providers):
        return targets, providers
    return [p.name for p in allowed], allowed


def prompt_settings(ctx: LoadContext, doc: Document, prompt: Prompt,
                    runs_on: list[Provider]) -> PromptModelSettings | None:
    """The model settings of a prompt's own ``config`` (None without one; errors and warnings recorded)."""
    config = prompt.config
    if not config:
        return None
    where = f"{doc.file}: prompt {prompt.label!r} config"
    ignored = sorted(set(config) - set(PROMPT_CONFIG_APPLIED))
    if ignored:
        ctx.warnings.append(f"{where}: {', '.join(ignored)} not applied (only "
                            f"{', '.join(PROMPT_CONFIG_APPLIED)} are)")
    others = sorted(p.name for p in runs_on if (p.config or {}).get("type") != "openai")
    if others:
        ctx.warnings.append(f"{where}: applies to OpenAI-compatible targets only; not to {', '.join(others)}")
    try:
        return PromptModelSettings(
            temperature=config.get("temperature"), response_format=config.get("response_format"),
            max_tokens=config.get("max_tokens", config.get("max_completion_tokens")))
    except ValidationError as exc:
        error = exc.errors()[0]
        ctx.error(doc, ("prompts",), f"prompt {prompt.label!r}: config.{'.'.join(map(str, error['loc']))}: "
                  f"{error['msg']}", "promptfoo's OpenAI settings (a number, a mapping)")
        return None


def asks_json_schema(settings: PromptModelSettings | None, provider: Provider) -> bool:
    """The provider is asked for a ``json_schema`` answer (the prompt's ``response_format``, else its
    own), which promptfoo's OpenAI chat provider parses into data."""
    fmt = (settings.response_format if settings is not None else None) or \
        (provider.config or {}).get("response_format") or {}
    return (provider.config or {}).get("type") == "openai" and fmt.get("type") == "json_schema"


def with_parsed_output(ctx: LoadContext, doc: Document, assertions: list[Assertion],
                       settings: PromptModelSettings | None, runs_on: list[Provider]) -> list[Assertion]:
    """The case's assertions, its script assertions handed the output parsed when the answer is
    asked as ``json_schema`` (the prompt's ``response_format``, else each provider's), as promptfoo's
    OpenAI chat provider parses it. When only some of the case's providers ask so, the assertions
    get the text (they are shared by the case's targets), with a stored warning."""
    asks = [p for p in runs_on if asks_json_schema(settings, p)]
    if not asks or not any(a.type in PARSED_OUTPUT_TYPES for a in assertions):
        return assertions
    if len(asks) < len(runs_on):
        ctx.warnings.append(f"{doc.file}: response_format json_schema on {', '.join(p.name for p in asks)} only: "
                            "javascript/python assertions get the output as text (promptfoo parses it for those)")
        return assertions
    return [a.model_copy(update={"config": {**a.config, "output_json": True}})
            if a.type in PARSED_OUTPUT_TYPES else a for a in assertions]


def provider_context(provider: Provider) -> dict[str, Any]:
    """What promptfoo tells load-time code about a provider: its ``id`` and ``label``."""
    return {"id": provider.names[-1] if provider.names else provider.name,
            **({"label": provider.names[0]} if len(provider.names) > 1 else {})}


def prompt_raw(prompt: Prompt) -> str:
    """A prompt's ``raw`` text as promptfoo hands it to variable scripts: the template, a chat
    prompt's messages as JSON, a function prompt's source."""
    if prompt.script is not None:
        return prompt.script.file.read_text(errors="replace")
    if prompt.command is not None:  # promptfoo's raw: the script's text
        return prompt.command.files[0][1].read_text(errors="replace")
    if prompt.messages is not None:
        return json.dumps([{"role": m["role"], "content": m["content"] if isinstance(m["content"], str)
                            else str(getattr(m["content"], "ref", m["content"]))} for m in prompt.messages])
    return prompt.text or ""


def output_transforms(ctx: LoadContext, doc: Document, path: tuple[Any, ...], runs_on: list[Provider],
                      transform: Any) -> list[Any] | None:
    """The transforms a case's output goes through before its assertions, in promptfoo's order
    (src/evaluator.ts runEval: the provider's ``transform``, then the test's ``options.transform``).
    Assertions are shared by the providers a case runs on, so they must agree on their transform."""
    own = {p.transform for p in runs_on}
    if len(own) > 1:
        ctx.error(doc, path, "providers with different `transform`s run this test",
                  "the same provider transform, or `providers:` on the test to pick one")
        return None
    steps = [t for t in [next(iter(own), None), transform] if t]
    return steps or None

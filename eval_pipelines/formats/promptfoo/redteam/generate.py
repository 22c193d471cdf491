"""``promptfoo redteam generate`` here: a recipe in, a promptfoo config with generated ``tests`` out.

For each plugin, the red-team provider (``redteam.provider``, else promptfoo's default red-team
model at OPENAI_BASE_URL with OPENAI_API_KEY) is asked for ``numTests`` prompts (requests of at
most 20, re-asked while short, stopping after three requests in a row that add nothing new, as
promptfoo's ``retryWithDeduplication`` loops while ``consecutiveRetries <= 2``); the reply's ``Prompt:`` lines are the prompts
(``plugins.parse_generated_prompts``), deduplicated, at most ``numTests``. ``intent`` tests are the
configured intents themselves (promptfoo's intent plugin calls no model). Each prompt becomes a
test as promptfoo writes it (src/redteam/plugins/base.ts ``promptsToTestCases``): ``vars:
{<injectVar>: prompt}``, ``assert: [{type: promptfoo:redteam:<plugin>, metric}]``, ``metadata:
{pluginId, pluginConfig, severity}``. Strategies then add their transformed copies; ``basic``
keeps the originals. The output is the recipe with ``defaultTest.metadata.purpose`` (and
``entities``) and the tests; a header comment says what was generated and what was not.

A provider call that fails after its retries, a refusal, or a plugin that gets no prompt at all
stops the run with one line; the output file is written only when everything was generated
(a temporary file renamed into place).
"""

from __future__ import annotations

import asyncio
import copy
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

import yaml

from eval_pipelines.grading.graders import _refusal_phrases
from eval_pipelines.formats.promptfoo.redteam import plugins as P
from eval_pipelines.formats.promptfoo.redteam import strategies as S
from eval_pipelines.formats.promptfoo.redteam.recipe import PluginSpec, Recipe, intents, read_recipe
from eval_pipelines.run.targets.config import connection
from eval_pipelines.run.targets.key_policy import TRUSTED_HOSTS_ENV
from eval_pipelines.run.targets.openai_compat import OpenAITarget

PREFIX = "promptfoo:redteam:"
TIMEOUT_S = 120.0


class GenerationError(Exception):
    """Generation could not finish; the message is one line."""


@dataclass
class Generated:
    out: Path
    tests: list[dict[str, Any]]
    warnings: list[str]
    requests: int


def _test(recipe: Recipe, plugin: PluginSpec, prompt: str) -> dict[str, Any]:
    # promptfoo's generated files carry the plugin's modifiers in pluginConfig and in the metadata
    # (`modifiers: {}` when none), as redteam.schema.generated.yaml in the corpus shows.
    modifiers = P.modifiers(plugin.config)
    metadata: dict[str, Any] = {"pluginId": plugin.id,
                                "pluginConfig": {**copy.deepcopy(plugin.config), "modifiers": modifiers}}
    if plugin.severity:
        metadata["severity"] = plugin.severity
    metadata["modifiers"] = dict(modifiers)
    if plugin.id == "policy":  # promptfoo's policy tests carry the policy their grader reads
        metadata["policy"] = plugin.config["policy"]
    if plugin.id == "intent":
        metadata["goal"] = prompt
    return {"vars": {recipe.inject_var: prompt},
            "assert": [{"type": PREFIX + plugin.id, "metric": P.metric(plugin.id)}],
            "metadata": metadata}


class _Provider:
    """The red-team provider, called through our OpenAI client (its retry policy included)."""

    def __init__(self, recipe: Recipe, env: Mapping[str, str | None]) -> None:
        config = recipe.provider
        view = {k: env.get(k) for k in (config.api_key_env, config.base_url_env, TRUSTED_HOSTS_ENV)}
        reached = connection(config, view)
        if not (reached.api_key or reached.base_url):
            raise GenerationError(f"{recipe.file}: redteam.provider: neither {config.api_key_env} nor a base URL "
                                  f"({config.base_url_env}) is set for the red-team provider {config.model!r}")
        self.model = config.model
        self.requests = 0
        self._target = OpenAITarget(config, **reached._asdict())

    async def ask(self, prompt: str) -> str:
        self.requests += 1
        result = await self._target.chat([{"role": "user", "content": prompt}], timeout_s=TIMEOUT_S)
        if result.reply is None:
            raise GenerationError(f"red-team provider {self.model!r} failed after {result.attempts} attempt(s): "
                                  f"{result.error or 'no reply'}")
        return result.reply.content or ""

    async def aclose(self) -> None:
        await self._target.aclose()


async def _plugin_prompts(recipe: Recipe, plugin: PluginSpec, provider: _Provider | None, warnings: list[str]) -> list[str]:
    if plugin.id == "intent":
        return intents(plugin.config)[: plugin.num_tests]
    assert provider is not None
    prompts: list[str] = []
    idle = 0
    while len(prompts) < plugin.num_tests and idle <= P.MAX_CONSECUTIVE_RETRIES:
        batch = min(plugin.num_tests - len(prompts), P.BATCH_SIZE)
        reply = await provider.ask(P.generation_prompt(plugin.id, recipe.purpose, batch, plugin.config))
        parsed = P.parse_generated_prompts(reply)
        if not parsed and _refusal_phrases.matched(reply) is not None:
            raise GenerationError(f"{recipe.file}: redteam.plugins[{plugin.index}]: the red-team provider "
                                  f"{provider.model!r} refused to write {plugin.id} prompts: {reply.strip()[:120]!r}")
        new = [p for p in dict.fromkeys(parsed) if p not in prompts]
        prompts += new
        idle = 0 if new else idle + 1
    if not prompts:
        raise GenerationError(f"{recipe.file}: redteam.plugins[{plugin.index}]: the red-team provider "
                              f"{provider.model!r} returned no `Prompt:` lines for {plugin.id}")
    if len(prompts) < plugin.num_tests:
        warnings.append(f"{recipe.file}: redteam.plugins[{plugin.index}]: {plugin.id}: {len(prompts)} of "
                        f"{plugin.num_tests} prompts generated (the provider gave no more new ones)")
    return prompts[: plugin.num_tests]


async def generate_tests(recipe: Recipe, env: Mapping[str, str | None]) -> tuple[list[dict[str, Any]], list[str], int]:
    """The generated tests (basic first, then each strategy's copies), warnings, provider requests."""
    warnings = list(recipe.warnings)
    needs_model = any(p.id != "intent" for p in recipe.plugins)
    provider = _Provider(recipe, env) if needs_model else None
    per_plugin: list[tuple[PluginSpec, list[dict[str, Any]]]] = []
    try:
        for plugin in recipe.plugins:
            prompts = await _plugin_prompts(recipe, plugin, provider, warnings)
            per_plugin.append((plugin, [_test(recipe, plugin, p) for p in prompts]))
    finally:
        if provider is not None:
            await provider.aclose()
    tests: list[dict[str, Any]] = []
    if recipe.basic:
        tests += [t for _, plugin_tests in per_plugin for t in plugin_tests]
    for strategy in recipe.strategies:
        only = recipe.strategy_plugins.get(strategy.id)
        for plugin, plugin_tests in per_plugin:
            excluded = plugin.config.get("excludeStrategies") or []
            if (only is not None and plugin.id not in only) or strategy.id in excluded:
                continue
            tests += S.apply(strategy, plugin_tests, recipe.inject_var)
    return tests, warnings, provider.requests if provider else 0


def render(recipe: Recipe, tests: list[dict[str, Any]], warnings: list[str]) -> str:
    """The output file's text: a header comment, then the recipe with its tests."""
    config = {k: v for k, v in recipe.raw.items() if k != "tests"}
    default_test = copy.deepcopy(config.get("defaultTest")) if isinstance(config.get("defaultTest"), dict) else {}
    metadata = default_test.get("metadata") if isinstance(default_test.get("metadata"), dict) else {}
    default_test["metadata"] = {**metadata, "purpose": recipe.purpose, "entities": recipe.entities}
    config["defaultTest"] = default_test
    config["tests"] = tests
    plugins = ", ".join(f"{p.id} ({p.num_tests})" for p in recipe.plugins)
    strategies = ", ".join((["basic"] if recipe.basic else []) + [s.id for s in recipe.strategies])
    header = ["# yaml-language-server: $schema=https://promptfoo.dev/config-schema.json",
              "# " + "=" * 67,
              "# REDTEAM CONFIGURATION (written by `eval-pipelines redteam generate`)",
              "# " + "=" * 67,
              f"# Generated: {datetime.now(timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')}",
              f"# From:      {recipe.file.name}",
              f"# Total cases: {len(tests)}",
              f"# Plugins:     {plugins}",
              f"# Strategies:  {strategies}"]
    header += [f"# WARNING: {w}" for w in warnings]
    header.append("# " + "=" * 67)
    body = yaml.dump(config, Dumper=_NoAliases, sort_keys=False, allow_unicode=True, width=100)
    return "\n".join(header) + "\n" + body


class _NoAliases(yaml.SafeDumper):
    """No ``&anchors``; multi-line strings as literal blocks (readable prompts and purposes)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    block = "\n" in data and not any(c in data for c in "\r\t") and not data.endswith((" ", "\n\n"))
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|" if block else None)


_NoAliases.add_representer(str, _str)


def default_output(config: Path) -> Path:
    """promptfoo's default: ``redteam.yaml`` beside the config."""
    return config.parent / "redteam.yaml"


def generate(config: Path, out: Path | None = None, env: Mapping[str, str | None] | None = None) -> Generated:
    """Read ``config``, generate, write ``out`` (default ``redteam.yaml`` beside it). Raises
    ``SpecErrors`` for a recipe problem and ``GenerationError`` when generation fails; in both
    cases nothing is written."""
    recipe = read_recipe(config)
    out = out or default_output(config)
    tests, warnings, requests = asyncio.run(generate_tests(recipe, os.environ if env is None else env))
    text = render(recipe, tests, warnings)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(out)
    return Generated(out, tests, warnings, requests)


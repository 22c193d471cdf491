"""A promptfoo red-team recipe (a config whose ``redteam`` block configures
``promptfoo redteam generate``), read and checked before any model is called.

Every problem is one line naming the file, the line where known and the field path
(``redteam.plugins[2]``, ``redteam.strategies[0]``); all are reported together, and nothing is
generated while any remains.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval_pipelines.formats.promptfoo.redteam import plugins as P
from eval_pipelines.formats.promptfoo.redteam import strategies as S
from eval_pipelines.run.targets.config import OpenAITargetConfig
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.formats.promptfoo.providers import openai_target, provider_model
from eval_pipelines.suite.paths import PathPolicy
from eval_pipelines.suite.source import Document, load_document

# promptfoo's default red-team provider (src/redteam/providers/shared.ts loadRedteamProvider, with
# ATTACKER_MODEL and TEMPERATURE from src/redteam/providers/constants.ts): its OpenAI chat provider,
# here at OPENAI_BASE_URL with OPENAI_API_KEY.
DEFAULT_MODEL = "gpt-4o-2024-05-13"
DEFAULT_TEMPERATURE = 0.5
# Plugin config keys that change the tests' form, which generation here does not do.
REFUSED_PLUGIN_CONFIG = {"inputs": "multi-input tests (several variables per test) are not generated here"}
PLUGIN_KEYS = {"id", "numTests", "config", "severity"}
# The `redteam` keys generation reads; any other is a printed warning (and one in the file's header).
REDTEAM_KEYS = {"purpose", "plugins", "strategies", "numTests", "injectVar", "provider", "entities", "language"}
STRATEGY_KEYS = {"id", "config"}
_VAR = re.compile(r"\{\{\s*([A-Za-z_]\w*)\s*(?:\|[^}]*)?\}\}")


@dataclass
class PluginSpec:
    id: str
    index: int
    num_tests: int
    config: dict[str, Any]
    severity: str | None


@dataclass
class Recipe:
    file: Path
    raw: dict[str, Any]
    purpose: str
    entities: list[Any]
    inject_var: str
    plugins: list[PluginSpec]
    strategies: list[S.Strategy]
    # `strategies` ids per strategy id: which plugins a strategy applies to (None: all).
    strategy_plugins: dict[str, list[str] | None]
    basic: bool
    provider: OpenAITargetConfig
    warnings: list[str] = field(default_factory=list)


def _entry(raw: Any) -> tuple[str | None, dict[str, Any]]:
    if isinstance(raw, str):
        return raw, {}
    if isinstance(raw, dict) and isinstance(raw.get("id"), str):
        return raw["id"], raw
    return None, {}


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


class _Reader:
    def __init__(self, file: Path) -> None:
        self.file = file
        self.doc: Document = load_document(file)
        self.ctx = LoadContext(policy=PathPolicy((file.parent.resolve(),)))

    def error(self, path: tuple[Any, ...], message: str, expected: str | None = None) -> None:
        self.ctx.error(self.doc, path, message, expected)

    def read_beside(self, ref: str, suffixes: tuple[str, ...] | None = None) -> str | None:
        """The text of a ``file://`` reference beside the config (None: absent, outside the config's
        folder, or not one of ``suffixes``)."""
        target = (self.file.parent / ref.removeprefix("file://")).resolve()
        if (suffixes and target.suffix.lower() not in suffixes) or not self.ctx.policy.allows(target) \
                or not target.is_file():
            return None
        return target.read_text(encoding="utf-8")

    def resolve_files(self, path: tuple[Any, ...], config: dict[str, Any]) -> dict[str, Any]:
        """``file://`` strings in a plugin's config read as the file's text (promptfoo loads them
        before the plugin sees its config); the file must be beside the config."""
        out = dict(config)
        for key, value in config.items():
            if isinstance(value, str) and value.startswith("file://"):
                text = self.read_beside(value)
                if text is None:
                    self.error(path + (key,), f"file not found: {value}", "a text file beside the config")
                    continue
                out[key] = text
        return out


def read_recipe(file: Path) -> Recipe:
    """The recipe in ``file``, or ``SpecErrors`` (every problem, one line each)."""
    reader = _Reader(file)
    raw = reader.doc.data
    if not isinstance(raw, dict) or not isinstance(raw.get("redteam"), dict):
        raise SpecErrors.single(file, "no `redteam` block: nothing to generate (expected a promptfoo "
                                      "red-team config, `redteam: {purpose, plugins, ...}`)")
    block = raw["redteam"]
    warnings: list[str] = []
    purpose = block.get("purpose")
    if not (isinstance(purpose, str) and purpose.strip()):
        reader.error(("redteam", "purpose"), "missing: promptfoo would infer the purpose with a model; "
                     "here it must be written", "`redteam.purpose`: what the system under test is for")
        purpose = ""
    entities = block.get("entities") or []
    if not isinstance(entities, list):
        reader.error(("redteam", "entities"), "not a list", "a list of names")
        entities = []
    default_n = block.get("numTests", P.DEFAULT_NUM_TESTS)
    if not _positive_int(default_n):
        reader.error(("redteam", "numTests"), f"invalid value {default_n!r}", "a positive integer")
        default_n = P.DEFAULT_NUM_TESTS
    language = block.get("language")
    if language is not None and not (isinstance(language, str) and language.strip()):
        reader.error(("redteam", "language"), f"invalid value {language!r}", "a language name, e.g. French")
        language = None
    plugins = _plugins(reader, block, default_n, language)
    unread = sorted(str(k) for k in block if k not in REDTEAM_KEYS)
    if unread:
        concurrency = "; requests are made one at a time" if "maxConcurrency" in unread else ""
        warnings.append(f"{file}: redteam.{', redteam.'.join(unread)}: not applied by generation here "
                        f"(kept in the written file{concurrency})")
    strategies, targeted, basic = _strategies(reader, block, warnings)
    inject_var = _inject_var(reader, raw, block, warnings)
    provider = _provider(reader, block)
    if raw.get("tests"):
        warnings.append(f"{file}: tests: replaced by the generated tests (as `promptfoo redteam generate` writes)")
    if reader.ctx.errors:
        raise SpecErrors(reader.ctx.errors)
    assert provider is not None and inject_var is not None
    return Recipe(file, raw, purpose, entities, inject_var, plugins, strategies, targeted, basic, provider,
                  warnings + reader.ctx.warnings)


def _plugins(reader: _Reader, block: dict[str, Any], default_n: int, language: str | None) -> list[PluginSpec]:
    raw_plugins = block.get("plugins")
    if not isinstance(raw_plugins, list) or not raw_plugins:
        reader.error(("redteam", "plugins"), "missing or empty", "a list of plugin ids (`- sql-injection`)")
        return []
    found = []
    for index, item in enumerate(raw_plugins):
        path = ("redteam", "plugins", index)
        plugin, entry = _entry(item)
        if plugin is None:
            reader.error(path, "invalid plugin entry", "a plugin id or `{id, numTests, config}`")
            continue
        why = P.refusal(plugin)
        if why:
            reader.error(path, f"red-team plugin {plugin!r} cannot be generated: {why}")
            continue
        for key in sorted(set(entry) - PLUGIN_KEYS):
            reader.error(path + (key,), f"unknown plugin field {key!r}", ", ".join(sorted(PLUGIN_KEYS)))
        n = entry.get("numTests", default_n)
        if not _positive_int(n):
            reader.error(path + ("numTests",), f"invalid value {n!r}", "a positive integer")
            continue
        config = entry.get("config") or {}
        if not isinstance(config, dict):
            reader.error(path + ("config",), "not a mapping", "a mapping of plugin options")
            continue
        for key, why in REFUSED_PLUGIN_CONFIG.items():
            if key in config:
                reader.error(path + ("config", key), f"not supported: {why}")
        config = reader.resolve_files(path + ("config",), config)
        if language and "language" not in config:  # promptfoo passes redteam.language to every plugin
            config["language"] = language
        if plugin == "policy" and not (isinstance(config.get("policy"), str) and config["policy"].strip()):
            reader.error(path + ("config", "policy"), "missing", "the policy text the tests try to break")
        if plugin == "intent" and not _intents(config.get("intent")):
            reader.error(path + ("config", "intent"), "missing or not a string or list of strings",
                         "the intents to test (promptfoo's intent plugin sends each one as it is)")
        found.append(PluginSpec(plugin, index, n, config, entry.get("severity") or P.severity(plugin)))
    return found


def _intents(value: Any) -> list[str]:
    if isinstance(value, str) and value.strip():
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, str) and v.strip() for v in value):
        return list(value)
    return []


def intents(config: dict[str, Any]) -> list[str]:
    return _intents(config.get("intent"))


def _strategies(reader: _Reader, block: dict[str, Any],
                warnings: list[str]) -> tuple[list[S.Strategy], dict[str, list[str] | None], bool]:
    if "strategies" not in block:  # promptfoo's defaults
        skipped = [s for s in S.DEFAULT_STRATEGIES if s != "basic"]
        warnings.append(f"{reader.file}: redteam.strategies: not set, so promptfoo would apply its defaults "
                        f"({', '.join(S.DEFAULT_STRATEGIES)}); only basic is applied here: "
                        f"{', '.join(skipped)} call a model and are not generated")
        return [], {}, True
    raw = block.get("strategies") or []
    if not isinstance(raw, list):
        reader.error(("redteam", "strategies"), "not a list", "a list of strategy ids")
        return [], {}, True
    chosen: list[S.Strategy] = []
    targeted: dict[str, list[str] | None] = {}
    basic = True
    for index, item in enumerate(raw):
        path = ("redteam", "strategies", index)
        sid, entry = _entry(item)
        if sid is None:
            reader.error(path, "invalid strategy entry", "a strategy id or `{id, config}`")
            continue
        for key in sorted(set(entry) - STRATEGY_KEYS):
            reader.error(path + (key,), f"unknown strategy field {key!r}", "id, config")
        config = entry.get("config") or {}
        if not isinstance(config, dict):
            reader.error(path + ("config",), "not a mapping", "a mapping")
            continue
        if sid == "basic":
            enabled = config.get("enabled", True)
            if not isinstance(enabled, bool):
                reader.error(path + ("config", "enabled"), f"invalid value {enabled!r}", "true or false")
            basic = enabled is not False
            for key in sorted(set(config) - {"enabled"}):
                reader.error(path + ("config", key), f"{key!r} is not supported on basic", "enabled")
            continue
        ids = S.COLLECTIONS.get(sid, (sid,))
        if not all(i in S.STRATEGIES for i in ids):
            reader.error(path, f"strategy {sid!r} is not supported: {S.refusal(sid)}")
            continue
        for key in sorted(set(config) - S.CONFIG_KEYS):
            reader.error(path + ("config", key), f"{key!r} is not supported on {sid}",
                         "`plugins` (the plugin ids it applies to)")
        only = config.get("plugins")
        if only is not None and not (isinstance(only, list) and all(isinstance(p, str) for p in only)):
            reader.error(path + ("config", "plugins"), "not a list of plugin ids", "a list of plugin ids")
            continue
        for strategy_id in ids:
            if strategy_id not in targeted:
                chosen.append(S.STRATEGIES[strategy_id])
            targeted[strategy_id] = only
    return chosen, targeted, basic


def _prompt_text(reader: _Reader, prompt: Any) -> str | None:
    """A prompt's template text: inline, a chat-message list, ``raw``, or a ``file://`` beside the config
    (None: a file we cannot read, e.g. a script or a glob)."""
    if isinstance(prompt, dict):
        prompt = prompt.get("raw", prompt.get("content", ""))
    if isinstance(prompt, list):
        return "\n".join(str(m.get("content", "")) if isinstance(m, dict) else str(m) for m in prompt)
    text = str(prompt)
    if text.startswith("file://"):
        return reader.read_beside(text, (".txt", ".md", ".j2", ".json", ".yaml", ".yml"))
    return text


def _inject_var(reader: _Reader, raw: dict[str, Any], block: dict[str, Any], warnings: list[str]) -> str | None:
    """``redteam.injectVar``; else promptfoo's ``resolveInjectVar`` (src/redteam/index.ts): the prompts'
    variables in order of appearance, the last when several (a warning), ``query`` when none (a
    warning). A config without prompts (a target that takes the prompt itself) gets ``prompt``."""
    written = block.get("injectVar")
    if written is not None:
        if isinstance(written, str) and written.strip():
            return written.strip()
        reader.error(("redteam", "injectVar"), f"invalid value {written!r}", "a variable name")
        return None
    prompts = raw.get("prompts")
    items = [prompts] if isinstance(prompts, (str, dict)) else prompts if isinstance(prompts, list) else []
    if not items:
        return "prompt"
    texts = [_prompt_text(reader, p) for p in items]
    if any(t is None for t in texts):
        reader.error(("redteam", "injectVar"), "not set, and a prompt is a file whose variables are not read "
                     "here", "`redteam.injectVar`: the variable the attack goes in")
        return None
    names = list(dict.fromkeys(m.group(1) for t in texts for m in _VAR.finditer(t or "")))
    if len(names) > 1:
        warnings.append(f"{reader.file}: redteam.injectVar: not set; the prompts use {', '.join(names)}: "
                        f"the last, {names[-1]!r}, takes the attack (as promptfoo)")
    elif not names:
        warnings.append(f"{reader.file}: redteam.injectVar: not set and the prompts use no variable: "
                        "'query' (as promptfoo)")
    return names[-1] if names else "query"


def _provider(reader: _Reader, block: dict[str, Any]) -> OpenAITargetConfig | None:
    raw = block.get("provider")
    path: tuple[Any, ...] = ("redteam", "provider")
    if raw is None:
        return OpenAITargetConfig(name="redteam-provider", model=DEFAULT_MODEL, temperature=DEFAULT_TEMPERATURE)
    pid, entry = _entry(raw)
    if pid is None or not pid.startswith(("openai:", "litellm:")):
        reader.error(path, f"red-team provider {pid or raw!r} is not supported",
                     "an `openai:` id (or `{id: openai:..., config}`); generation calls it through the OpenAI client")
        return None
    kind, model = provider_model(pid)
    if kind != "chat":
        reader.error(path, f"red-team provider {pid!r} is not a chat model", "`openai:chat:MODEL` or `openai:MODEL`")
        return None
    config = entry.get("config") or {}
    target = openai_target(reader.ctx, reader.doc, path, "redteam-provider", model, config,
                           proxy="litellm" if pid.startswith("litellm:") else "openai")
    if target is None:
        return None
    # Written in the file: its key goes only where the operator allows (run/targets/key_policy.py).
    return OpenAITargetConfig.model_validate({**target, "declared_by": "suite"})

"""promptfoo's custom Nunjucks filters (``nunjucksFilters``; ``filters``, the name its old example used).

promptfoo (src/util/config/load.ts, src/util/index.ts ``readFilters``) maps each filter name to a
JavaScript file (a path or glob relative to the config; when a glob matches several files the last
one wins), imports the module and adds its export to the Nunjucks environment that renders the
prompts (src/evaluatorHelpers.ts ``renderPrompt`` -> ``getNunjucksEngine(filters)``). Assertion
values are rendered without them, so here too only prompts see them.

A filter is untrusted code: it never runs in-process. Each distinct call (filter, value, arguments)
runs the module in the sandbox through ``promptfoo_scripts.call_script`` (its default export called
as ``filter(value, ...args)``), whose results are reused, so a filter used on the same value by
several prompts or providers runs once. What it returns is printed as Nunjucks prints a value.
"""

from __future__ import annotations

import glob
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2

from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.formats.promptfoo.scripts import JS_SUFFIXES, Script, call_script
from eval_pipelines.suite.source import Document

FILTER_KEYS = ("nunjucksFilters", "filters")


class FilterFailed(jinja2.TemplateError):
    """A custom filter failed in the sandbox (its one-line error is already recorded)."""


def parse_filters(ctx: LoadContext, doc: Document, raw: dict[str, Any]) -> dict[str, tuple[str, Script]]:
    """The custom filters a config names, as scripts (errors recorded). ``filters`` is read as the old
    spelling of ``nunjucksFilters`` (with a stored warning: current promptfoo reads only the new name)."""
    found: dict[str, tuple[str, Script]] = {}  # name -> (the key that named it, its script)
    for key in FILTER_KEYS:
        if key not in raw:
            continue
        mapping = raw[key]
        if key == "filters":
            ctx.warnings.append(f"{doc.file}: filters: read as `nunjucksFilters` (the name promptfoo's "
                                "current loader reads; its nunjucks-custom-filters example was renamed to it)")
        if not isinstance(mapping, dict):
            ctx.error(doc, (key,), f"got {type(mapping).__name__}", "a mapping of filter name to a .js file")
            continue
        for name, ref in mapping.items():
            script = _filter_script(ctx, doc, (key, name), name, ref)
            if script is not None:
                found[str(name)] = (key, script)
    return found


def _filter_script(ctx: LoadContext, doc: Document, path: tuple[Any, ...], name: Any, ref: Any) -> Script | None:
    if not isinstance(name, str) or not name.isidentifier():
        ctx.error(doc, path, f"invalid filter name {name!r}", "a name usable in a template (letters, digits, _)")
        return None
    if not isinstance(ref, str) or not ref.strip():
        ctx.error(doc, path, f"got {type(ref).__name__}", "the path of a .js file exporting the filter function")
        return None
    named = ref.removeprefix("file://")
    pattern = Path(named) if Path(named).is_absolute() else doc.file.parent / named
    if any(ch in named for ch in "*?["):
        matches = sorted(Path(p) for p in glob.glob(str(pattern), recursive=True) if Path(p).is_file())
    else:
        resolved = ctx.policy.resolve(pattern, named)
        matches = [resolved] if resolved.is_file() else []
    if not matches:
        ctx.error(doc, path, f"filter file not found: {ref}", "a .js file relative to the config")
        return None
    file = matches[-1]  # promptfoo: a glob's last file is the filter
    if not ctx.policy.check(file, doc, path, ctx.errors):
        return None
    if file.suffix.lower() not in JS_SUFFIXES:
        ctx.error(doc, path, f"filter file {file.name} is not JavaScript (promptfoo imports it as a module)",
                  "a .js, .cjs or .mjs file")
        return None
    return Script(file, None, ref)


def filter_environment(ctx: LoadContext, doc: Document, base: jinja2.Environment,
                       filters: dict[str, tuple[str, Script]]) -> jinja2.Environment:
    """``base`` with the custom filters added; each call runs its script in the sandbox."""
    env = base.overlay()
    for name, (key, script) in filters.items():
        env.filters[name] = _sandboxed(ctx, doc, (key, name), name, script)
    return env


def _sandboxed(ctx: LoadContext, doc: Document, path: tuple[Any, ...], name: str,
               script: Script) -> Callable[..., Any]:
    def call(value: Any, *args: Any) -> Any:
        plain = [None if isinstance(v, jinja2.Undefined) else v for v in (value, *args)]
        ok, result = call_script(ctx, doc, path, script, None, plain)
        if not ok:
            raise FilterFailed(f"filter {name!r} failed")
        return result
    return call

"""The functions promptfoo's ``is-valid-openai-function-call`` checks a call against.

promptfoo reads them from the OpenAI provider's ``config.functions`` (a list, or a
``file://`` YAML/JSON file holding one). Our OpenAI target does not send them to the
model (the provider's "not applied" warning says so); they are carried only to the
``openai_function_call`` grader of the tests that run on that provider. When a test runs
on providers whose functions differ, one list cannot stand for all: a one-line error.
"""

from __future__ import annotations

from typing import Any

from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.formats.promptfoo.prompts.templates import read_structured, resolve_refs
from eval_pipelines.suite.models import Assertion
from eval_pipelines.suite.source import Document

GRADER = "openai_function_call"


def provider_functions(ctx: LoadContext, doc: Document, path: tuple[Any, ...], pid: str,
                       config: dict[str, Any]) -> list[dict[str, Any]] | None:
    """An ``openai:`` provider's ``config.functions`` as data (None: none given)."""
    raw = config.get("functions")
    if raw is None or not pid.startswith("openai:"):
        return None
    where = path + ("config", "functions")
    if isinstance(raw, str) and raw.startswith("file://"):
        files = resolve_refs(ctx, doc, where, raw)
        loaded = read_structured(ctx, doc, where, files[0]) if files else None
        if loaded is None:
            return None
        raw = loaded.data
    if not isinstance(raw, list) or not all(isinstance(f, dict) and isinstance(f.get("name"), str) for f in raw):
        ctx.error(doc, where, "invalid functions", "a list of {name, description, parameters} or a file:// holding one")
        return None
    return raw


def _graders(assertion: Assertion, grader: str = GRADER) -> list[dict[str, Any]]:
    """The config mappings of ``grader`` graders in an assertion (also wrapped)."""
    if assertion.type == grader:
        return [assertion.config]
    inner = assertion.config.get("assert")
    items = inner if isinstance(inner, list) else [inner]
    return [i for i in items if isinstance(i, dict) and i.get("type") == grader]


def attach_functions(ctx: LoadContext, doc: Document, path: tuple[Any, ...], assertions: list[Assertion],
                     lists: list[list[dict[str, Any]] | None]) -> None:
    """Give each function-call check of a test the functions of the providers it runs on."""
    _attach(ctx, doc, path, assertions, lists, GRADER, "functions", "is-valid-openai-function-call")


def attach_tools(ctx: LoadContext, doc: Document, path: tuple[Any, ...], assertions: list[Assertion],
                 lists: list[list[dict[str, Any]] | None]) -> None:
    """Give each tools-call check and red-team grader of a test the ``config.tools`` of the providers
    it runs on (promptfoo's is-valid-openai-tools-call checks against them, its red-team rubrics list
    them); a test's own ``tools`` still win in the graders."""
    if any(t is not None for t in lists):
        _attach(ctx, doc, path, assertions, lists, "openai_tools_call", "tools", "is-valid-openai-tools-call")
        # promptfoo's red-team rubrics list the target's tools (excessive-agency's reads them)
        _attach(ctx, doc, path, assertions, lists, "redteam", "tools", "promptfoo:redteam:*")


def _attach(ctx: LoadContext, doc: Document, path: tuple[Any, ...], assertions: list[Assertion],
            lists: list[list[dict[str, Any]] | None], grader: str, key: str, kind: str) -> None:
    configs = [c for a in assertions for c in _graders(a, grader)]
    if not configs:
        return
    given = [f for f in lists if f is not None]
    if any(f != given[0] for f in given[1:]):
        ctx.error(doc, path, f"{kind}: the test's providers give different `{key}`",
                  f"providers with the same config.{key}, or `providers:` on the test to pick one")
        return
    for config in configs:
        config[key] = given[0] if given else []

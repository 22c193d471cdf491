"""A prompt that does not render: promptfoo fails its evals, not the config.

promptfoo renders a prompt per eval (src/evaluatorHelpers.ts ``renderPrompt``, Nunjucks'
``renderString``), inside ``runEval``'s try: a template Nunjucks cannot parse (``{{"medication":
"x"}}``: "expected variable end"), an unknown filter or a filter failing on the data fails that
eval only, an error row, and the other prompts' evals run. So, in a promptfoo config, such a
prompt is a stored warning when it is read, and each case it gives is kept with ``fails_with``:
its rows are errors with that one line, and no model is called (run/engine.py). Its ``input`` is
the prompt as written. Other formats keep refusing the file (a load error).
"""

from __future__ import annotations

from typing import Any

import jinja2
import jinja2.sandbox

from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.formats.promptfoo.template_env import SecretInTemplate
from eval_pipelines.suite.models import Message
from eval_pipelines.suite.source import Document


class EvalFails(Exception):
    """Raised while rendering a case whose eval promptfoo fails: ``reason`` is the row's error."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    @staticmethod
    def input_of(written: str) -> list[Message]:
        return [Message(role="user", content=written or "(an empty prompt)")]


def _why(exc: Exception) -> str:
    if isinstance(exc, jinja2.TemplateSyntaxError):
        return f"template does not parse (line {exc.lineno} of the template): {exc.message}"
    return str(exc)


def syntax_failed(ctx: LoadContext, doc: Document, path: tuple[Any, ...], exc: jinja2.TemplateSyntaxError) -> None:
    """A template that does not parse, met when the prompt is read."""
    if ctx.tool == "promptfoo":
        where = ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in path).replace(".[", "[")
        ctx.warnings.append(f"{doc.file}:{doc.line_of(path)}: {where}: {_why(exc)}: promptfoo fails each eval of "
                            "this prompt, so its cases are stored as error rows (no model is called)")
        return None
    ctx.error(doc, path, _why(exc), "a Nunjucks/jinja2 template")
    return None


def render_failed(ctx: LoadContext, doc: Document, path: tuple[Any, ...], label: str, exc: Exception) -> None:
    """A prompt that does not render for one test's variables."""
    # A template reaching for Python objects, or a secret it would send, stays a load error: refused, not run.
    if ctx.tool == "promptfoo" and not isinstance(exc, (jinja2.sandbox.SecurityError, SecretInTemplate)):
        raise EvalFails(f"prompt {label!r} does not render: {_why(exc)} (promptfoo fails this eval too)")
    ctx.error(doc, path, f"prompt {label!r} does not render: {exc}", "variables the template uses")
    return None

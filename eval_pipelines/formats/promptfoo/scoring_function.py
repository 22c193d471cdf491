"""promptfoo's ``assertScoringFunction`` (on a test or ``defaultTest``): a last ``scoring_function``
assertion (grading/graders/scoring_function.py) that decides the test's verdict and score."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.formats.promptfoo.prompts.templates import parse_script
from eval_pipelines.suite.assertions import parse_assertion
from eval_pipelines.suite.source import Document


def scoring_function(ctx: LoadContext, doc: Document, path: tuple[Any, ...], merged: dict[str, Any],
                     dialect: str) -> list[Any]:
    """The test's (or defaultTest's) ``assertScoringFunction`` as a last ``scoring_function``
    assertion, or nothing."""
    ref = merged.get("assertScoringFunction")
    if ref is None or dialect != "promptfoo":
        return []
    where = path + ("assertScoringFunction",)
    if not isinstance(ref, str) or not ref.startswith("file://"):
        ctx.error(doc, where, "invalid assertScoringFunction", "a file://x.js[:fn] or file://x.py:fn reference")
        return []
    script = parse_script(ctx, doc, where, ref)
    if script is None:
        return []
    if script.language == "python" and script.function is None:
        ctx.error(doc, where, f"{ref}: a Python scoring function needs its name", "file://x.py:function")
        return []
    rel = Path(os.path.relpath(script.file.resolve(), Path(doc.file).parent.resolve())).as_posix()
    found = parse_assertion({"type": "scoring_function", "file": rel, "function": script.function},
                            doc, where, ctx.errors)
    return [found] if found is not None else []

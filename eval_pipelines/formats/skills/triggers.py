"""Trigger eval sets of Agent Skills: queries that should, or should not, make an agent load the skill.

Two shapes are read (docs/skill-creator.md, "Trigger sets"):

- skill-creator's (``scripts/run_eval.py`` iterates the file as a list)::

      [{"query": "the user prompt", "should_trigger": true}, ...]

- the ``evals`` wrapper a derivative tool accepts (``eval_description.py``: "Format B"), where
  ``prompt`` may stand for ``query``::

      {"evals": [{"prompt": "...", "should_trigger": false}, ...]}

Each item needs a non-empty ``query`` (or ``prompt``, not both) and a boolean ``should_trigger``;
other keys (``reason``, ``id``, ...) are kept on the query with a stored "accepted, not used"
warning, a likely misspelling of a known key is refused with its "did you mean". A bad file is
one line: file, line, field path, what was expected.

Where packages keep them (counted over public repositories): ``evals/trigger-evals.json``,
``evals/trigger-eval.json``, ``evals/triggers.json``, ``evals/trigger_eval.json``,
``evals/trigger_evals.json``, ``evals/trigger_queries.json`` (``TRIGGER_SET_PATHS``, looked up
in that order by :func:`find_trigger_sets`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from eval_pipelines.formats import compat
from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.suite.paths import PathPolicy
from eval_pipelines.suite.source import Document, load_document

TRIGGER_SET_PATHS = ("evals/trigger-evals.json", "evals/trigger-eval.json", "evals/triggers.json",
                     "evals/trigger_eval.json", "evals/trigger_evals.json", "evals/trigger_queries.json")
ITEM_KEYS = {"query", "prompt", "should_trigger"}
TOP_KEYS = {"evals"}


class TriggerQuery(BaseModel):
    query: str = Field(min_length=1)
    should_trigger: bool
    line: int | None = None
    # Keys the trigger tools do not read (``reason``, ...), kept as written.
    extra: dict[str, Any] = Field(default_factory=dict)


class TriggerSet(BaseModel):
    source_file: str
    queries: list[TriggerQuery]
    warnings: list[str] = Field(default_factory=list)

    @property
    def positives(self) -> int:
        return sum(q.should_trigger for q in self.queries)


def find_trigger_sets(skill_root: Path) -> list[Path]:
    """The trigger set files a package holds, in ``TRIGGER_SET_PATHS`` order."""
    return [skill_root / p for p in TRIGGER_SET_PATHS if (skill_root / p).is_file()]


def _query(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: Any) -> TriggerQuery | None:
    if not isinstance(raw, dict):
        ctx.error(doc, path, f"got {type(raw).__name__}", 'a mapping {"query": ..., "should_trigger": true|false}')
        return None
    extra = compat.ignored_fields(ctx, doc, path, raw, ITEM_KEYS, "skill-creator", "the query's extra keys")
    if "query" in raw and "prompt" in raw:
        ctx.error(doc, path + ("prompt",), "both `query` and `prompt` given", "one of them")
        return None
    key = "prompt" if "prompt" in raw else "query"
    text = raw.get(key)
    if not isinstance(text, str) or not text.strip():
        ctx.error(doc, path + (key,), "required field is missing" if text is None else f"got {text!r}",
                  "the user's query, a non-empty string")
        return None
    expected = raw.get("should_trigger")
    if not isinstance(expected, bool):
        ctx.error(doc, path + ("should_trigger",),
                  "required field is missing" if expected is None else f"got {expected!r}", "true or false")
        return None
    return TriggerQuery(query=text, should_trigger=expected, line=doc.line_of(path), extra=extra)


def load_trigger_set(file: Path) -> TriggerSet:
    """The queries of one trigger set file; :class:`SpecErrors` (one line each) when it is not one."""
    doc = load_document(file)
    ctx = LoadContext(PathPolicy(allowed_roots=(file.parent,)))
    raw = doc.data
    path: tuple[Any, ...] = ()
    if isinstance(raw, dict):
        compat.ignored_fields(ctx, doc, (), raw, TOP_KEYS, "skill-creator", None)
        if not isinstance(raw.get("evals"), list):
            ctx.error(doc, ("evals",), "required field is missing" if "evals" not in raw else "not a list",
                      'a list of {"prompt" or "query", "should_trigger"}')
            raise SpecErrors(ctx.errors)
        raw, path = raw["evals"], ("evals",)
    elif not isinstance(raw, list):
        ctx.error(doc, (), f"got {type(raw).__name__}",
                  'a list [{"query", "should_trigger"}] or {"evals": [{"prompt", "should_trigger"}]}')
        raise SpecErrors(ctx.errors)
    if not raw:
        ctx.error(doc, path, "no queries", "at least one query")
    queries = [q for i, item in enumerate(raw) if (q := _query(ctx, doc, path + (i,), item)) is not None]
    if ctx.errors:
        raise SpecErrors(ctx.errors)
    seen: set[str] = set()
    for q in queries:
        if q.query in seen:
            ctx.warnings.append(f"{file}:{q.line}: query {q.query[:60]!r} appears more than once "
                                "(each copy is run and counted)")
        seen.add(q.query)
    return TriggerSet(source_file=str(file), queries=queries, warnings=ctx.warnings)

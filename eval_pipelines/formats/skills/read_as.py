"""Keys real ``evals.json`` files write where skill-creator's schema has another one (issue 31).

skill-creator has no program that reads ``evals.json``: the agent following its ``SKILL.md`` reads
the file and hands each eval's task, files and expectations to its subagents and its grader
(``agents/grader.md``). So a key that such an agent would plainly read as one of those is read as
it, with a stored warning saying so; it is not refused, and not dropped either, since dropping it
would run the eval without its task or grade it without the criteria its author wrote:

* the task: ``input`` (a non-empty string) when there is no ``prompt``;
* the grading criteria, when there are neither ``expectations`` nor ``assertions``: the
  statements under ``checks``, ``expect``, ``expected_behavior`` and ``evaluation_criteria`` (all
  of those present, in that order): a list of statements, one statement, or a mapping whose values are the
  statements (``{"backend_selection": "Docker chosen for local parallelization"}``);
* ``expected_output`` written as an object or a list (``{"sections": [...], "title_max_chars":
  25}``): skill-creator's "description of success" is read by a model, so its JSON text is the
  description the judge gets.

Not read as criteria: statements of what must NOT happen (``fail``: "evil-winrm attempted when
5985 is closed"): skill-creator's expectations are statements that must hold, and turning a failure
condition into one would put words in the author's mouth; such keys stay in the metadata, with the
warning, for the reader of the results. Keys a repository's own runner reads (``scorers`` with
``regex``/``llm_judge`` items) are not skill-creator's either and stay in the metadata too.

Any other key keeps the ignored-key rule (formats/compat.py): kept in the case's metadata with a
warning, or refused as a likely misspelling.
"""

from __future__ import annotations

import json
from typing import Any

from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.suite.errors import format_path
from eval_pipelines.suite.source import Document

TASK_KEYS = ("input",)
CRITERIA_KEYS = ("checks", "expect", "expected_behavior", "evaluation_criteria")
KEYS = set(TASK_KEYS) | set(CRITERIA_KEYS)


def _warn(ctx: LoadContext, doc: Document, path: tuple[Any, ...], read_as: str) -> None:
    line = doc.line_of(path)
    ctx.warnings.append(f"{doc.file}{f':{line}' if line else ''}: {format_path(path)}: not a skill-creator "
                        f"key; read as {read_as}, as an agent following skill-creator would read it")


def used_keys(raw: dict[str, Any]) -> set[str]:
    """The keys of ``raw`` read as skill-creator's here (the others keep the ignored-key rule)."""
    used = {k for k in TASK_KEYS if "prompt" not in raw and isinstance(raw.get(k), str) and raw[k].strip()}
    if "expectations" not in raw and "assertions" not in raw:
        used |= {k for k in CRITERIA_KEYS if raw.get(k) is not None}
    return used


def task(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: dict[str, Any]) -> Any:
    """The eval's task: ``prompt``, else ``input`` when that is a non-empty string."""
    if "prompt" in raw:
        return raw["prompt"]
    for key in TASK_KEYS:
        if isinstance(raw.get(key), str) and raw[key].strip():
            _warn(ctx, doc, path + (key,), "the prompt")
            return raw[key]
    return None


def criteria(ctx: LoadContext, doc: Document, path: tuple[Any, ...],
             raw: dict[str, Any]) -> tuple[str, list[Any]] | None:
    """The first criteria key present and the statements under all of them (None when there are
    none), in the form ``_statements`` reads: a list of strings or objects."""
    found: list[Any] = []
    first = next((k for k in CRITERIA_KEYS if raw.get(k) is not None), None)
    for key in CRITERIA_KEYS:
        value = raw.get(key)
        if value is None:
            continue
        if isinstance(value, dict):
            value = [f"{name}: {text}" if isinstance(text, str) else text for name, text in value.items()]
        elif not isinstance(value, list):
            value = [value]
        _warn(ctx, doc, path + (key,), "expectations")
        found.extend(value)
    return (first, found) if first is not None else None


def expected_output(ctx: LoadContext, doc: Document, path: tuple[Any, ...], value: Any) -> Any:
    """``expected_output`` as written; an object or a list as its JSON text (with a warning)."""
    if isinstance(value, (dict, list)) and value:
        line = doc.line_of(path)
        ctx.warnings.append(f"{doc.file}{f':{line}' if line else ''}: {format_path(path)}: an "
                            f"{'object' if isinstance(value, dict) else 'array'}, not a description; "
                            "its JSON text is the description of success the judge gets")
        return json.dumps(value, ensure_ascii=False, indent=1)
    return value

"""Judge scripts a suite names, checked when it loads (``validate`` and the start of ``run``).

A ``code_judge`` ``script`` (seed 001; seed 000's ``customScript`` becomes one) that
does not exist, or a TypeScript script with no runtime here to run it, used to
validate and then make every case's grade an error (a ``command``, AgentV's
``[bun, run, x.ts]``, is left to the grader: its program may be installed later). Each is refused in one line naming the file, the line and the field.
Paths are resolved as the grader resolves them: from the suite file's folder, then
the assertion's ``cwd``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

from eval_pipelines.grading.graders._typescript import NEEDED, TYPESCRIPT, missing_runtime, typescript_runner
from eval_pipelines.suite.errors import SpecError, SpecErrors
from eval_pipelines.suite.models import Suite
from eval_pipelines.suite.source import Document, load_document

SCRIPT_KEYS = ("script", "customScript")


def judge_script_errors(suite: Suite) -> list[SpecError]:
    """One error per judge script or command that cannot run here (empty when all can)."""
    suite_dir = Path(suite.source_file).parent
    errors: list[SpecError] = []
    seen: set[tuple[str, str]] = set()
    for case in suite.tests:
        for config in _judges([a.model_dump() for a in case.assertions]):
            problem = _problem(config, suite_dir)
            written = config.get("script") or config.get("command")
            key = (case.source_file or suite.source_file, str(written))
            if problem is None or key in seen:
                continue
            seen.add(key)  # a suite-level judge is named once, not once per test
            errors.append(_located(key[0], written, problem, case.source_line))
    return errors


def _judges(assertions: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for item in assertions:
        config = item.get("config", item)
        if item.get("type") == "code_judge":
            yield config
        aggregator = config.get("aggregator")
        if isinstance(aggregator, dict) and ("script" in aggregator or "command" in aggregator):
            yield aggregator  # a composite's code_judge aggregator
        for nested in config.get("assert") or []:  # composite children (raw mappings)
            if isinstance(nested, dict):
                kind = nested.get("type")
                yield from _judges([{"type": "code_judge" if kind in ("code_judge", "custom", "script") else kind,
                                     "config": nested}])


def _problem(config: dict[str, Any], suite_dir: Path) -> tuple[str, str, str] | None:
    """(field, message, expected) for a judge that cannot run, else None."""
    base = suite_dir / config["cwd"] if config.get("cwd") else suite_dir
    script = config.get("script")
    if isinstance(script, str):
        path = Path(script).expanduser()
        path = path if path.is_absolute() else base / path
        if not path.is_file():
            return "script", f"judge script {script} not found", "a file relative to the suite file's folder"
        suffix = path.suffix.lower()
        if suffix in TYPESCRIPT and typescript_runner(suffix) is None:
            return "script", missing_runtime(suffix), NEEDED
    return None


def _located(file: str, written: Any, problem: tuple[str, str, str], case_line: int | None) -> SpecError:
    """The error at the line that writes the script, found in the file the case came from."""
    field, message, expected = problem
    path, line = _find(file, written)
    return SpecError(file, path or (field,), message, line or case_line, expected)


@lru_cache(maxsize=32)
def _document(file: str) -> Document | None:
    try:
        return load_document(Path(file))
    except (SpecErrors, OSError):
        return None


def _find(file: str, written: Any) -> tuple[tuple[Any, ...] | None, int | None]:
    doc = _document(file)
    if doc is None:
        return None, None
    stack: list[tuple[tuple[Any, ...], Any]] = [((), doc.data)]
    while stack:
        path, node = stack.pop(0)
        if isinstance(node, dict):
            for key in (*SCRIPT_KEYS, "command"):
                if node.get(key) == written:
                    return path + (key,), doc.line_of(path + (key,))
            stack.extend((path + (k,), v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((path + (i,), v) for i, v in enumerate(node))
    return None, None

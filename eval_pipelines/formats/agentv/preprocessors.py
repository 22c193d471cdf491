"""AgentV's suite-level ``preprocessors``: commands that turn file blocks of an agent's output into text.

What AgentV does (``loaders/evaluator-parser.ts`` ``parsePreprocessors``, ``content-preprocessor.ts``):
each entry is ``{type, command}``; ``type`` is a media type or an alias (``xlsx``, ``pdf``, ``csv``,
``docx``, ...) and ``command`` a non-empty argv list whose last item is a file, looked up like a
file part (the eval file's folder, then its parents); a missing file is a load error. When a grader
reads the candidate's output, each ``{type: file, media_type, path}`` block of that output is given
to the preprocessor of its media type (JSON ``{path, original_path, media_type}`` on stdin, its
stdout is the text); a plain-text output is passed through unchanged, and no preprocessor runs.

Here a target's answer is always text (OpenAI-compatible models, command targets' stdout, replay),
so there is no file block for a preprocessor to convert, the same as in AgentV for a text answer.
The entries are checked as AgentV checks them (shape, the command's file), then dropped with a
stored warning (``suites.warnings``) that says they never run; nothing else changes.
"""

from __future__ import annotations

from typing import Any

from eval_pipelines.suite.errors import SpecError, SpecErrors
from eval_pipelines.formats.agentv.parts import find_file
from eval_pipelines.suite.paths import PathPolicy
from eval_pipelines.suite.source import Document

EXPECTED = "a list of {type: MEDIA-TYPE, command: [ARGV..., FILE]}"


def _entry_errors(doc: Document, policy: PathPolicy, index: int, entry: Any) -> list[SpecError]:
    path = ("preprocessors", index)

    def error(sub: tuple[Any, ...], message: str, expected: str = EXPECTED) -> list[SpecError]:
        return [SpecError(str(doc.file), path + sub, message, doc.line_of(path + sub) or doc.line_of(path), expected)]

    if not isinstance(entry, dict):
        return error((), "each preprocessor must be a mapping")
    unknown = sorted(set(entry) - {"type", "command"})
    if unknown:
        return error((unknown[0],), f"unknown field {unknown[0]!r}", "type and command")
    if not isinstance(entry.get("type"), str) or not entry["type"].strip():
        return error(("type",), "preprocessor.type is required", "a media type or alias such as xlsx, pdf, csv")
    command = entry.get("command")
    if not isinstance(command, list) or not command or not all(isinstance(a, str) and a.strip() for a in command):
        return error(("command",), f"preprocessor {entry['type']!r} requires command",
                     "a non-empty list of non-empty strings (argv tokens)")
    found, _ = find_file(command[-1], doc.file, policy)
    if found is None or not policy.allows(found):
        return error(("command",), f"preprocessor command file not found: {command[-1]}",
                     "the command's last item a file relative to the eval file or a parent folder")
    return []


def take_preprocessors(doc: Document, policy: PathPolicy) -> tuple[Document, list[str]]:
    """The document without its suite-level ``preprocessors`` (checked), and the warning for them."""
    data = doc.data
    if not isinstance(data, dict) or "preprocessors" not in data:
        return doc, []
    raw = data["preprocessors"]
    if not isinstance(raw, list):
        raise SpecErrors([SpecError(str(doc.file), ("preprocessors",), "preprocessors must be a list",
                                    doc.line_of(("preprocessors",)), EXPECTED)])
    errors = [e for i, entry in enumerate(raw) for e in _entry_errors(doc, policy, i, entry)]
    if errors:
        raise SpecErrors(errors)
    types = ", ".join(str(entry["type"]) for entry in raw)
    warning = (f"{doc.file}: preprocessors ({types}): accepted, never run: they convert file blocks of an "
               "agent's output into text for the graders, and every target here answers in text (AgentV "
               "passes a text answer through unchanged too)")
    return Document(doc.file, {k: v for k, v in data.items() if k != "preprocessors"}, doc.lines), [warning]

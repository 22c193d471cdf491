"""A message's ``content`` as the text AgentV sends: strings, objects and typed parts.

AgentV (``loaders/message-processor.ts``, ``formatting/segment-formatter.ts``)
accepts three shapes of ``content``:

- a string, sent as it is;
- a mapping (structured payload), sent as indented JSON;
- a list of parts: ``{type: text, value: ...}`` (``text:`` is read too, as the
  OpenAI spelling) and ``{type: file, value: path}``. A file part is read and
  sent as ``<file path="PATH">`` + its text (CRLF as LF, trimmed) + ``</file>``;
  the parts of one message are joined with a newline.

A file path is looked up like AgentV's ``resolveFileReference``: relative to
the eval file's folder, then each parent folder up to the package root (or,
for a file validated on its own, up to the nearest folder holding ``.agentv``
or ``.git``). Where AgentV warns and drops a file it cannot find, we refuse
the suite: the text would be lost without a word. A file outside the package
is refused by the package's :class:`PathPolicy`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

from eval_pipelines.suite.errors import SpecError
from eval_pipelines.suite.paths import PathPolicy
from eval_pipelines.suite.source import Document

MAX_FILE_PART_BYTES = 2 * 1024 * 1024
PART_TYPES = ("text", "file")


class Context(Protocol):
    policy: PathPolicy
    errors: list[SpecError]

    def error(self, doc: Document, path: tuple[Any, ...], message: str, expected: str | None = None) -> None: ...


def search_roots(eval_file: Path, policy: PathPolicy) -> list[Path]:
    """The folders a relative file part is looked up in, nearest first."""
    start = eval_file.resolve().parent
    roots = [start]
    boundary = next((root.resolve() for root in policy.allowed_roots if start.is_relative_to(root.resolve())), None)
    for parent in start.parents:
        if boundary is not None:
            if not parent.is_relative_to(boundary):
                break
            roots.append(parent)
            continue
        roots.append(parent)
        if (parent / ".agentv").is_dir() or (parent / ".git").exists():
            break
    else:
        if boundary is None:
            return [start]  # no project marker anywhere above: only the eval file's own folder
    return roots


def find_file(value: str, eval_file: Path, policy: PathPolicy) -> tuple[Path | None, list[Path]]:
    """The file a part names (first match in the search roots) and every path tried."""
    written = Path(value.lstrip("/\\") if not Path(value).is_absolute() else value)
    tried: list[Path] = []
    candidates = [written] if written.is_absolute() else [root / written for root in search_roots(eval_file, policy)]
    for candidate in candidates:
        resolved = candidate.resolve()
        if resolved in tried:
            continue
        tried.append(resolved)
        if resolved.is_file():
            return resolved, tried
    return None, tried


def read_file_part(ctx: Context, doc: Document, path: tuple[Any, ...], value: str) -> str | None:
    """The text of a file part, formatted as AgentV sends it; None (with an error) when unreadable."""
    found, tried = find_file(value, doc.file, ctx.policy)
    if found is None:
        ctx.error(doc, path, f"file not found: {value} (looked in {', '.join(str(t.parent) for t in tried[:3])}"
                  + (" and parents" if len(tried) > 3 else "") + ")",
                  "a file relative to the eval file or a parent folder inside the package")
        return None
    if not ctx.policy.check(found, doc, path, ctx.errors):
        return None
    if found.stat().st_size > MAX_FILE_PART_BYTES:
        ctx.error(doc, path, f"{value} is {found.stat().st_size} bytes", f"at most {MAX_FILE_PART_BYTES} bytes")
        return None
    try:
        text = found.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        ctx.error(doc, path, f"{value} is not UTF-8 text", "a text file (images are not supported)")
        return None
    except OSError as exc:
        ctx.error(doc, path, f"cannot read {value}: {exc.strerror or exc}")
        return None
    display = value.lstrip("/\\") or value
    return f'<file path="{display}">\n{text.replace(chr(13) + chr(10), chr(10)).strip()}\n</file>'


def message_text(ctx: Context, doc: Document, path: tuple[Any, ...], content: Any) -> str | None:
    """``content`` of one message as text; None when a part is invalid (errors recorded)."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return json.dumps(content, indent=2, ensure_ascii=False, default=str)  # YAML dates as written
    if isinstance(content, (int, float)) and not isinstance(content, bool):
        return str(content)
    if not isinstance(content, list):
        ctx.error(doc, path, f"got {type(content).__name__}", "a string, a mapping or a list of content parts")
        return None
    pieces: list[str] = []
    ok = True
    for i, part in enumerate(content):
        where = path + (i,)
        if isinstance(part, str):
            pieces.append(part)
            continue
        if not isinstance(part, dict):
            ctx.error(doc, where, f"got {type(part).__name__}", "a content part {type: text|file, value: ...}")
            ok = False
            continue
        kind = part.get("type", "text")
        value = part.get("value", part.get("text"))
        if kind not in PART_TYPES:
            ctx.error(doc, where + ("type",), f"unsupported content part type {kind!r}", "text or file")
            ok = False
        elif not isinstance(value, str):
            ctx.error(doc, where + ("value",), "required field is missing" if value is None else
                      f"got {type(value).__name__}", "a string")
            ok = False
        elif kind == "file":
            text = read_file_part(ctx, doc, where + ("value",), value)
            ok = ok and text is not None
            if text is not None:
                pieces.append(text)
        else:
            pieces.append(value)
        extra = sorted(set(part) - {"type", "value", "text"})
        if extra:
            ctx.error(doc, where + (extra[0],), f"unknown field {extra[0]!r} in a content part", "type and value")
            ok = False
    return "\n".join(pieces) if ok else None


def part_texts(content: Any) -> list[str]:
    """Every text a content value carries (strings, text parts): what must reach the target."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        out: list[str] = []
        for part in content:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict) and part.get("type", "text") == "text":
                value = part.get("value", part.get("text"))
                if isinstance(value, str):
                    out.append(value)
        return out
    return []


def input_files_texts(ctx: Context, doc: Document, path: tuple[Any, ...], raw: Any) -> list[str] | None:
    """AgentV's ``input_files`` shorthand: each path read as a ``{type: file}`` part would be.

    AgentV (``loaders/shorthand-expansion.ts``) turns ``input_files`` + a string
    ``input`` into one user message: the file parts first, then the text. None
    (with errors) when the list is not a non-empty list of paths or a file is unreadable.
    """
    if not isinstance(raw, list) or not raw or not all(isinstance(item, str) for item in raw):
        ctx.error(doc, path, "invalid input_files", "a non-empty list of file paths")
        return None
    texts = [read_file_part(ctx, doc, path + (i,), value) for i, value in enumerate(raw)]
    return None if any(text is None for text in texts) else [text for text in texts if text is not None]

"""Images and audio in promptfoo tests: chat messages with content parts, binary variables.

A chat prompt's message may hold a list of content parts (promptfoo's examples/openai-vision
prompt.json: ``input_text`` + ``input_image`` with ``image_url: "{{url}}"``; openai-audio's
``input_audio`` with ``data: "{{audio_file}}"``). promptfoo sends that list as it is; we type it
(suite/content_parts.py, mapping the Responses shapes to the chat completions ones our targets
speak), template every text field with the test's variables, and keep the parts on the message.

A variable whose value is ``file://x.png`` (or another image, video or audio file) is read as
promptfoo's renderPrompt (src/evaluatorHelpers.ts) reads it: the file's bytes as base64 text,
no ``data:`` prefix. A PDF there is its text (promptfoo_pdf).
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any, Callable

from eval_pipelines.suite.content_parts import PartError, parse_parts
from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.suite.models import Message
from eval_pipelines.suite.source import Document

# promptfoo's isImageFile and isVideoFile lists, and the audio files its audio examples pass
# to `input_audio` (which takes base64).
IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".gif", ".bmp", ".webp", ".svg"}
VIDEO_SUFFIXES = {".mp4", ".webm", ".ogg", ".mov", ".avi", ".wmv", ".mkv", ".m4v"}
AUDIO_SUFFIXES = {".mp3", ".wav", ".flac", ".m4a", ".aac", ".opus"}
BINARY_SUFFIXES = IMAGE_SUFFIXES | VIDEO_SUFFIXES | AUDIO_SUFFIXES
TEXT_PART_TYPES = ("text", "input_text")


def has_non_text_parts(content: Any) -> bool:
    """A part list with a part that is not text (typed by :func:`media_message`, or refused there)."""
    return isinstance(content, list) and any(
        isinstance(p, dict) and p.get("type", "text") not in TEXT_PART_TYPES for p in content)


def _templated(value: Any, render: Callable[[str], str]) -> Any:
    """Every string inside a part rendered, as promptfoo's renderVarsInObject walks a JSON prompt."""
    if isinstance(value, str):
        return render(value)
    if isinstance(value, list):
        return [_templated(v, render) for v in value]
    if isinstance(value, dict):
        return {k: _templated(v, render) for k, v in value.items()}
    return value


def media_message(ctx: LoadContext, doc: Document, path: tuple[Any, ...], label: str, index: int,
                  role: str, content: list[Any], render: Callable[[str], str] | None = None) -> Message | None:
    """Message ``index`` of prompt ``label`` from its content parts (templated with ``render``
    when given); a part that cannot be typed is a load error at ``path``."""
    try:
        parts = parse_parts(_templated(content, render) if render else content)
    except PartError as exc:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in exc.path)
        ctx.error(doc, path, f"prompt {label!r} message {index + 1} content{where}: {exc}", exc.expected)
        return None
    return Message.of_parts(role, parts)


def binary_var(ctx: LoadContext, doc: Document, path: tuple[Any, ...], file: Path) -> str | None:
    """An image, video or audio file given as a variable: its bytes as base64 (promptfoo's)."""
    try:
        return base64.b64encode(file.read_bytes()).decode("ascii")
    except OSError as exc:
        ctx.error(doc, path, f"cannot read {file.name}: {exc.strerror or exc}", "a readable file")
        return None

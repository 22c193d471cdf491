"""Typed content parts of a chat message: text, an image, an audio clip.

A message whose content is a list of parts (promptfoo's chat prompts written as JSON, the
OpenAI chat and Responses shapes) keeps its parts here, in the shapes the OpenAI chat
completions API takes: ``text``, ``image_url`` (``{url, detail}``) and ``input_audio``
(``{data, format}``, base64). The Responses API's ``input_text`` and ``input_image``
(``image_url`` a string) are mapped to them, since our targets speak chat completions.

Every part also has a text view (:func:`text_view`): text parts as they are, a non-text
part as one bracketed placeholder naming it (an image's URL, an audio clip's format and
size), never its bytes. That view is the message's ``content``: what text-only graders,
judges, reports and command targets see, so a long base64 payload never reaches them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_serializer

# The longest URL a placeholder shows: a data URL is summarised, an ordinary URL is kept
# unless it is absurdly long (a report cell must stay readable).
MAX_URL_SHOWN = 300


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TextPart(_Part):
    type: Literal["text"] = "text"
    text: str


class ImageURL(_Part):
    url: str = Field(min_length=1)
    detail: Literal["auto", "low", "high"] | None = None

    @model_serializer(mode="wrap")
    def _without_absent_detail(self, handler: Any) -> dict[str, Any]:
        data = handler(self)  # the API's default `auto` applies; a stored row shows what was sent
        if isinstance(data, dict) and data.get("detail") is None:
            data.pop("detail", None)
        return data


class ImagePart(_Part):
    type: Literal["image_url"] = "image_url"
    image_url: ImageURL


class InputAudio(_Part):
    data: str = Field(min_length=1)  # base64 of the clip
    format: Literal["wav", "mp3"]  # the formats the chat completions API accepts


class AudioPart(_Part):
    type: Literal["input_audio"] = "input_audio"
    input_audio: InputAudio


ContentPart = Annotated[TextPart | ImagePart | AudioPart, Field(discriminator="type")]

PART_TYPES = ("text", "input_text", "image_url", "input_image", "input_audio")


class PartError(ValueError):
    """A part that cannot be typed: ``path`` inside the part list and what was expected."""

    def __init__(self, path: tuple[Any, ...], message: str, expected: str) -> None:
        super().__init__(message)
        self.path, self.expected = path, expected


def _shown_url(url: str) -> str:
    if url.startswith("data:"):
        head = url.split(",", 1)[0]
        return f"{head}, {len(url) - len(head) - 1} characters"
    return url if len(url) <= MAX_URL_SHOWN else url[:MAX_URL_SHOWN] + "..."


def placeholder(part: TextPart | ImagePart | AudioPart) -> str:
    """A part as text: its text, or a bracketed line naming a non-text part."""
    if isinstance(part, TextPart):
        return part.text
    if isinstance(part, ImagePart):
        return f"[image: {_shown_url(part.image_url.url)}]"
    data = part.input_audio.data.rstrip()
    size = len(data) * 3 // 4 - (len(data) - len(data.rstrip("=")))  # bytes the base64 decodes to
    return f"[audio: {part.input_audio.format}, {size} bytes]"


def text_view(parts: list[TextPart | ImagePart | AudioPart]) -> str:
    """The parts joined as text (one per line), placeholders for the non-text ones."""
    return "\n".join(placeholder(p) for p in parts)


def has_media(parts: list[Any] | None) -> bool:
    return any(not isinstance(p, TextPart) for p in parts or [])


def _chat_shape(raw: dict[str, Any]) -> dict[str, Any]:
    """promptfoo's and the Responses API's part shapes as chat completions ones."""
    kind = raw.get("type", "text")
    if kind == "input_text":
        return {**raw, "type": "text"}
    if kind == "input_image":  # Responses: `image_url` is the URL itself, `detail` beside it
        if "file_id" in raw:
            raise PartError(("file_id",), "an input_image by `file_id` (an uploaded OpenAI file) is not supported",
                            "`image_url` with a URL or a data: URL")
        rest = {k: v for k, v in raw.items() if k not in ("type", "image_url", "detail")}
        image = {"url": raw.get("image_url")}
        if raw.get("detail") is not None:
            image["detail"] = raw["detail"]
        return {"type": "image_url", "image_url": image, **rest}
    if kind == "image_url" and isinstance(raw.get("image_url"), str):  # the URL given bare
        return {**raw, "image_url": {"url": raw["image_url"]}}
    return {"type": kind, **{k: v for k, v in raw.items() if k != "type"}}


_ADAPTER: Any = None


def parse_parts(raw: list[Any]) -> list[TextPart | ImagePart | AudioPart]:
    """A message's part list typed; a bare string is a text part. Raises :class:`PartError`."""
    global _ADAPTER
    if _ADAPTER is None:
        from pydantic import TypeAdapter

        _ADAPTER = TypeAdapter(ContentPart)
    out = []
    for i, item in enumerate(raw):
        if isinstance(item, str):
            out.append(TextPart(text=item))
            continue
        if not isinstance(item, dict):
            raise PartError((i,), f"got {type(item).__name__}", "a content part mapping with `type`")
        if item.get("type", "text") not in PART_TYPES:
            raise PartError((i, "type"), f"content part type {item.get('type')!r} is not supported",
                            f"one of {', '.join(PART_TYPES)}")
        try:
            out.append(_ADAPTER.validate_python(_chat_shape(item)))
        except PartError as exc:
            raise PartError((i,) + exc.path, str(exc), exc.expected) from None
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = tuple(err["loc"])[1:]  # the first item is the union's tag
            raise PartError((i,) + loc, f"{item.get('type', 'text')} part: {err['msg']}",
                            "a text, image_url/input_image or input_audio part as the OpenAI API takes it") from None
    return out

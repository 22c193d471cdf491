"""Claude Code's ``--output-format stream-json`` output, read into one ``ClaudeRun``.

The CLI (``claude -p PROMPT --output-format stream-json --verbose``) prints one JSON
object per line (facts from recorded streams of CLI 2.1.332, tests/data/claude_code_streams/):

- ``{"type": "system", "subtype": "init", ...}`` first: session id, model, cwd, tools, skills,
  CLI version, permission mode;
- ``{"type": "assistant", "message": {...}}``: one line per *content block* of a model message;
  the lines of one message share ``message.id`` and repeat its usage (taken at
  ``message_start``, so their ``output_tokens`` are not final);
- ``{"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id", "content",
  "is_error"?}]}, "tool_use_result": {...}}``: what a tool returned; a user line holding text
  (``isSynthetic``) is text the CLI injected, e.g. the body of a skill the Skill tool loaded;
- ``{"type": "system", "subtype": "api_retry", "attempt", "error_status", "error"}`` per retry;
- ``{"type": "result", "subtype": "success" | "error_max_turns" | ..., "is_error", "result"?,
  "errors"?, "num_turns", "duration_ms", "total_cost_usd", "usage", "permission_denials"}`` last.
  ``is_error`` may be true with subtype ``success`` (an API error after retries): it decides.

Reading never raises on content: a line that is not a JSON object, an event of a type this
module does not know, or a tool result for an unknown call is kept and noted (``notes``), so a
cut or garbled stream still gives the transcript up to where it broke.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Iterable, Literal

from pydantic import BaseModel, Field

NOTE_TEXT_LIMIT = 120  # characters of a bad line quoted in a note


class ToolResult(BaseModel):
    content: str
    is_error: bool = False
    # The CLI's structured copy of the result (``tool_use_result``: Bash stdout/stderr, the file
    # a Write created, ...), as it sent it; None when absent.
    structured: Any = None


class ToolCall(BaseModel):
    call_id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    step: int  # the model message (1-based) that asked for it
    result: ToolResult | None = None  # None: no result came back (the stream ended first)
    permission_denied: bool = False  # the CLI refused to run it (no permission flag allowed it)


class AssistantEntry(BaseModel):
    kind: Literal["assistant"] = "assistant"
    message_id: str
    step: int
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    thinking: str = ""
    # Written by the CLI itself, not the model (``model: "<synthetic>"``: e.g. the API error it
    # gave up on); not a turn.
    synthetic: bool = False


class ToolResultEntry(BaseModel):
    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    tool: str | None  # the matched call's tool name; None when no call had this id
    result: ToolResult


class UserTextEntry(BaseModel):
    kind: Literal["user_text"] = "user_text"
    text: str
    synthetic: bool = False  # injected by the CLI (a loaded skill's body), not typed by a user


TranscriptEntry = AssistantEntry | ToolResultEntry | UserTextEntry


class SessionInit(BaseModel):
    session_id: str | None = None
    model: str | None = None
    cwd: str | None = None
    cli_version: str | None = None
    permission_mode: str | None = None
    tools: list[str] = Field(default_factory=list)
    skills: list[str] = Field(default_factory=list)


class ApiRetry(BaseModel):
    attempt: int | None = None
    error_status: int | None = None
    error: str | None = None


class TokenUsage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


class RunResult(BaseModel):
    """The final ``result`` event."""

    subtype: str | None = None
    is_error: bool = False
    text: str | None = None
    errors: list[str] = Field(default_factory=list)
    num_turns: int | None = None
    duration_ms: float | None = None
    duration_api_ms: float | None = None
    total_cost_usd: float | None = None
    usage: TokenUsage | None = None
    terminal_reason: str | None = None
    api_error_status: int | None = None
    permission_denials: list[dict[str, Any]] = Field(default_factory=list)


class ClaudeRun(BaseModel):
    init: SessionInit | None = None
    transcript: list[TranscriptEntry] = Field(default_factory=list)
    result: RunResult | None = None
    retries: list[ApiRetry] = Field(default_factory=list)
    other_events: list[dict[str, Any]] = Field(default_factory=list)  # known-unknown types, kept as sent
    notes: list[str] = Field(default_factory=list)  # what could not be read, one line each
    lines: int = 0

    # Token totals over the stream's model messages (each counted once); see ``usage``.
    message_usage: TokenUsage = Field(default_factory=TokenUsage)

    @property
    def session_id(self) -> str | None:
        return self.init.session_id if self.init else None

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [c for e in self.transcript if isinstance(e, AssistantEntry) for c in e.tool_calls]

    @property
    def tool_calls_by_name(self) -> dict[str, int]:
        return dict(Counter(c.name for c in self.tool_calls))

    @property
    def turns(self) -> int:
        """Model messages seen in the stream (the CLI's own count is ``result.num_turns``)."""
        return sum(1 for e in self.transcript if isinstance(e, AssistantEntry) and not e.synthetic)

    @property
    def answer(self) -> str | None:
        """The final answer: the result's text; None when the run failed (see ``error``)
        or its result is missing (``last_text`` then has what the model said last)."""
        if self.result is None or self.result.is_error:
            return None
        return self.result.text if self.result.text is not None else self.last_text

    @property
    def last_text(self) -> str | None:
        for entry in reversed(self.transcript):
            if isinstance(entry, AssistantEntry) and entry.text and not entry.synthetic:
                return entry.text
        return None

    @property
    def error(self) -> str | None:
        """One line when the run failed or its end is missing; None for a successful run."""
        if self.result is None:
            return "the stream ended without a result event" + (f" ({self.notes[-1]})" if self.notes else "")
        if not self.result.is_error:
            return None
        why = "; ".join(self.result.errors) or (self.result.text or "").strip() or "no message"
        # An API error after retries comes as subtype "success" with is_error: the terminal reason says more.
        label = self.result.subtype if self.result.subtype not in (None, "success") else (
            self.result.terminal_reason or "error")
        if self.result.api_error_status is not None:
            label += f", HTTP {self.result.api_error_status}"
        return f"claude code run failed ({label}): {' '.join(why.split())}"

    @property
    def usage(self) -> TokenUsage:
        """Token totals: the result's, else summed over the stream's messages (output tokens
        then undercount: the per-message lines carry the count at the message's start)."""
        if self.result is not None and self.result.usage is not None:
            return self.result.usage
        return self.message_usage


def _as_int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _usage(raw: Any) -> TokenUsage | None:
    if not isinstance(raw, dict):
        return None
    return TokenUsage(**{name: _as_int(raw.get(name)) for name in TokenUsage.model_fields})


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def result_text(content: Any) -> str:
    """A tool result's ``content`` (a string, or a list of text/image blocks) as text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, dict):
                parts.append(f"[{block.get('type', 'block')}]")
            else:
                parts.append(str(block))
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False)


class _Reader:
    def __init__(self) -> None:
        self.run = ClaudeRun()
        self.calls: dict[str, ToolCall] = {}
        self.messages: dict[str, AssistantEntry] = {}
        self.message_usage: dict[str, TokenUsage] = {}
        self.denied: set[str] = set()  # tool_use ids the CLI refused

    def note(self, text: str) -> None:
        self.run.notes.append(text)

    def line(self, number: int, raw: str) -> None:
        if not raw.strip():
            return
        self.run.lines += 1
        try:
            event = json.loads(raw)
        except ValueError as exc:
            quoted = raw.strip()[:NOTE_TEXT_LIMIT]
            self.note(f"line {number}: not JSON ({exc.msg}): {quoted!r}")
            return
        if not isinstance(event, dict):
            self.note(f"line {number}: a JSON {type(event).__name__}, not an event object")
            return
        kind = event.get("type")
        handler = {"system": self.system, "assistant": self.assistant, "user": self.user,
                   "result": self.result}.get(kind)  # type: ignore[arg-type]
        if handler is None:
            self.run.other_events.append(event)
            return
        try:
            handler(number, event)
        except (TypeError, ValueError, AttributeError) as exc:  # a known type in an unexpected shape
            self.note(f"line {number}: a {kind} event of an unexpected shape ({type(exc).__name__}: {exc})")
            self.run.other_events.append(event)

    def system(self, number: int, event: dict[str, Any]) -> None:
        subtype = event.get("subtype")
        if subtype == "init":
            self.run.init = SessionInit(
                session_id=event.get("session_id"), model=event.get("model"), cwd=event.get("cwd"),
                cli_version=event.get("claude_code_version"), permission_mode=event.get("permissionMode"),
                tools=[str(t) for t in event.get("tools") or []], skills=[str(s) for s in event.get("skills") or []])
        elif subtype == "permission_denied":
            self.denied.add(str(event.get("tool_use_id") or ""))
            self.run.other_events.append(event)
        elif subtype == "api_retry":
            status = event.get("error_status")
            self.run.retries.append(ApiRetry(attempt=event.get("attempt"),
                                             error_status=status if isinstance(status, int) else None,
                                             error=None if event.get("error") is None else str(event["error"])))
        else:
            self.run.other_events.append(event)

    def assistant(self, number: int, event: dict[str, Any]) -> None:
        message = event.get("message") or {}
        message_id = str(message.get("id") or f"line-{number}")
        entry = self.messages.get(message_id)
        if entry is None:
            synthetic = message.get("model") == "<synthetic>"
            steps = sum(1 for e in self.messages.values() if not e.synthetic)
            entry = AssistantEntry(message_id=message_id, step=steps + (0 if synthetic else 1), synthetic=synthetic)
            self.messages[message_id] = entry
            self.run.transcript.append(entry)
        usage = _usage(message.get("usage"))
        if usage is not None and not entry.synthetic:
            self.message_usage[message_id] = usage  # repeated per line: the last copy counts once
        for block in message.get("content") or []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                entry.text = "\n".join(t for t in (entry.text, str(block.get("text") or "")) if t)
            elif block.get("type") == "thinking":
                entry.thinking += str(block.get("thinking") or "")
            elif block.get("type") in ("tool_use", "server_tool_use"):
                call_id = str(block.get("id") or f"call_{entry.step}_{len(entry.tool_calls)}")
                args = block.get("input")
                call = ToolCall(call_id=call_id, name=str(block.get("name") or ""), step=entry.step,
                                input=args if isinstance(args, dict) else {"value": args})
                entry.tool_calls.append(call)
                self.calls[call_id] = call

    def user(self, number: int, event: dict[str, Any]) -> None:
        content = (event.get("message") or {}).get("content")
        if isinstance(content, str):
            self.run.transcript.append(UserTextEntry(text=content, synthetic=bool(event.get("isSynthetic"))))
            return
        results = [b for b in content or [] if isinstance(b, dict) and b.get("type") == "tool_result"]
        for block in content or []:
            if isinstance(block, dict) and block.get("type") == "text":
                self.run.transcript.append(UserTextEntry(text=str(block.get("text") or ""),
                                                         synthetic=bool(event.get("isSynthetic"))))
        for block in results:
            call_id = str(block.get("tool_use_id") or "")
            # ``tool_use_result`` belongs to the line's (single) result; with several, it is ambiguous.
            structured = event.get("tool_use_result") if len(results) == 1 else None
            result = ToolResult(content=result_text(block.get("content")), is_error=bool(block.get("is_error")),
                                structured=structured)
            call = self.calls.get(call_id)
            if call is None:
                self.note(f"line {number}: a tool result for call {call_id!r}, which no assistant message made")
            elif call.result is not None:
                self.note(f"line {number}: a second result for call {call_id!r} (the first is kept)")
            else:
                call.result = result
            self.run.transcript.append(ToolResultEntry(call_id=call_id, tool=call.name if call else None,
                                                       result=result))

    def result(self, number: int, event: dict[str, Any]) -> None:
        if self.run.result is not None:
            self.note(f"line {number}: a second result event (the last one is kept)")
        text = event.get("result")
        num_turns = event.get("num_turns")
        status = event.get("api_error_status")
        self.run.result = RunResult(
            subtype=None if event.get("subtype") is None else str(event["subtype"]),
            is_error=bool(event.get("is_error")), text=text if isinstance(text, str) else None,
            errors=[str(e) for e in event.get("errors") or [] if e is not None],
            num_turns=num_turns if isinstance(num_turns, int) else None,
            duration_ms=_number(event.get("duration_ms")), duration_api_ms=_number(event.get("duration_api_ms")),
            total_cost_usd=_number(event.get("total_cost_usd")), usage=_usage(event.get("usage")),
            terminal_reason=event.get("terminal_reason"), api_error_status=status if isinstance(status, int) else None,
            permission_denials=[d for d in event.get("permission_denials") or [] if isinstance(d, dict)])
        self.denied |= {str(d.get("tool_use_id")) for d in self.run.result.permission_denials}
        if self.run.init is None and event.get("session_id"):
            self.run.init = SessionInit(session_id=str(event["session_id"]))

    def finish(self) -> ClaudeRun:
        for call_id in self.denied & self.calls.keys():
            self.calls[call_id].permission_denied = True
        totals = TokenUsage()
        for usage in self.message_usage.values():
            for name in TokenUsage.model_fields:
                setattr(totals, name, getattr(totals, name) + getattr(usage, name))
        self.run.message_usage = totals
        if self.run.result is None:
            self.note("no result event: the CLI stopped before it finished, or its output was cut")
        return self.run


def parse_claude_stream(stream: str | bytes | Iterable[str]) -> ClaudeRun:
    """Read the CLI's stream-json output (the whole text, or its lines)."""
    if isinstance(stream, bytes):
        stream = stream.decode("utf-8", "replace")
    lines = stream.splitlines() if isinstance(stream, str) else stream
    reader = _Reader()
    for number, raw in enumerate(lines, start=1):
        reader.line(number, raw)
    return reader.finish()


def to_trace(run: ClaudeRun) -> list[dict[str, Any]]:
    """The run's tool calls as ``ModelOutput.trace`` items ``{"tool", "args", "result", "step",
    "call_id"}`` (``result`` is the text the tool returned; ``is_error`` when it failed; a call
    with no result has ``result`` None and ``answered`` False), so ``tool_trajectory`` and the
    other trace graders read a Claude Code run as they read the tool-calling loop's."""
    trace: list[dict[str, Any]] = []
    for call in run.tool_calls:
        item: dict[str, Any] = {"tool": call.name, "args": call.input,
                                "result": call.result.content if call.result else None,
                                "step": call.step, "call_id": call.call_id}
        if call.result is None:
            item["answered"] = False
        elif call.result.is_error:
            item["is_error"] = True
        if call.permission_denied:
            item["permission_denied"] = True
        trace.append(item)
    if trace and run.result is not None and run.result.subtype == "error_max_turns":
        trace[-1]["stopped"] = "max_turns"
    return trace

"""promptfoo ``prompts`` and their templating (also used by the AgentV v5 loader).

A prompt is an inline string, a chat-message list (YAML), or a ``file://``
reference (globs allowed): ``.txt``/``.md``/``.j2`` text (a ``.txt`` file holds
several prompts separated by a line ``---``, as in promptfoo), ``.json`` (a
chat-message list, rendered as text and parsed after rendering, as promptfoo
does), ``.yaml``/``.yml`` (a message list) and ``.csv`` (promptfoo's
``processCsvPrompts``: a ``prompt`` column and an optional ``label`` column, or
one prompt per line when the file has no comma; other columns are listed in a
warning). Entries may also be mappings ``{raw|id, label}``, or ``{label, messages}``
(promptfoo's chat-messages form: each message's ``content`` a template or a
``file://`` text/JSON file read as a template). Function prompts (``file://x.js[:fn]``,
``file://x.py:fn``, also as a message's ``content``) are called per test in the sandbox with
``{vars, provider}`` (``promptfoo_scripts``); what they return is the prompt (a string, chat
messages, or ``{prompt}``), rendered as a template as promptfoo's renderPrompt does. ``exec:``
prompts run their command in the sandbox per test (``promptfoo_exec``): its stdout is the prompt.

Templates are rendered with jinja2, the Nunjucks-compatible subset promptfoo
users write: ``{{ var }}``, filters, ``{% if %}``/``{% for %}``, autoescape off,
undefined variables and null rendered empty, booleans as ``true``/``false`` and
lists as ``a,b`` (as Nunjucks prints them), plus Nunjucks's ``dump`` filter
(JSON) and promptfoo's ``load`` filter (JSON.parse). A prompt that does not parse or render fails its evals
(``prompts/eval_errors.py``).
"""

from __future__ import annotations

import csv
import glob
import io
import json
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import jinja2.sandbox

from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.eval_yaml.fields import LoadContext, content_text
from eval_pipelines.formats.promptfoo.prompts.executable import Executable, executable_prompt_text, parse_executable
from eval_pipelines.formats.promptfoo.filters import FilterFailed
from eval_pipelines.formats.promptfoo.base_path import CONFIG_BASE
from eval_pipelines.formats.promptfoo.prompts.chat_text import auto_wrap_raw, yaml_chat
from eval_pipelines.formats.promptfoo.prompts.eval_errors import render_failed, syntax_failed
from eval_pipelines.formats.promptfoo.prompts.media import has_non_text_parts, media_message
from eval_pipelines.formats.promptfoo.scripts import Script, function_prompt_text, split_script_ref
from eval_pipelines.formats.promptfoo.template_env import EnvironmentView
from eval_pipelines.suite.models import Message
from eval_pipelines.suite.source import Document, load_document, read_text
from eval_pipelines.suite.registers import as_text
from eval_pipelines.formats import compat

ROLES = ("system", "user", "assistant", "tool")
PROMPT_KEYS = {"raw", "id", "label", "config", "messages"}  # a prompt given as a mapping
TEXT_SUFFIXES = (".txt", ".md", ".j2", ".prompt", ".jinja", ".njk", ".nunjucks")
FUNCTION_SUFFIXES = (".py", ".js", ".ts", ".mjs", ".cjs", ".mts", ".cts")
PROMPT_CSV_COLUMNS = ("prompt", "label")  # the columns promptfoo's CSV prompt files use


def _nunjucks_text(value: Any) -> Any:
    """How Nunjucks prints a value: JavaScript's ``true``/``false``, nothing for null,
    a list of scalars joined by commas (Array.toString), other structures as JSON."""
    # The printing rule is suite/registers.as_text's; numbers and strings stay as they are, so a
    # template can still compute with them.
    if value is None or isinstance(value, (bool, list, dict)):
        return as_text(value)
    return value


# Sandboxed: a template is untrusted input, and a plain jinja2 environment lets one reach
# Python objects (``{{ ''.__class__.__mro__ }}``) and run code in this process.
_ENV = jinja2.sandbox.SandboxedEnvironment(autoescape=False, keep_trailing_newline=True, undefined=jinja2.Undefined,
                          finalize=_nunjucks_text)
_ENV.filters["dump"] = lambda value, indent=None: json.dumps(value, indent=indent, ensure_ascii=False)
_ENV.filters["load"] = json.loads  # promptfoo's built-in `load` filter (JSON.parse)
_ENV.globals["env"] = EnvironmentView()  # promptfoo's `env` global (promptfoo_template_env)
# The environment prompts compile and render with during one load: _ENV plus the config's custom
# filters (promptfoo_filters); assertion values keep _ENV, as promptfoo renders them without them.
PROMPT_ENV: ContextVar[jinja2.Environment] = ContextVar("promptfoo_prompt_env", default=_ENV)


@dataclass
class Prompt:
    """One prompt: a template text, or a list of message templates (chat)."""

    label: str
    text: str | None = None
    messages: list[dict[str, Any]] | None = None
    ident: str | None = None  # the `id` of a prompt given as a mapping (tests[].prompts may name it)
    script: Script | None = None  # a function prompt: called per test (its messages may hold scripts too)
    config: dict[str, Any] | None = None  # its own `config`, laid over its providers' (promptfoo_pairing)
    command: Executable | None = None  # an `exec:` prompt: run per test in the sandbox

    def runs_code(self) -> bool:
        return self.script is not None or self.command is not None or any(isinstance(m["content"], Script) for m in self.messages or [])

    def names(self) -> list[str]:
        return [n for n in (self.label, self.ident) if n]


def matches_ref(names: list[str], ref: str) -> bool:
    """promptfoo's rule for `tests[].prompts` and `tests[].providers` entries (src/evaluator.ts
    isPromptAllowed; docs/configuration/test-cases "Filtering Tests by Provider"): an exact label
    or id, ``group:*`` for any name starting ``group:``, and a bare ``group`` also matching ``group:...``."""
    if ref.endswith("*"):
        return any(n.startswith(ref[:-1]) for n in names)
    return any(n == ref or n.startswith(ref + ":") for n in names)


def compile_template(ctx: LoadContext, doc: Document, path: tuple[Any, ...], text: str) -> jinja2.Template | None:
    try:
        return PROMPT_ENV.get().from_string(auto_wrap_raw(text))
    except jinja2.TemplateSyntaxError as exc:  # promptfoo: its evals fail, not the config
        return syntax_failed(ctx, doc, path, exc)


def render(template: str, variables: dict[str, Any], env: jinja2.Environment = _ENV) -> str:
    """Render one template; raises ``jinja2.TemplateError`` (callers report it as a load error)."""
    return env.from_string(template).render(**variables)


def resolve_refs(ctx: LoadContext, doc: Document, path: tuple[Any, ...], ref: str,
                 base: Path | None = None) -> list[Path]:
    """Files a ``file://`` reference names (globs expanded), each inside what the policy allows;
    relative to ``base`` when given, else to the file that holds the reference."""
    pattern = ref.removeprefix("file://")
    pattern = pattern.split(":", 1)[0] if ":" in Path(pattern).name else pattern  # file://x.py:fn
    candidate = Path(pattern) if Path(pattern).is_absolute() else (base or CONFIG_BASE.get() or doc.file.parent) / pattern
    if any(ch in pattern for ch in "*?["):
        matches = sorted(Path(p) for p in glob.glob(str(candidate), recursive=True) if Path(p).is_file())
        if not matches:
            ctx.error(doc, path, f"no file matches {ref!r}", "a path or glob relative to the config")
        return [m for m in matches if ctx.policy.check(m, doc, path, ctx.errors)]
    resolved = ctx.policy.resolve(candidate, pattern)
    if not ctx.policy.check(resolved, doc, path, ctx.errors):
        return []
    if not resolved.is_file():
        ctx.error(doc, path, f"file not found: {ref}", "a path relative to the config")
        return []
    return [resolved]


def parse_script(ctx: LoadContext, doc: Document, path: tuple[Any, ...], ref: str,
                 base: Path | None = None) -> Script | None:
    """The script a ``file://path[:function]`` reference names (errors recorded: missing, TypeScript, a glob)."""
    split = split_script_ref(ctx, doc, path, ref)
    if split is None:
        return None
    files = resolve_refs(ctx, doc, path, "file://" + split[0], base)
    return Script(files[0], split[1], ref) if files else None


def read_structured(ctx: LoadContext, doc: Document, path: tuple[Any, ...], file: Path) -> Document | None:
    """A YAML/JSON file as a Document (errors recorded, None on failure)."""
    try:
        return load_document(file)
    except SpecErrors as exc:
        ctx.errors.extend(exc.errors)
        return None


def _messages_from(raw: Any) -> list[dict[str, Any]] | None:
    """``raw`` as chat messages ({role, content}), or None when it is not a message list."""
    if not isinstance(raw, list) or not raw:
        return None
    if not all(isinstance(m, dict) and "content" in m and m.get("role", "user") in ROLES for m in raw):
        return None
    return [{"role": m.get("role", "user"), "content": m["content"]} for m in raw]


def _csv_prompts(ctx: LoadContext, doc: Document, path: tuple[Any, ...], file: Path,
                 label: str | None) -> list[Prompt]:
    """promptfoo's ``processCsvPrompts`` (src/prompts/processors/csv.ts)."""
    text = _read(ctx, doc, path, file).lstrip("\ufeff")
    if "," not in text:  # one prompt per line, an optional `prompt` header
        lines = [line for line in text.splitlines() if line.strip()]
        lines = lines[1:] if lines and lines[0].strip().lower() == "prompt" else lines
        return [Prompt(label or f"Prompt {i + 1} - {line}", text=line) for i, line in enumerate(lines)]
    reader = csv.DictReader(io.StringIO(text), skipinitialspace=True)
    extra = [c for c in reader.fieldnames or [] if c and c.strip() not in PROMPT_CSV_COLUMNS]
    if extra:
        ctx.warnings.append(f"{file}: columns {', '.join(extra)} are not read (a prompt file uses "
                            "`prompt` and `label`)")
    out = []
    for row in reader:
        row = {(k or "").strip(): (v or "").strip() for k, v in row.items() if isinstance(v, str)}
        if row.get("prompt"):
            out.append(Prompt(row.get("label") or label or f"Prompt {len(out) + 1} - {row['prompt']}",
                              text=row["prompt"]))
    if not out:
        ctx.error(doc, path, f"{file.name} holds no prompt", "a `prompt` column with one prompt per row")
    return out


def _file_prompts(ctx: LoadContext, doc: Document, path: tuple[Any, ...], ref: str,
                  label: str | None) -> list[Prompt]:
    named = ref.removeprefix("file://")
    named = named.split(":", 1)[0] if ":" in Path(named).name else named  # file://x.py:fn
    if Path(named).suffix.lower() in FUNCTION_SUFFIXES:  # a function prompt, called per test
        script = parse_script(ctx, doc, path, ref)
        return [Prompt(label or ref.removeprefix("file://"), script=script)] if script else []
    out: list[Prompt] = []
    for file in resolve_refs(ctx, doc, path, ref):
        suffix = file.suffix.lower()
        name = label or file.name
        if suffix in FUNCTION_SUFFIXES:  # a glob that matched a script
            ctx.error(doc, path, f"a glob matching a function prompt ({file.name}) is not supported",
                      "the script named on its own: file://script.js[:function]")
        elif suffix == ".csv":
            out += _csv_prompts(ctx, doc, path, file, label)
        elif suffix in (".yaml", ".yml"):
            loaded = read_structured(ctx, doc, path, file)
            if loaded is None:
                continue
            messages = _messages_from(loaded.data)
            if messages is not None:
                out.append(Prompt(name, messages=messages))
            elif isinstance(loaded.data, str):
                out.append(Prompt(name, text=loaded.data))
            else:
                ctx.error(doc, path, f"{file.name} is not a list of chat messages", "[{role, content}, ...]")
        elif suffix == ".json":
            # promptfoo renders a JSON prompt as text, then reads the chat messages from it.
            out.append(Prompt(name, text=_read(ctx, doc, path, file)))
        elif suffix in TEXT_SUFFIXES or suffix == "":
            text = _read(ctx, doc, path, file)
            parts = [p.strip("\n") for p in text.split("\n---\n")] if suffix == ".txt" else [text]
            for i, part in enumerate(parts):
                out.append(Prompt(name if len(parts) == 1 else f"{name}#{i + 1}", text=part))
        else:
            ctx.error(doc, path, f"prompt file type {suffix!r} is not supported",
                      "a .txt, .md, .j2, .json, .yaml or .csv prompt file")
    return out


def _read(ctx: LoadContext, doc: Document, path: tuple[Any, ...], file: Path) -> str:
    try:
        return read_text(file)
    except SpecErrors as exc:
        ctx.errors.extend(exc.errors)
        return ""


def _one_prompt(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: Any, index: int,
                label: str | None = None) -> list[Prompt]:
    if isinstance(raw, str):
        if raw.startswith("file://"):
            return _file_prompts(ctx, doc, path, raw, label)
        if raw.startswith("exec:"):  # promptfoo runs the command; its stdout is the prompt (promptfoo_exec)
            command = parse_executable(ctx, doc, path, raw)
            return [Prompt(label or raw, command=command)] if command else []
        if "\n" not in raw and "{{" not in raw and (doc.file.parent / raw).is_file():
            return _file_prompts(ctx, doc, path, "file://" + raw, label)  # a bare path, as promptfoo reads it
        prompt = Prompt(label or f"prompt-{index + 1}", text=raw)
    elif _messages_from(raw) is not None:
        prompt = Prompt(label or f"prompt-{index + 1}", messages=_messages_from(raw))
    elif isinstance(raw, dict) and "file" in raw:
        # Not a promptfoo prompt field: promptfoo's normalizeInput takes `raw || id` as the prompt
        # and ignores `file`, so it would send the id's text itself (examples/openai-audio).
        ctx.error(doc, path + ("file",), "`file` is not a promptfoo prompt field (promptfoo ignores it and "
                  f"sends the `id` text {raw.get('id')!r} as the prompt)",
                  f"`id: file://{str(raw['file']).removeprefix('./')}` to read the prompt from the file")
        return []
    elif isinstance(raw, dict) and "messages" in raw and not ("raw" in raw or "id" in raw):
        return _messages_prompt(ctx, doc, path, raw, index, label)
    elif isinstance(raw, dict) and ("raw" in raw or "id" in raw):
        compat.unknown_fields(ctx, doc, path, raw, PROMPT_KEYS)
        body = raw.get("raw", raw.get("id"))
        if not isinstance(body, (str, list)):
            ctx.error(doc, path, "invalid prompt", "`raw` text or `id: file://...`")
            return []
        found = _one_prompt(ctx, doc, path, body, index, raw.get("label") or label)
        for prompt in found:
            prompt.ident = str(raw["id"]) if raw.get("id") is not None else None
            prompt.config = _config(ctx, doc, path, raw)
        return found
    else:
        ctx.error(doc, path, f"got {type(raw).__name__}",
                  "a prompt string, a list of chat messages, a file:// reference or {raw|id, label}")
        return []
    for i, template in enumerate([prompt.text] if prompt.text is not None else
                                 [content_text(m["content"]) for m in prompt.messages or []]):
        compile_template(ctx, doc, path if prompt.text is not None else path + (i, "content"), template)
    return [prompt]


def _messages_prompt(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: dict[str, Any],
                     index: int, label: str | None) -> list[Prompt]:
    """promptfoo's ``{label, messages: [{role, content}]}`` (examples/chat-messages-format): the
    messages in the order written, each ``content`` a template or a ``file://`` file whose text
    is the template (.txt, .md, .j2, .json...); a script file there is a function prompt, refused."""
    compat.unknown_fields(ctx, doc, path, raw, PROMPT_KEYS - {"raw", "id"})
    items = raw["messages"]
    if not isinstance(items, list) or not items:
        ctx.error(doc, path + ("messages",), "invalid messages", "a non-empty list of {role, content}")
        return []
    messages: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        where = path + ("messages", i)
        if not isinstance(item, dict) or "content" not in item or item.get("role", "user") not in ROLES:
            ctx.error(doc, where, "invalid message", "{role: " + "|".join(ROLES) + ", content}")
            continue
        content = item["content"]
        if isinstance(content, str) and content.startswith("file://"):
            named = content.removeprefix("file://")
            named = named.split(":", 1)[0] if ":" in Path(named).name else named
            if Path(named).suffix.lower() in FUNCTION_SUFFIXES:  # its result is the content, per test
                script = parse_script(ctx, doc, where + ("content",), content)
                if script is not None:
                    messages.append({"role": item.get("role", "user"), "content": script})
                continue
            files = resolve_refs(ctx, doc, where + ("content",), content)
            if not files:
                continue
            content = "\n".join(_read(ctx, doc, where + ("content",), f) for f in files)
        if isinstance(content, str):
            compile_template(ctx, doc, where + ("content",), content)
        messages.append({"role": item.get("role", "user"), "content": content})
    name = raw.get("label") or label or f"prompt-{index + 1}"
    config = _config(ctx, doc, path, raw)
    return [Prompt(str(name), messages=messages, config=config)] if len(messages) == len(items) else []


def _config(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: dict[str, Any]) -> dict[str, Any] | None:
    """A prompt's own ``config`` (promptfoo_pairing applies it)."""
    config = raw.get("config")
    if config is not None and not isinstance(config, dict):
        ctx.error(doc, path + ("config",), f"got {type(config).__name__}", "a mapping of provider settings")
        return None
    return config or None


def prompt_source(prompt: Prompt) -> str:
    """What a prompt is written as: its template, its messages, or its function's source (and
    the sources of functions in its messages), to find what it uses."""
    scripts = [prompt.script] if prompt.script else []
    scripts += [m["content"] for m in prompt.messages or [] if isinstance(m["content"], Script)]
    texts = [s.file.read_text(errors="replace") for s in scripts if s.file.is_file()]
    return "\n".join([prompt.text or json.dumps(prompt.messages or [], default=str), *texts])


def parse_prompts(ctx: LoadContext, doc: Document, raw: Any) -> list[Prompt]:
    """The ``prompts`` field: a list (or one entry, or a legacy {file: label} mapping)."""
    path: tuple[Any, ...] = ("prompts",)
    if raw is None:
        return []
    if _messages_from(raw) is not None:
        return _one_prompt(ctx, doc, path, raw, 0)
    if isinstance(raw, dict) and not ("raw" in raw or "id" in raw or "messages" in raw):
        out: list[Prompt] = []
        for i, (ref, label) in enumerate(raw.items()):
            out += _one_prompt(ctx, doc, path + (ref,), ref, i, str(label))
        return out
    items = raw if isinstance(raw, list) else [raw]
    out = []
    for i, item in enumerate(items):
        where = path + (i,) if isinstance(raw, list) else path
        out += _one_prompt(ctx, doc, where, item, i)
    labels = [p.label for p in out]
    for i, prompt in enumerate(out):  # labels name test ids: keep them unique
        if labels.count(prompt.label) > 1:
            prompt.label = f"{prompt.label}-{i + 1}"
    return out


def _content(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: Any) -> str:
    """Message content as text: AgentV's typed parts (``type: text|file``, ``value``) resolved."""
    if isinstance(raw, list):
        parts = []
        for i, part in enumerate(raw):
            if isinstance(part, dict) and part.get("type") == "file":
                files = resolve_refs(ctx, doc, path + (i, "value"), str(part.get("value", "")))
                parts += [_read(ctx, doc, path + (i,), f) for f in files]
            elif isinstance(part, dict) and part.get("type") in ("text", None):
                parts.append(str(part.get("value", part.get("text", ""))))
            elif isinstance(part, dict):
                parts.append(json.dumps(part, ensure_ascii=False, default=str))
            else:
                parts.append(str(part))
        return "\n".join(parts)
    if isinstance(raw, dict):  # structured content (AgentV): sent as its JSON text
        return json.dumps(raw, ensure_ascii=False, default=str)
    return content_text(raw)


def render_prompt(ctx: LoadContext, doc: Document, path: tuple[Any, ...], prompt: Prompt,
                  variables: dict[str, Any], prefix: str = "", suffix: str = "",
                  provider: dict[str, Any] | None = None) -> list[Message] | None:
    """The messages one prompt gives for one test's variables (errors recorded at ``path``);
    ``provider`` ({id, label}) is what a function prompt is told it runs on."""
    try:
        if prompt.messages is not None:
            out = []
            for i, m in enumerate(prompt.messages):
                content = m["content"]
                if isinstance(content, Script):
                    content = function_prompt_text(ctx, doc, path + ("messages", i, "content"), content,
                                             variables, provider)
                    if content is None:
                        return None
                if has_non_text_parts(content) and not any(isinstance(p, dict) and p.get("type") == "file"
                                                           for p in content):  # AgentV's file parts: text
                    out.append(media_message(ctx, doc, path, prompt.label, i, m["role"], content,
                                             lambda s: render(s, variables, PROMPT_ENV.get())))
                    if out[-1] is None:
                        return None
                    continue
                out.append(Message(role=m["role"], content=render(auto_wrap_raw(_content(ctx, doc, path, content)),
                                                                     variables, PROMPT_ENV.get())))
            return out
        template = prompt.text or ""
        if prompt.script is not None or prompt.command is not None:
            template = (function_prompt_text(ctx, doc, path, prompt.script, variables, provider) if prompt.script
                        else executable_prompt_text(ctx, doc, path, prompt.command, variables, provider, prompt.config))
            if template is None:
                return None
        lone = template.strip().removeprefix("{{").removesuffix("}}").strip()
        if template.strip().startswith("{{") and lone.isidentifier():
            # AgentV v5's `{{ input }}` whose variable is a message list: the conversation itself.
            messages = _messages_from(variables.get(lone))
            if messages is not None:
                return [Message(role=m["role"], content=_content(ctx, doc, path, m["content"]))
                        for m in messages]
        text = prefix + render(auto_wrap_raw(template), variables, PROMPT_ENV.get()) + suffix
    except FilterFailed:  # its one-line error is recorded
        return None
    except (jinja2.TemplateError, ValueError, TypeError) as exc:  # a filter (`load`) may fail on the data
        return render_failed(ctx, doc, path, prompt.label, exc)
    try:
        parsed = json.loads(text) if text.lstrip().startswith("[") else yaml_chat(text)
    except ValueError as exc:
        parsed = None
        if text.strip().startswith("- role:"):
            ctx.error(doc, path, f"prompt {prompt.label!r}: {exc}", "YAML chat messages (- role: ..., content: ...)")
            return None
    messages = _messages_from(parsed)
    if messages is not None:  # a chat prompt written as JSON; content parts typed (promptfoo_media)
        out = [media_message(ctx, doc, path, prompt.label, i, m["role"], m["content"])
               if has_non_text_parts(m["content"]) else Message(role=m["role"], content="\n".join(
                   str(p.get("text", p.get("value", ""))) if isinstance(p, dict) else str(p) for p in m["content"])
                   if isinstance(m["content"], list) else content_text(m["content"])) for i, m in enumerate(messages)]
        return None if any(m is None for m in out) else out
    return [Message(role="user", content=text)]

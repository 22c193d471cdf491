"""promptfoo's load-time code: function prompts, variables from scripts, generated tests.

promptfoo imports these files into its own process and calls them while it builds the
prompts (src/prompts/processors/{javascript,python}.ts, src/evaluatorHelpers.ts renderPrompt,
src/util/testCaseReader.ts). Here they never run in-process: each call runs the file in
:mod:`eval_pipelines.run.sandbox.runner` (a fresh empty directory holding only that file, an
environment without secrets, no network, memory/CPU/time limits, output capped), fed the
call's arguments as JSON on stdin; the result comes back as JSON on the last line of stdout.

* Python: ``file://x.py:fn`` calls ``fn(*args)`` (``fn`` may be ``Class.method``); a Python
  prompt without a function is promptfoo's legacy form, the script run with the context JSON
  as its first argument and its whole stdout the prompt.
* JavaScript (``.js``, ``.cjs``, ``.mjs``): the module is imported by Node and its named
  export, or its default export (``module.exports``), is called and awaited.
* TypeScript is refused (we do not transpile it).

A call that fails (refused by the sandbox, timed out, raised, printed no result, printed too
much) is a one-line load error naming the file. Results of identical calls (same file bytes,
function and arguments) are reused within a process, so a prompt function is run once per
distinct set of variables, not once per provider or per repeat.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval_pipelines.run.sandbox.script_runner import MARK, node_runner, python_runner, read_answer
from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.suite.source import Document

PYTHON_SUFFIXES = (".py",)
JS_SUFFIXES = (".js", ".cjs", ".mjs")
TS_SUFFIXES = (".ts", ".mts", ".cts")
TIMEOUT_S = 30.0
MEMORY_MB = 1024  # enough for a script that imports pandas, as promptfoo's examples do
MAX_OUTPUT_BYTES = 1_000_000
_CACHE: dict[str, tuple[bool, Any]] = {}
_CACHE_LIMIT_BYTES = 32 * 1024 * 1024  # what the reused results may hold in all (outputs are up to 1 MB each)
_cached_bytes = 0

PY_RUNNER = python_runner("""
    fn = mod
    for part in req["function"].split("."):
        fn = getattr(fn, part, None)
        if fn is None:
            sys.stderr.write("no function %r in %s" % (req["function"], req["file"]))
            sys.exit(3)
    try:
        result = fn(*req["args"])
    except Exception as exc:  # one line for the load error, not a traceback
        sys.stderr.write("%s: %s" % (type(exc).__name__, exc))
        sys.exit(1)
    answer({"result": result})
""")
JS_RUNNER = node_runner("""
    let fn = req.function ? (mod[req.function] ?? (mod.default && mod.default[req.function])) : mod.default;
    if (fn && typeof fn !== 'function' && typeof fn.default === 'function') fn = fn.default;
    let result;
    if (typeof fn === 'function') result = await fn(...req.args);
    else if (req.value_ok && fn !== undefined) result = fn;  // generated tests: an exported list
    else throw new Error(`no function ${req.function || '(default export)'} in ${req.file}`);
    answer({result: result === undefined ? null : result});
""")


@dataclass(frozen=True)
class Script:
    """A ``file://path[:function]`` reference to a script beside the config."""

    file: Path
    function: str | None
    ref: str

    @property
    def language(self) -> str:
        return "python" if self.file.suffix.lower() in PYTHON_SUFFIXES else "javascript"


def is_script_ref(ref: Any) -> bool:
    """Whether a ``file://`` value names a script (``.py``/``.js``/``.ts``..., with an optional ``:fn``)."""
    if not isinstance(ref, str) or not ref.startswith("file://"):
        return False
    named = ref.removeprefix("file://")
    named = named.split(":", 1)[0] if ":" in Path(named).name else named
    return Path(named).suffix.lower() in PYTHON_SUFFIXES + JS_SUFFIXES + TS_SUFFIXES


def split_script_ref(ctx: LoadContext, doc: Document, path: tuple[Any, ...], ref: str) -> tuple[str, str | None] | None:
    """A ``file://path[:function]`` script reference as (path, function); TypeScript and globs are
    refused (errors recorded, None). ``promptfoo_prompts.parse_script`` resolves the path."""
    named = ref.removeprefix("file://")
    function = None
    if ":" in Path(named).name:
        named, function = named.rsplit(":", 1)
    if Path(named).suffix.lower() in TS_SUFFIXES:
        ctx.error(doc, path, f"TypeScript file {Path(named).name} is not run (we do not transpile it)",
                  "a .py, .js, .cjs or .mjs file")
        return None
    if any(ch in named for ch in "*?["):
        ctx.error(doc, path, f"a glob of scripts ({ref}) is not supported", "one script file")
        return None
    return named, function or None


def call_script(ctx: LoadContext, doc: Document, path: tuple[Any, ...], script: Script, function: str | None,
                args: list[Any], legacy_argument: Any = None, value_ok: bool = False,
                source: bytes | None = None, js_runner: str | None = None) -> tuple[bool, Any]:
    """Run ``function(*args)`` of ``script`` in the sandbox: (True, its JSON result), or (False, None)
    with a one-line load error recorded. ``legacy_argument`` (Python only, no function): the script
    is run with it as JSON in ``argv[1]``; the result is its stdout. ``value_ok`` (JavaScript): an
    export that is not a function is the result itself. ``source``: the module's text, when it is
    not read from ``script.file`` (inline code wrapped as a module). ``js_runner``: another Node
    wrapper than :data:`JS_RUNNER` (its own rule for which export is called)."""
    from eval_pipelines.run.sandbox.runner import run_sandboxed

    try:
        source = script.file.read_bytes() if source is None else source
    except OSError as exc:
        ctx.error(doc, path, f"cannot read {script.file.name}: {exc.strerror or exc}")
        return False, None
    request = {"file": script.file.name, "function": function, "args": args, "mark": MARK, "value_ok": value_ok}
    key = hashlib.sha256(source + json.dumps([request, legacy_argument, js_runner], sort_keys=True, default=str)
                         .encode()).hexdigest()
    if key in _CACHE:
        ok, value = _CACHE[key]
        if not ok:
            ctx.error(doc, path, value)
        return ok, value if ok else None
    if script.language == "python" and function is None:
        argv = ["python", script.file.name, json.dumps(legacy_argument, default=str)]
    elif script.language == "python":
        argv = ["python", "-c", PY_RUNNER]
    else:
        argv = ["node", "-e", js_runner or JS_RUNNER]
    result = run_sandboxed(argv, stdin=json.dumps(request, default=str).encode(), timeout_s=TIMEOUT_S,
                           memory_mb=MEMORY_MB, files={script.file.name: source},
                           max_output_bytes=MAX_OUTPUT_BYTES)
    ok, value = _read(script, function, result)
    global _cached_bytes
    if _cached_bytes + len(result.stdout) <= _CACHE_LIMIT_BYTES:
        _cached_bytes += len(result.stdout)
        _CACHE[key] = (ok, value)
    if not ok:
        ctx.error(doc, path, value)
        return False, None
    return True, value


def _read(script: Script, function: str | None, result: Any) -> tuple[bool, Any]:
    """A sandbox result as (True, the returned value) or (False, a one-line reason)."""
    name = script.file.name + (f":{function}" if function else "")
    if result.output_truncated:
        return False, f"{name} printed more than {MAX_OUTPUT_BYTES} bytes (stopped)"
    if result.error or result.timed_out or result.returncode != 0:
        why = result.error or (f"timed out after {TIMEOUT_S:g} s" if result.timed_out
                               else f"exited with {result.returncode}")
        lines = [line.strip() for line in result.stderr_tail(2000).splitlines() if line.strip()]
        tail = lines[-1][-300:] if lines else ""  # the error's own line, not a traceback
        return False, f"{name} failed in the sandbox: {why}" + (f": {tail}" if tail else "")
    text = result.stdout_text()
    if script.language == "python" and function is None:
        return True, text
    answer = read_answer(text)
    if answer is None or "result" not in answer:
        return False, f"{name} printed no result"
    return True, answer["result"]


def resolve_script_vars(ctx: LoadContext, doc: Document, path: tuple[Any, ...], variables: dict[str, Any],
                        prompts: list[str], providers: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """promptfoo's variables from scripts (renderPrompt): in order, each ``file://x.py`` value is
    ``get_var(var_name, prompt, other_vars)``'s ``output`` (trimmed), each ``file://x.js`` value the
    default export's ``(varName, prompt, vars, provider)`` ``output``; ``{error}`` or no output is an
    error. promptfoo calls them per prompt and provider; a case (one prompt) is shared by its targets,
    so the values must agree across the providers (else a one-line error). None: an error was recorded."""
    if not any(isinstance(v, Script) for v in variables.values()):
        return variables
    results: list[dict[str, Any]] = []
    for prompt in prompts or [""]:
        for provider in providers or [None]:
            current = dict(variables)
            for name, value in variables.items():
                if not isinstance(value, Script):
                    continue
                where = path + (name,)
                if value.language == "python":
                    ok, out = call_script(ctx, doc, where, value, "get_var", [name, prompt, current])
                else:
                    ok, out = call_script(ctx, doc, where, value, None,
                                          [name, prompt, current, provider or {"id": "unknown"}])
                if not ok:
                    return None
                if isinstance(out, dict) and out.get("error"):
                    ctx.error(doc, where, f"{value.file.name} returned an error: {out['error']}")
                    return None
                output = out.get("output") if isinstance(out, dict) else None
                if not output or (value.language == "python" and not isinstance(output, str)):
                    ctx.error(doc, where, f"{value.file.name} returned no output",
                              "{output: text} (or {error: text})")
                    return None
                current[name] = output.strip() if value.language == "python" else output
            results.append(current)
    if any(r != results[0] for r in results[1:]):
        ctx.error(doc, path, "a variable from a script differs between the test's providers",
                  "`providers:` on the test to pick one, or a script that does not depend on the provider")
        return None
    return results[0]


def generated_tests(ctx: LoadContext, doc: Document, path: tuple[Any, ...], script: Script,
                    config: Any = None) -> list[Any] | None:
    """promptfoo's generated tests (src/util/testCaseReader.ts readPythonTestCases /
    readJavascriptTestCases): Python's ``fn`` (default ``generate_tests``) called with the entry's
    ``config`` when one is given, else with nothing; JavaScript's export (named or default) called
    with ``config``, or taken as it is when it is not a function. The result must be a list of tests."""
    args = [] if config is None else [config]
    function = script.function or ("generate_tests" if script.language == "python" else None)
    ok, result = call_script(ctx, doc, path, script, function, args, value_ok=True)
    if not ok:
        return None
    if not isinstance(result, list):
        ctx.error(doc, path, f"{script.ref} returned {type(result).__name__}", "a list of test cases")
        return None
    return result


def transform_vars(ctx: LoadContext, doc: Document, path: tuple[Any, ...], code: Any, script: Script | None,
                   variables: dict[str, Any]) -> dict[str, Any] | None:
    """promptfoo's ``options.transformVars`` (src/evaluator.ts, src/util/transform.ts): the test's
    variables (as written: ``file://`` values not yet read) passed with ``{prompt: {}, uuid}`` to inline
    JavaScript (one line an expression, several a function body, of ``vars`` and ``context``), to a
    ``.js`` file's export (named or default) or to a ``.py`` file's ``fn`` (default ``get_transform``);
    the object it returns is merged over the variables. The uuid is fixed per test and file, so a
    load gives the same cases each time (promptfoo draws a random one)."""
    context = {"prompt": {}, "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{doc.file}#{path}"))}
    if script is None:
        if not isinstance(code, str) or not code.strip():
            ctx.error(doc, path, "invalid transformVars", "inline JavaScript or file://x.js|x.py[:fn]")
            return None
        body = code if "\n" in code else "return " + code  # promptfoo tests the raw text (a YAML block ends in one)
        source = f"module.exports = new Function('vars', 'context', {json.dumps(body)});\n".encode()
        ok, result = call_script(ctx, doc, path, Script(Path("inline-transformVars.js"), None, "transformVars"), None,
                                 [variables, context], source=source)
    else:
        function = script.function or ("get_transform" if script.language == "python" else None)
        ok, result = call_script(ctx, doc, path, script, function, [variables, context])
    if not ok:
        return None
    if not isinstance(result, dict):
        ctx.error(doc, path, f"transformVars returned {type(result).__name__}", "an object of variables")
        return None
    return {**variables, **result}


def function_prompt_text(ctx: LoadContext, doc: Document, path: tuple[Any, ...], script: Script,
                         variables: dict[str, Any], provider: dict[str, Any] | None) -> str | None:
    """What a prompt function returns for one test, as promptfoo's renderPrompt takes it: a string
    as it is, ``{prompt, config}`` its prompt (``config`` refused), any other object as JSON."""
    context = {"vars": variables, "provider": provider or {"id": "unknown"}}
    if script.language == "javascript":
        context["config"] = {}
    if script.language == "python" and script.function is None:  # legacy: the script's stdout
        ok, result = call_script(ctx, doc, path, script, None, [], legacy_argument=context)
        return result.removesuffix("\n") if ok else None
    ok, result = call_script(ctx, doc, path, script, script.function, [context])
    if not ok:
        return None
    if isinstance(result, dict) and "prompt" in result:
        if result.get("config"):
            ctx.error(doc, path, f"{script.ref} returned a prompt `config` (per-prompt provider config), "
                      "which is not supported", "provider settings under `providers`")
            return None
        result = result["prompt"]
    if isinstance(result, str):
        return result
    if isinstance(result, (dict, list)):
        return json.dumps(result, ensure_ascii=False)
    ctx.error(doc, path, f"{script.ref} returned {type(result).__name__}", "a prompt function returning "
              "a string, chat messages or {prompt}")
    return None

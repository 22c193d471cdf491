"""Where promptfoo tests come from, before they become ``TestCase``s.

``tests`` is inline mappings, a ``file://`` reference (or a list mixing both),
globs allowed: CSV (promptfoo's columns: ``__expected``, ``__expected1..n``
holding assertion strings, ``__description``, ``__metadata:KEY`` and
``__metadata:KEY[]``, ``__threshold``, ``__metric``, ``__prefix``/``__suffix``;
every other column is a variable), JSONL, YAML and JSON. AgentV v5 also names
a folder (``tests: ./cases/``): every YAML/JSON/JSONL file in it.
``scenarios`` multiply tests by data rows, ``defaultTest`` is merged into each
test, and a variable holding a list of scalars expands into one test per value
(promptfoo's combinations; ``options.disableVarExpansion`` turns it off).

Each raw test comes back as a ``RawTest``: the mapping plus the Document and
path it was read at, so errors point at the right file and line.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.formats.promptfoo.prompts.templates import read_structured, resolve_refs
from eval_pipelines.formats.promptfoo.prompts.media import BINARY_SUFFIXES, binary_var
from eval_pipelines.formats.promptfoo.prompts.pdf import pdf_text
from eval_pipelines.formats.promptfoo.scripts import Script, generated_tests, is_script_ref, split_script_ref
from eval_pipelines.suite.source import Document, read_text
from eval_pipelines.formats import compat

SCENARIO_KEYS = {"description", "config", "tests"}
TEST_FILE_ENTRY_KEYS = {"path", "config"}  # a `tests` entry {path, config}: a test file, `config` for a generator
# promptfoo's special CSV columns (src/csv.ts); `*` stands for a name or a number after the prefix.
CSV_COLUMNS = ("__expected", "__expected*", "__config:*", "__description", "__metadata:*", "__metadata:*[]",
               "__threshold", "__metric", "__prefix", "__suffix")
TEST_FILE_SUFFIXES = (".csv", ".jsonl", ".yaml", ".yml", ".json")
# promptfoo's base assertion types, for reading assertion strings in CSV cells.
ASSERTION_TYPES = sorted("""
answer-relevance bleu classifier contains contains-all contains-any contains-html contains-json contains-sql
contains-xml context-faithfulness context-recall context-relevance conversation-relevance cost equals
factuality finish-reason g-eval gleu guardrails icontains icontains-all icontains-any is-html is-json
is-refusal is-sql is-valid-function-call is-valid-openai-function-call is-valid-openai-tools-call is-xml
javascript latency levenshtein llm-rubric meteor model-graded-closedqa model-graded-factuality moderation
perplexity perplexity-score pi python regex rouge-n ruby select-best similar starts-with webhook word-count
""".split(), key=len, reverse=True)
_ASSERTION = re.compile(r"^(not-)?(" + "|".join(map(re.escape, ASSERTION_TYPES)) +
                        r")(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$")
_THRESHOLD_TYPES = {"answer-relevance", "classifier", "context-faithfulness", "context-recall",
                    "context-relevance", "cost", "latency", "levenshtein", "perplexity-score", "perplexity",
                    "rouge-n", "similar", "starts-with"}


@dataclass
class RawTest:
    data: dict[str, Any]
    doc: Document
    path: tuple[Any, ...]
    extra: dict[str, Any] = field(default_factory=dict)


def assertion_from_string(expected: str) -> dict[str, Any]:
    """promptfoo's ``assertionFromString`` (src/csv.ts): a CSV ``__expected`` cell as an assertion."""
    for prefix in ("javascript:", "fn:", "eval:"):
        if expected.startswith(prefix):
            return {"type": "javascript", "value": expected[len(prefix):].strip()}
    if expected.startswith(("grade:", "llm-rubric:")):
        return {"type": "llm-rubric", "value": expected[6 if expected.startswith("grade:") else 11:]}
    if expected.startswith("python:") or (expected.startswith("file://") and
                                          (expected.endswith(".py") or ".py:" in expected)):
        return {"type": "python", "value": expected.removeprefix("python:").strip()
                if expected.startswith("python:") else expected}
    if expected.startswith("file://") and re.search(r"\.(js|ts)(:|$)", expected):
        return {"type": "javascript", "value": expected}
    match = _ASSERTION.match(expected)
    if not match:
        return {"type": "equals", "value": expected}
    negate, kind, threshold, value = match.groups()
    full = f"not-{kind}" if negate else kind
    if kind in ("contains-all", "contains-any", "icontains-all", "icontains-any"):
        return {"type": full, "value": [v.strip() for v in (value or "").split(",")]}
    if kind in _THRESHOLD_TYPES:
        default = 0.8 if kind == "similar" else 0.75
        return {"type": full, "value": value, "threshold": float(threshold) if threshold else default}
    out: dict[str, Any] = {"type": full}
    if value is not None:
        out["value"] = value
    return out


def _csv_tests(ctx: LoadContext, file: Path) -> list[RawTest]:
    try:
        text = read_text(file)
    except SpecErrors as exc:
        ctx.errors.extend(exc.errors)
        return []
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    doc = Document(file, None, {})
    out = []
    for row in reader:
        line = reader.line_num
        doc.lines[(len(out),)] = line
        test: dict[str, Any] = {"vars": {}, "assert": [], "options": {}}
        metric = None
        by_column: dict[str, dict[str, Any]] = {}
        configs: list[tuple[str, str, str]] = []
        for key, value in row.items():
            value = value or ""
            if key is None:
                ctx.error(doc, (len(out),), "row has more cells than the header", "one cell per column")
                continue
            if key.startswith("__expected"):
                if value.strip():
                    test["assert"].append(assertion_from_string(value))
                    by_column[key] = test["assert"][-1]
            elif key.startswith("__config:"):
                column, _, name = key.removeprefix("__config:").rpartition(":")
                configs.append((column, name, value))
            elif key in ("__prefix", "__suffix"):
                test["options"][key[2:]] = value
            elif key == "__description":
                test["description"] = value
            elif key == "__metric":
                metric = value
            elif key == "__threshold":
                if not value.strip():  # promptfoo: an empty cell sets no threshold
                    continue
                try:
                    test["threshold"] = float(value)
                except ValueError:
                    ctx.error(doc, (len(out), key), f"invalid threshold {value!r}", "a number")
            elif key.startswith("__metadata:"):
                name = key.removeprefix("__metadata:")
                if name.endswith("[]"):
                    test.setdefault("metadata", {})[name[:-2]] = [v.strip() for v in value.split(",") if v.strip()]
                elif value:
                    test.setdefault("metadata", {})[name] = value
            elif key.startswith("__"):
                ctx.error(doc, (len(out), key), f"CSV column {key!r} is not supported",
                          ", ".join(c for c in CSV_COLUMNS if c not in ("__expected", "__metadata:*[]")))
            else:
                test["vars"][key] = value
        for column, name, value in configs:  # `__config:__expected2:threshold` configures that column's assertion
            if not value.strip():
                continue
            if column not in by_column and column.rstrip("0123456789") == "__expected":
                column = column if column in by_column else "__expected1" if column == "__expected" else column
            target = by_column.get(column) or by_column.get(column + "1")
            if target is None or name != "threshold":
                ctx.error(doc, (len(out), f"__config:{column}:{name}"),
                          f"cannot configure {name!r} of column {column!r}", "`__config:__expectedN:threshold`")
                continue
            try:
                target["threshold"] = float(value)
            except ValueError:
                ctx.error(doc, (len(out), f"__config:{column}:{name}"), f"invalid threshold {value!r}", "a number")
        if metric:
            for item in test["assert"]:
                item["metric"] = metric
        out.append(RawTest(test, doc, (len(out),)))
    return out


def _jsonl_tests(ctx: LoadContext, file: Path) -> list[RawTest]:
    try:
        text = read_text(file)
    except SpecErrors as exc:
        ctx.errors.extend(exc.errors)
        return []
    doc = Document(file, None, {})
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        doc.lines[(len(out),)] = number
        try:
            out.append(RawTest(json.loads(line), doc, (len(out),)))
        except ValueError as exc:
            ctx.error(doc, (len(out),), f"invalid JSON: {exc}", "one JSON test object per line")
    return out


def tests_from_file(ctx: LoadContext, file: Path, dialect: str) -> list[RawTest]:
    suffix = file.suffix.lower()
    if suffix == ".csv":
        return _csv_tests(ctx, file)
    if suffix == ".jsonl":
        return _jsonl_tests(ctx, file)
    if suffix in (".yaml", ".yml", ".json"):
        loaded = read_structured(ctx, Document(file, None, {}), (), file)
        if loaded is None:
            return []
        items = loaded.data if isinstance(loaded.data, list) else [loaded.data]
        if dialect == "agentv" and isinstance(loaded.data, dict) and isinstance(loaded.data.get("tests"), list):
            items = loaded.data["tests"]  # a case file holding `tests:`
            return [RawTest(t, loaded, ("tests", i)) for i, t in enumerate(items)]
        return [RawTest(t, loaded, (i,) if isinstance(loaded.data, list) else ()) for i, t in enumerate(items)]
    ctx.error(Document(file, None, {}), (), f"test file type {suffix!r} is not supported",
              "a .csv, .jsonl, .yaml or .json file (a test-generating script is named on its own: file://x.py:fn)")
    return []


def _generated(ctx: LoadContext, doc: Document, path: tuple[Any, ...], ref: str, config: Any) -> list[RawTest]:
    """Tests a ``file://x.py[:fn]`` / ``x.js[:fn]`` script generates, run in the sandbox (promptfoo_scripts)."""
    split = split_script_ref(ctx, doc, path, ref if ref.startswith("file://") else "file://" + ref)
    if split is None:
        return []
    files = resolve_refs(ctx, doc, path, "file://" + split[0])
    tests = generated_tests(ctx, doc, path, Script(files[0], split[1], ref), config) if files else None
    if tests is None:
        return []
    generated = Document(files[0], tests, {})  # its tests' errors name the script and the index
    return [RawTest(t, generated, (i,)) for i, t in enumerate(tests)]


def _reference(ctx: LoadContext, doc: Document, path: tuple[Any, ...], ref: str, dialect: str,
               config: Any = None) -> list[RawTest]:
    if ref.startswith(("http://", "https://")):
        ctx.error(doc, path, "remote test files (URLs, Google Sheets) are not supported", "a local file")
        return []
    if ref.startswith("huggingface://"):  # promptfoo downloads the dataset; we read local files only
        ctx.error(doc, path, f"Hugging Face datasets ({ref.split('?', 1)[0]}) are not supported",
                  "a local .csv, .jsonl, .yaml or .json file")
        return []
    if re.search(r"\.(py|js|ts|mjs|cjs)(:|$)", ref):
        if dialect != "promptfoo":
            ctx.error(doc, path, f"generated tests ({ref}) are not supported", "a .csv, .jsonl, .yaml or .json file")
            return []
        return _generated(ctx, doc, path, ref, config)
    if config is not None:
        ctx.error(doc, path + ("config",), "`config` is read only for generated tests (a .py or .js file)",
                  "{path: file://tests.py:fn, config: {...}}")
        return []
    local = ref.removeprefix("file://")
    folder = doc.file.parent / local
    if not any(ch in local for ch in "*?[") and folder.is_dir():
        if not ctx.policy.check(folder, doc, path, ctx.errors):
            return []
        files = sorted(f for f in folder.rglob("*") if f.is_file() and f.suffix.lower() in TEST_FILE_SUFFIXES)
        if not files:
            ctx.error(doc, path, f"folder {local!r} holds no test files", "YAML, JSON, JSONL or CSV test files")
    else:
        files = resolve_refs(ctx, doc, path, "file://" + local)
    out: list[RawTest] = []
    for file in files:
        out += tests_from_file(ctx, file, dialect)
    return out


def collect_raw_tests(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: Any,
                      dialect: str) -> list[RawTest]:
    """The raw test mappings a ``tests`` value names (inline, files, globs, folders)."""
    if raw is None:
        return []
    if isinstance(raw, str):
        return _reference(ctx, doc, path, raw, dialect)
    if isinstance(raw, dict):
        return [RawTest(raw, doc, path)]
    if not isinstance(raw, list):
        ctx.error(doc, path, f"got {type(raw).__name__}", "a list of tests or a file:// reference")
        return []
    out: list[RawTest] = []
    for i, item in enumerate(raw):
        if isinstance(item, str):
            out += _reference(ctx, doc, path + (i,), item, dialect)
        elif isinstance(item, dict) and isinstance(item.get("path"), str) and dialect == "promptfoo":
            # promptfoo's {path, config} entry: a test file, `config` handed to a generator script
            compat.unknown_fields(ctx, doc, path + (i,), item, TEST_FILE_ENTRY_KEYS)
            out += _reference(ctx, doc, path + (i,), item["path"], dialect, item.get("config"))
        elif isinstance(item, dict):
            out.append(RawTest(item, doc, path + (i,)))
        else:
            ctx.error(doc, path + (i,), f"got {type(item).__name__}", "a test mapping or a file:// reference")
    return out


def merge_default(default: dict[str, Any], test: dict[str, Any]) -> dict[str, Any]:
    """promptfoo's merge of ``defaultTest`` (or a scenario's data row) under a test."""
    merged = {**{k: v for k, v in default.items() if k not in ("vars", "assert", "options", "metadata")}, **test}
    for key in ("vars", "options", "metadata"):
        if key in default or key in test:
            merged[key] = {**(default.get(key) or {}), **(test.get(key) or {})}
    if default.get("assert") or test.get("assert"):
        merged["assert"] = list(default.get("assert") or []) + list(test.get("assert") or [])
    return merged


def expand_scenarios(ctx: LoadContext, doc: Document, raw: Any, dialect: str) -> list[RawTest]:
    """Each scenario's tests, once per row of its ``config`` (vars and asserts merged)."""
    if raw is None:
        return []
    if isinstance(raw, str) or not isinstance(raw, list):
        ctx.error(doc, ("scenarios",), f"got {type(raw).__name__}", "a list of scenarios")
        return []
    out: list[RawTest] = []
    for i, scenario in enumerate(raw):
        path = ("scenarios", i)
        if not isinstance(scenario, dict):
            ctx.error(doc, path, "invalid scenario", "a mapping with `config` and `tests`")
            continue
        compat.unknown_fields(ctx, doc, path, scenario, SCENARIO_KEYS)
        rows = scenario.get("config") or [{}]
        tests = collect_raw_tests(ctx, doc, path + ("tests",), scenario.get("tests"), dialect)
        if not isinstance(rows, list):
            ctx.error(doc, path + ("config",), "invalid config", "a list of {vars, assert, ...} rows")
            continue
        for j, row in enumerate(rows):
            for test in tests:
                merged = merge_default(row if isinstance(row, dict) else {}, test.data)
                label = " / ".join(str(x) for x in (scenario.get("description"), row.get("description")
                                                    if isinstance(row, dict) else None,
                                                    test.data.get("description")) if x)
                if label:
                    merged["description"] = label
                out.append(RawTest(merged, test.doc, test.path, {"scenario": i, "scenario_row": j}))
    return out


def load_vars(ctx: LoadContext, doc: Document, path: tuple[Any, ...], variables: Any,
              base: Path | None = None, trim_text: bool = False, scripts: bool = False) -> dict[str, Any] | None:
    """Variables with ``file://`` values read (text, or JSON/YAML as data). A value's path is
    relative to ``base`` (the config's folder: promptfoo's renderPrompt resolves it against
    cliState.basePath, wherever the test was written); ``vars: file://...`` itself is relative
    to the file that holds the test. With ``scripts`` (promptfoo), a ``file://x.py``/``.js`` value is
    a :class:`Script`, called per case by ``promptfoo_scripts.resolve_script_vars``."""
    if variables is None:
        return {}
    if isinstance(variables, str) and variables.startswith("file://"):  # all variables from a YAML/JSON file
        files = resolve_refs(ctx, doc, path, variables)
        loaded = read_structured(ctx, doc, path, files[0]) if files else None
        if loaded is None:
            return None
        doc, variables = loaded, loaded.data
        path = ()
    if not isinstance(variables, dict):
        ctx.error(doc, path, f"got {type(variables).__name__}", "a mapping of variable names to values")
        return None
    out: dict[str, Any] = {}
    for key, value in variables.items():
        if isinstance(value, str) and value.startswith("file://"):
            if scripts and is_script_ref(value):
                split = split_script_ref(ctx, doc, path + (key,), value)
                if split is None:
                    return None
                if split[1] is not None:  # promptfoo resolves the whole value as a path: no `:function`
                    ctx.error(doc, path + (key,), f"a function name in a variable script ({value})",
                              "file://x.py (promptfoo calls get_var) or file://x.js (its default export)")
                    return None
                files = resolve_refs(ctx, doc, path + (key,), "file://" + split[0], base)
                if not files:
                    return None
                out[key] = Script(files[0], None, value)
                continue
            if re.search(r"\.(py|js|ts|mjs|cjs)(:|$)", value):
                ctx.error(doc, path + (key,), f"variable from {value} is not supported",
                          "a text, JSON, YAML, PDF, image, video or audio file")
                return None
            files = resolve_refs(ctx, doc, path + (key,), value, base)
            if not files:  # reported; rendering the prompt without it would only add a second error
                return None
            values = []
            for file in files:
                if file.suffix.lower() in BINARY_SUFFIXES:  # base64 text, as promptfoo's renderPrompt
                    values.append(binary_var(ctx, doc, path + (key,), file))
                elif file.suffix.lower() == ".pdf":  # its text, as promptfoo's renderPrompt
                    values.append(pdf_text(ctx, doc, path + (key,), file))
                elif file.suffix.lower() in (".json", ".yaml", ".yml"):
                    loaded = read_structured(ctx, doc, path + (key,), file)
                    values.append(loaded.data if loaded else None)
                else:
                    try:
                        text = read_text(file)  # promptfoo trims a text file read as a variable
                        values.append(text.strip() if trim_text else text)
                    except SpecErrors as exc:
                        ctx.errors.extend(exc.errors)
            out[key] = values[0] if len(values) == 1 else values
        else:
            out[key] = value
    return out


_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def resolve_variables(variables: dict[str, Any]) -> dict[str, Any]:
    """promptfoo's renderPrompt (src/evaluatorHelpers.ts) before it renders a prompt: one trailing
    newline is cut from every text variable, then ``resolveVariables`` replaces a text variable's
    first ``{{ name }}`` with the variable ``name`` (up to five passes), so vars can reference vars."""
    out = {k: v[:-1] if isinstance(v, str) and v.endswith("\n") else v for k, v in variables.items()}
    for _ in range(5):
        changed = False
        for key, value in out.items():
            match = _PLACEHOLDER.search(value) if isinstance(value, str) else None
            if match and isinstance(out.get(match.group(1)), (str, int, float)):
                other = out[match.group(1)]
                text = ("true" if other else "false") if isinstance(other, bool) else str(other)
                out[key] = value.replace(match.group(0), text, 1)
                changed = True
        if not changed:
            break
    return out


def var_combinations(variables: dict[str, Any]) -> list[dict[str, Any]]:
    """One mapping per combination of the values of list-of-scalar variables."""
    keys = [k for k, v in variables.items()
            if isinstance(v, list) and v and all(isinstance(x, (str, int, float, bool)) for x in v)]
    if not keys:
        return [variables]
    return [{**variables, **dict(zip(keys, combo))} for combo in itertools.product(*(variables[k] for k in keys))]


def shapes_ok(ctx: LoadContext, doc: Document, path: tuple[Any, ...], data: dict[str, Any]) -> bool:
    """The fields merged with defaultTest have mergeable shapes (else one error each)."""
    ok = True
    for key, kind, expected in (("vars", (dict, str), "a mapping (or a file:// reference)"),
                                ("options", dict, "a mapping"), ("metadata", dict, "a mapping"),
                                ("assert", list, "a list of assertions")):
        value = data.get(key)
        if value is not None and not isinstance(value, kind):
            ctx.error(doc, path + (key,), f"got {type(value).__name__}", expected)
            ok = False
    return ok


def read_default_test(ctx: LoadContext, doc: Document, key: str, dialect: str) -> dict[str, Any]:
    """``defaultTest`` (AgentV: ``default_test``): a test mapping, or a ``file://`` holding one;
    AgentV v5's suite-level ``assert`` joins its assertions (they apply to every test)."""
    raw = doc.data
    default = raw.get(key) or {}
    if isinstance(default, str):
        found = collect_raw_tests(ctx, doc, (key,), default, dialect)
        default = found[0].data if found else {}
    if not isinstance(default, dict):
        ctx.error(doc, (key,), "invalid defaultTest", "a test mapping")
        default = {}
    elif not shapes_ok(ctx, doc, (key,), default):
        default = {}
    if "assert" in raw:
        default = {**default, "assert": list(raw.get("assert") or []) + list(default.get("assert") or [])}
    return default

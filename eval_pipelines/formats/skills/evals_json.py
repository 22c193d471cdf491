"""Agent Skills' ``evals/evals.json`` (skill-creator), read as a suite.

The format (anthropics/skills ``skill-creator/references/schemas.md``; AgentV
reads it in ``loaders/agent-skills-parser.ts``)::

    {"skill_name": "pdf",
     "evals": [{"id": 1, "prompt": "...", "expected_output": "...",
                "files": ["evals/files/sample.txt"], "expectations": ["The output ...", ...]}]}

Each eval becomes one test:

- ``id`` (an integer, or a string) is the test id; ids must be unique.
- ``prompt`` is the user message. ``files`` (paths, or ``{path, ...}`` objects) are the case's
  input files (``TestCase.input_files``): an agent target (``type: agent``) finds every one in its
  workspace at the path written; a directory gives every file under it; binary files are allowed.
  Paths are relative to the skill root, as skill-creator documents (``evals/files/x``); a path not
  found there is looked up next to ``evals.json`` (AgentV's rule); files must be inside the package.
  For chat targets a UTF-8 text file named on its own is also appended to the prompt as AgentV
  sends a file part (``<file path="...">`` text ``</file>``); a binary file, a directory's file or
  a text file too large for a prompt cannot be, and such a case on a chat target is an error row
  naming the target and its type.
- ``expected_output`` (skill-creator: "a human-readable description of
  success") is the test's ``criteria`` and its reference ``expected_output``.
- ``expectations`` (AgentV also writes ``assertions``), natural-language
  statements a grader checks, become one ``expectations`` assertion
  (grading/graders/expectations.py): the judge gives each statement passed and evidence in one
  call, as skill-creator's grading.json; the score is the share met (skill-creator's
  ``pass_rate``) and the case passes when every expectation is met (the suite's scoring is
  ``all_pass``). An eval with no expectations is judged on ``expected_output`` by ``llm_judge``.
- ``skill_name`` names the suite (the skill package's own name still wins).
- ``name`` (or ``eval_name``, as skill-creator's ``eval_metadata.json`` writes it) is the test's
  display name. Expectations are strings or objects: their ``text``, else ``description``, else
  ``name`` (``{id, text}``, ``{name, description}``, ``{name, check}``). The list of evals may also
  be the whole file, or under ``cases`` or ``test_cases``.
- An eval with neither expectations nor ``expected_output`` is run (skill-creator's tools run it
  too) and stored as not evaluated, with a warning naming it.
- An input file the package does not hold is refused in one line naming the eval and the path; an
  absolute path (``/tmp/...``) as a path outside the package.
- The plugin layout: a repository with ``evals/evals.json`` at its root and the skill at
  ``skills/<name>/`` (suite/package.py ``plugin_evals``); file paths are relative to that root.

Runs per eval: skill-creator runs each eval several times per configuration (``runs_per_configuration``)
but evals.json has no key for it, so the count comes from ``eval-pipelines.yaml`` beside ``SKILL.md``
(``trials: 3``; this file is ours, not skill-creator's) or from ``eval-pipelines run --trials N``,
which wins. Each trial is its own cache entry (run/cache.py keys on the trial number).

Configurations: every eval runs ``with_skill`` and ``without_skill`` (skill-creator's baseline: the
same target, prompts and files, the skill not installed), the uplift is with minus without
(analysis/uplift.py). ``configurations: [with_skill]`` in ``eval-pipelines.yaml`` turns the baseline
off; ``eval-pipelines run --configurations`` wins.

Keys skill-creator's own tools ignore (``weight``, ``notes``, ``files[].purpose``, ...) are kept in
the case's metadata with a stored "accepted, not used" warning; a likely misspelling of a known key
is refused with its "did you mean". Keys an agent following skill-creator would read as its own
(``input`` for the task, ``checks``/``expect``/``expected_behavior``/``evaluation_criteria`` for the
expectations, an ``expected_output`` object) are read as them, with a warning (read_as.py). An input
path written from the repository root (``skill/evals/x`` for the skill at ``skill/``) names the
package's file, with a warning.

"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from eval_pipelines.suite.assertions import parse_assertion
from eval_pipelines.suite.errors import SpecError, SpecErrors, format_path, pydantic_errors
from eval_pipelines.formats.agentv.parts import MAX_FILE_PART_BYTES
from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.suite.models import (WITH_SKILL, WITHOUT_SKILL, Assertion, Execution, InputFile, Message, Suite,
                                         TestCase, Trials)
from eval_pipelines.suite.package import IGNORED_PARTS
from eval_pipelines.suite.paths import PathPolicy
from eval_pipelines.suite.source import Document, load_document
from eval_pipelines.formats import compat
from eval_pipelines.run.targets.config import AGENT_TARGET_TYPES
from eval_pipelines.formats.skills import read_as

TOP_KEYS = {"skill_name", "evals"}
EVAL_KEYS = {"id", "name", "eval_name", "prompt", "expected_output", "files", "expectations", "assertions"}
# The package's own settings for us, beside SKILL.md (evals.json has no place for them).
SETTINGS_FILE = "eval-pipelines.yaml"
# pipeline/triggers.py, pipeline/blind.py, suite/configurations.py
SETTINGS_KEYS = {"trials", "triggers", "compare_blind", "configurations"}
# Wrappers real packages write around the list of evals (a bare top-level list is read too).
EVALS_KEYS = ("evals", "cases", "test_cases")
# What an expectation object's statement is, in the order looked for ({text}, {name, description}, {name, check}).
STATEMENT_KEYS = ("text", "description", "name")


def is_skill_evals(doc: Document) -> bool:
    data = doc.data
    if doc.file.suffix.lower() != ".json":
        return False
    if isinstance(data, dict):
        wrapped = "evals" not in data and isinstance(data.get("cases"), list) and (
            "skill_name" in data or doc.file.name == "evals.json")
        cases = data.get("test_cases")
        # `test_cases` is also the harness's key: skill-creator evals there each have a `prompt`.
        wrapped = wrapped or ("evals" not in data and isinstance(cases, list) and bool(cases) and all(
            isinstance(c, dict) and "prompt" in c for c in cases) and (
            "skill_name" in data or doc.file.name == "evals.json"))
        return (isinstance(data.get("evals"), list) or wrapped) and "testCases" not in data
    # A bare list of evals, in a file named evals.json (a skill-tests v1 list has `input`, not `prompt`).
    return (doc.file.name == "evals.json" and isinstance(data, list) and bool(data)
            and all(isinstance(e, dict) and "prompt" in e for e in data))


def _skill_root(file: Path) -> Path:
    return file.parent.parent if file.parent.name == "evals" else file.parent


def _input_files(ctx: LoadContext, doc: Document, path: tuple[Any, ...], written: Any) -> list[InputFile]:
    """The files one ``files`` entry names: a file, or every file under a directory (sorted)."""
    if isinstance(written, dict) and "path" in written:
        # {path, purpose, ...}: the other keys describe the file; kept in the case's metadata (`files`).
        for key in written.keys() - {"path"}:
            compat.ignored_field(ctx, doc, path + (key,), "skill-creator", "the case's metadata (files)")
        written = written["path"]
        path = path + ("path",)
    if not isinstance(written, str) or not written.strip():
        ctx.error(doc, path, f"got {written!r}", "a file path relative to the skill root")
        return []
    candidates = [_skill_root(doc.file) / written, doc.file.parent / written]
    if Path(written).is_absolute():
        ctx.error(doc, path, f"{written} is an absolute path outside the package",
                  "a file of the package, relative to the skill root (e.g. evals/files/x)")
        return []
    found = next((c.resolve() for c in candidates if c.is_file() or c.is_dir()), None)
    if found is None and (found := _from_repository_root(_skill_root(doc.file), written)) is not None:
        ctx.warnings.append(f"{doc.file}:{doc.line_of(path)}: {format_path(path)}: {written} is written "
                            f"from the repository root; read as {found.relative_to(_skill_root(doc.file).resolve())}")
    if found is None:
        root = _skill_root(doc.file)
        # A file of that name elsewhere in the package: the path is wrong, not the file missing.
        elsewhere = next((p.relative_to(root).as_posix() for p in sorted(root.rglob(Path(written).name))
                          if p.is_file() and not IGNORED_PARTS & set(p.parts)), None) if Path(written).name else None
        hint = f" (a file of that name is at {elsewhere})" if elsewhere else ""
        ctx.error(doc, path, f"eval {_eval_id(doc, path)}: input file {written}: the package does not hold it{hint}",
                  "a file of the package, relative to the skill root (e.g. evals/files/x)")
        return []
    if not ctx.policy.check(found, doc, path, ctx.errors):
        return []
    if found.is_file():
        return [_input_file(written, found, None)]
    files = []
    for file in sorted(f for f in found.rglob("*") if f.is_file() and not IGNORED_PARTS & set(f.parts)):
        if not ctx.policy.check(file.resolve(), doc, path, ctx.errors):
            return []
        relative = f"{written.rstrip('/')}/{file.relative_to(found).as_posix()}"
        files.append(_input_file(relative, file.resolve(), f"a file of the directory {written}"))
    if not files:
        ctx.error(doc, path, f"{written} is an empty directory", "a file, or a directory holding files")
    return files


def _from_repository_root(root: Path, written: str) -> Path | None:
    """A path written from a folder above the skill root (``skill/evals/x.pdf`` for the skill at
    ``skill/``: the repository root, where skill-creator's agent usually works), when it names a
    file of the package; a path leaving the package is not looked for."""
    root = root.resolve()
    depth = len(Path(written).parts) - 1
    for ancestor in list(root.parents)[:depth]:
        candidate = (ancestor / written).resolve()
        if candidate.is_relative_to(root) and (candidate.is_file() or candidate.is_dir()):
            return candidate
    return None


def _eval_id(doc: Document, path: tuple[Any, ...]) -> str:
    raw = doc.data[path[0]][path[1]] if isinstance(doc.data, dict) else None
    return repr(raw.get("id")) if isinstance(raw, dict) and raw.get("id") is not None else f"#{path[1]}"


def _input_file(written: str, found: Path, directory: str | None) -> InputFile:
    """A file for the workspace; a text file named on its own is also inlined for chat targets."""
    reason = directory
    if reason is None and found.stat().st_size > MAX_FILE_PART_BYTES:
        reason = f"{found.stat().st_size} bytes, over the {MAX_FILE_PART_BYTES} a prompt takes"
    if reason is None:
        try:
            found.read_bytes().decode("utf-8-sig")
        except UnicodeDecodeError:
            reason = "a binary file"
    return InputFile(path=written, source=str(found), inlined=reason is None, reason=reason)


def _inlined(item: InputFile) -> str:
    text = Path(item.source).read_bytes().decode("utf-8-sig")
    return f'<file path="{item.path}">\n{text.replace(chr(13) + chr(10), chr(10)).strip()}\n</file>'


def _statements(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: Any) -> list[str]:
    """Statements as strings, or objects: their `text`, else `description`, else `name` (the other keys
    describe it and stay in the case's metadata)."""
    texts = [_statement(item) for item in raw] if isinstance(raw, list) else None
    if not texts or not all(isinstance(t, str) and t.strip() for t in texts):
        ctx.error(doc, path, "invalid expectations",
                  "a list of non-empty statements (strings, or objects with text, description or name)")
        return []
    return texts


def _statement(item: Any) -> Any:
    if not isinstance(item, dict):
        return item
    return next((item[k] for k in STATEMENT_KEYS if isinstance(item.get(k), str) and item[k].strip()), None)


def _test(ctx: LoadContext, doc: Document, index: int, raw: Any,
          broken: list[SpecError]) -> TestCase | None:
    path: tuple[Any, ...] = ("evals", index)
    if not isinstance(raw, dict):
        ctx.error(doc, path, f"got {type(raw).__name__}", "an eval mapping with `id` and `prompt`")
        return None
    extra = compat.ignored_fields(ctx, doc, path, raw, EVAL_KEYS | read_as.used_keys(raw), "skill-creator",
                                  "the case's metadata")
    test_id = raw.get("id")
    if isinstance(test_id, bool) or not isinstance(test_id, (int, str)) or str(test_id).strip() == "":
        ctx.error(doc, path + ("id",), f"invalid id {test_id!r}", "an integer (or a non-empty string)")
        return None
    # A missing task or input file breaks this eval only: the errors become its fails_with (an
    # error row at run time) and the package's other evals still run (see docs/skill-creator.md).
    soft_from = len(ctx.errors)
    prompt = read_as.task(ctx, doc, path, raw)
    if not isinstance(prompt, str) or not prompt.strip():
        given = ", ".join(sorted(map(str, raw)))  # the task is often there under another key (`input`)
        ctx.error(doc, path + ("prompt",), f"required field is missing (the eval has {given})"
                  if prompt is None else "invalid prompt", "the task, a non-empty string")
        prompt = "(no task)"
    files = raw.get("files") or []
    if not isinstance(files, list):
        ctx.error(doc, path + ("files",), f"got {type(files).__name__}", "a list of file paths")
        files = []
    inputs = [item for i, f in enumerate(files) for item in _input_files(ctx, doc, path + ("files", i), f)]
    broken.extend(ctx.errors[soft_from:])
    load_error = "; ".join(str(e) for e in ctx.errors[soft_from:]) or None
    del ctx.errors[soft_from:]
    if load_error:
        inputs = [item for item in inputs if Path(item.source).is_file()]
    parts = [prompt] + [_inlined(item) for item in inputs if item.inlined]
    expected = read_as.expected_output(ctx, doc, path + ("expected_output",), raw.get("expected_output"))
    if expected is not None and not isinstance(expected, str):
        ctx.error(doc, path + ("expected_output",), f"got {type(expected).__name__}", "a description of success")
        expected = None
    if "expectations" in raw and "assertions" in raw:
        ctx.error(doc, path + ("assertions",), "both `expectations` and `assertions` given", "one of them")
    key = "assertions" if "assertions" in raw and "expectations" not in raw else "expectations"
    # An empty list is no expectations (skill-creator then has only expected_output to go by).
    statements = _statements(ctx, doc, path + (key,), raw[key]) if raw.get(key) != [] and key in raw else []
    if key not in raw and (criteria := read_as.criteria(ctx, doc, path, raw)) is not None:
        statements = _statements(ctx, doc, path + (criteria[0],), criteria[1])
    if statements:
        graded = {"type": "expectations", "name": "expectations", "items": statements}
        parsed = parse_assertion(graded, doc, path + (key,), ctx.errors)
        assertions = [parsed] if parsed else []
    elif expected:
        assertions = [Assertion(type="llm_judge", name="expected_output")]
    else:
        # skill-creator's tools run such an eval all the same (its outputs are for a human to read):
        # a case with no assertion, stored as not evaluated, with a warning naming it.
        assertions = []
        ctx.warnings.append(f"{doc.file}:{doc.line_of(path)}: {compat.field_name(path)}: eval {test_id!r} has "
                            "neither expectations nor expected_output: run, not graded (not_evaluated)")
    name_key = "name" if "name" in raw or "eval_name" not in raw else "eval_name"  # eval_name: eval_metadata.json's
    display = raw.get(name_key)
    if display is not None and not isinstance(display, str):
        ctx.error(doc, path + (name_key,), f"got {type(display).__name__}", "the eval's display name")
        display = None
    metadata = {**extra, **({"files": files} if files else {})}
    try:
        return TestCase(id=str(test_id), name=display, input=[Message(role="user", content="\n".join(parts))],
                        expected_output=expected, criteria=expected, assertions=assertions,
                        metadata=metadata, input_files=inputs, source_file=str(doc.file),
                        source_line=doc.line_of(path), fails_with=load_error)
    except ValidationError as exc:
        ctx.errors.extend(pydantic_errors(doc, path, exc))
        return None


def load_skill_evals(doc: Document, policy: PathPolicy) -> tuple[Suite, list[str]]:
    ctx = LoadContext(policy, tool="skill-creator")
    raw = doc.data
    if isinstance(raw, list):  # a bare list of evals
        raw = {"evals": raw}
        doc = Document(doc.file, raw, {(("evals",) + k): v for k, v in doc.lines.items()})
    elif "evals" not in raw and (wrapper := next((k for k in EVALS_KEYS[1:] if isinstance(raw.get(k), list)), None)):
        raw = {**{k: v for k, v in raw.items() if k != wrapper}, "evals": raw[wrapper]}
        doc = Document(doc.file, raw, {(("evals",) + k[1:] if k[:1] == (wrapper,) else k): v
                                       for k, v in doc.lines.items()})
    compat.ignored_fields(ctx, doc, (), raw, TOP_KEYS, "skill-creator", None)
    name = raw.get("skill_name")
    if name is not None and not isinstance(name, str):
        ctx.error(doc, ("skill_name",), f"got {type(name).__name__}", "the skill's name")
        name = None
    if not raw["evals"]:
        ctx.error(doc, ("evals",), "no evals", "at least one eval")
    broken: list[SpecError] = []
    tests = [t for i, item in enumerate(raw["evals"]) if (t := _test(ctx, doc, i, item, broken)) is not None]
    if tests and all(t.fails_with for t in tests):  # no eval could run: the package is refused
        ctx.errors.extend(broken)
    else:
        ctx.warnings.extend(f"{e} (this eval is stored as an error row, not run)" for e in broken)
    seen: set[str] = set()
    for i, test in enumerate(tests):
        if test.id in seen:
            ctx.error(doc, ("evals", i, "id"), f"duplicate eval id {test.id!r}", "unique ids")
        seen.add(test.id)
    trials, configurations = _package_settings(ctx, _skill_root(doc.file) / SETTINGS_FILE)
    if ctx.errors:
        raise SpecErrors(ctx.errors)
    # all_pass: a case passes when its expectations all pass (see the module docstring).
    suite = Suite(name=name or doc.file.stem, format="agent-skills-evals", source_file=str(doc.file),
                  tests=tests, scoring="all_pass",
                  execution=Execution(trials=Trials(count=trials), configurations=configurations))
    return suite, ctx.warnings


# skill-creator's benchmark: every eval with the skill and without it (the baseline of the uplift).
DEFAULT_CONFIGURATIONS = [WITH_SKILL, WITHOUT_SKILL]


def _package_settings(ctx: LoadContext, file: Path) -> tuple[int, list[str]]:
    """``trials`` (1 without the file) and ``configurations`` (both without the file) of the
    package's eval-pipelines.yaml."""
    if not file.is_file():
        return 1, list(DEFAULT_CONFIGURATIONS)
    settings = load_document(file)
    raw = settings.data if settings.data is not None else {}
    if not isinstance(raw, dict):
        ctx.error(settings, (), f"got {type(raw).__name__}", "a mapping such as `trials: 3`")
        return 1, list(DEFAULT_CONFIGURATIONS)
    compat.unknown_fields(ctx, settings, (), raw, SETTINGS_KEYS)  # our own file: refused, not ignored
    trials = raw.get("trials", 1)
    if isinstance(trials, bool) or not isinstance(trials, int) or not 1 <= trials <= 1000:
        ctx.error(settings, ("trials",), f"got {trials!r}", "runs per eval, an integer from 1 to 1000")
        trials = 1
    configurations = raw.get("configurations", list(DEFAULT_CONFIGURATIONS))
    if (not isinstance(configurations, list) or not configurations
            or any(c not in DEFAULT_CONFIGURATIONS for c in configurations)
            or len(set(configurations)) != len(configurations) or WITH_SKILL not in configurations):
        ctx.error(settings, ("configurations",), f"got {configurations!r}",
                  "[with_skill, without_skill] (the default) or [with_skill] (no baseline)")
        configurations = list(DEFAULT_CONFIGURATIONS)
    return trials, configurations


def refuse_files_for_chat_targets(suite: Suite, targets: dict[str, Any]) -> None:
    """A case with an input file its prompt cannot carry (binary, a directory's file), bound to a target
    that is not an agent: refused in one line naming the target's type (the run would only fail)."""
    for case in suite.tests:
        left = next((f for f in case.input_files if not f.inlined), None)
        if left is None:
            continue
        for name in suite.targets_for(case):
            kind = getattr(targets.get(name), "type", None)
            if kind is not None and kind not in AGENT_TARGET_TYPES:
                raise SpecErrors.single(
                    case.source_file or suite.source_file,
                    f"eval {case.id!r}: input file {left.path} ({left.reason}) cannot be given to target "
                    f"{name!r} (type: {kind})", path=("evals",), line=case.source_line,
                    expected="an agent target (type: agent) or Claude Code (type: claude_code), which finds "
                             "the file in its workspace")

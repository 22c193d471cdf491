"""Agent Skills' ``evals/evals.json`` (skill-creator), read as a suite.

The format (anthropics/skills ``skill-creator/references/schemas.md``; AgentV
reads it in ``loaders/agent-skills-parser.ts``)::

    {"skill_name": "pdf",
     "evals": [{"id": 1, "prompt": "...", "expected_output": "...",
                "files": ["evals/files/sample.txt"], "expectations": ["The output ...", ...]}]}

Each eval becomes one test:

- ``id`` (an integer, or a string) is the test id; ids must be unique.
- ``prompt`` is the user message. Each of ``files`` is read and appended to it
  as AgentV sends a file part (``<file path="...">`` text ``</file>``). Paths are
  relative to the skill root, as skill-creator documents (``evals/files/x``);
  a path not found there is looked up next to ``evals.json`` (AgentV's rule).
  Files must be UTF-8 text inside the package: our targets are chat models.
- ``expected_output`` (skill-creator: "a human-readable description of
  success") is the test's ``criteria`` and its reference ``expected_output``.
- ``expectations`` (AgentV also writes ``assertions``), natural-language
  statements a grader checks, become one judged ``rubrics`` assertion with one
  criterion per statement (ids ``expectation-1``, ...): the rubric score is the
  share the judge finds met, as skill-creator's ``pass_rate``. An eval with no
  expectations is judged on ``expected_output`` by ``llm_judge``.
- ``skill_name`` names the suite (the skill package's own name still wins).

Every other key is refused: a field is honoured or refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from eval_pipelines.suite.assertions import parse_assertion
from eval_pipelines.suite.errors import SpecErrors, pydantic_errors
from eval_pipelines.formats.agentv.parts import MAX_FILE_PART_BYTES
from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.suite.models import Assertion, Message, Suite, TestCase
from eval_pipelines.suite.paths import PathPolicy
from eval_pipelines.suite.source import Document
from eval_pipelines.formats import compat

TOP_KEYS = {"skill_name", "evals"}
EVAL_KEYS = {"id", "prompt", "expected_output", "files", "expectations", "assertions"}


def is_skill_evals(doc: Document) -> bool:
    data = doc.data
    return (isinstance(data, dict) and isinstance(data.get("evals"), list) and "testCases" not in data
            and doc.file.suffix.lower() == ".json")


def _skill_root(file: Path) -> Path:
    return file.parent.parent if file.parent.name == "evals" else file.parent


def _file_text(ctx: LoadContext, doc: Document, path: tuple[Any, ...], written: Any) -> str | None:
    if not isinstance(written, str) or not written.strip():
        ctx.error(doc, path, f"got {written!r}", "a file path relative to the skill root")
        return None
    candidates = [_skill_root(doc.file) / written, doc.file.parent / written]
    found = next((c.resolve() for c in candidates if c.is_file()), None)
    if found is None:
        ctx.error(doc, path, f"file not found: {written}", "a file relative to the skill root (e.g. evals/files/x)")
        return None
    if not ctx.policy.check(found, doc, path, ctx.errors):
        return None
    if found.stat().st_size > MAX_FILE_PART_BYTES:
        ctx.error(doc, path, f"{written} is {found.stat().st_size} bytes", f"at most {MAX_FILE_PART_BYTES} bytes")
        return None
    try:
        text = found.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        ctx.error(doc, path, f"{written} is not UTF-8 text",
                  "text files: the targets here are chat models, a binary file cannot be sent as text")
        return None
    return f'<file path="{written}">\n{text.replace(chr(13) + chr(10), chr(10)).strip()}\n</file>'


def _statements(ctx: LoadContext, doc: Document, path: tuple[Any, ...], raw: Any) -> list[str]:
    if not isinstance(raw, list) or not all(isinstance(s, str) and s.strip() for s in raw):
        ctx.error(doc, path, "invalid expectations", "a list of non-empty statements")
        return []
    return list(raw)


def _test(ctx: LoadContext, doc: Document, index: int, raw: Any) -> TestCase | None:
    path: tuple[Any, ...] = ("evals", index)
    if not isinstance(raw, dict):
        ctx.error(doc, path, f"got {type(raw).__name__}", "an eval mapping with `id` and `prompt`")
        return None
    compat.unknown_fields(ctx, doc, path, raw, EVAL_KEYS)
    test_id = raw.get("id")
    if isinstance(test_id, bool) or not isinstance(test_id, (int, str)) or str(test_id).strip() == "":
        ctx.error(doc, path + ("id",), f"invalid id {test_id!r}", "an integer (or a non-empty string)")
        return None
    prompt = raw.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        ctx.error(doc, path + ("prompt",), "required field is missing" if prompt is None else "invalid prompt",
                  "the task, a non-empty string")
        return None
    files = raw.get("files") or []
    if not isinstance(files, list):
        ctx.error(doc, path + ("files",), f"got {type(files).__name__}", "a list of file paths")
        files = []
    parts = [prompt] + [t for i, f in enumerate(files) if (t := _file_text(ctx, doc, path + ("files", i), f))]
    expected = raw.get("expected_output")
    if expected is not None and not isinstance(expected, str):
        ctx.error(doc, path + ("expected_output",), f"got {type(expected).__name__}", "a description of success")
        expected = None
    if "expectations" in raw and "assertions" in raw:
        ctx.error(doc, path + ("assertions",), "both `expectations` and `assertions` given", "one of them")
    key = "assertions" if "assertions" in raw and "expectations" not in raw else "expectations"
    statements = _statements(ctx, doc, path + (key,), raw[key]) if key in raw else []
    if statements:
        rubric = {"type": "rubrics", "name": "expectations",
                  "criteria": [{"id": f"expectation-{i + 1}", "outcome": s} for i, s in enumerate(statements)]}
        parsed = parse_assertion(rubric, doc, path + (key,), ctx.errors)
        assertions = [parsed] if parsed else []
    elif expected:
        assertions = [Assertion(type="llm_judge", name="expected_output")]
    else:
        ctx.error(doc, path, "nothing to grade", "`expectations` or an `expected_output`")
        return None
    try:
        return TestCase(id=str(test_id), input=[Message(role="user", content="\n".join(parts))],
                        expected_output=expected, criteria=expected, assertions=assertions,
                        metadata={"files": files} if files else {}, source_file=str(doc.file),
                        source_line=doc.line_of(path))
    except ValidationError as exc:
        ctx.errors.extend(pydantic_errors(doc, path, exc))
        return None


def load_skill_evals(doc: Document, policy: PathPolicy) -> tuple[Suite, list[str]]:
    ctx = LoadContext(policy, tool="skill-creator")
    raw = doc.data
    compat.unknown_fields(ctx, doc, (), raw, TOP_KEYS)
    name = raw.get("skill_name")
    if name is not None and not isinstance(name, str):
        ctx.error(doc, ("skill_name",), f"got {type(name).__name__}", "the skill's name")
        name = None
    if not raw["evals"]:
        ctx.error(doc, ("evals",), "no evals", "at least one eval")
    tests = [t for i, item in enumerate(raw["evals"]) if (t := _test(ctx, doc, i, item)) is not None]
    seen: set[str] = set()
    for i, test in enumerate(tests):
        if test.id in seen:
            ctx.error(doc, ("evals", i, "id"), f"duplicate eval id {test.id!r}", "unique ids")
        seen.add(test.id)
    if ctx.errors:
        raise SpecErrors(ctx.errors)
    suite = Suite(name=name or doc.file.stem, format="agent-skills-evals", source_file=str(doc.file),
                  tests=tests)
    return suite, ctx.warnings

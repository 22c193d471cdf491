"""docs/assertions.md stays true: every ```yaml suite example loads with the real
loader, and every assertion type, alias and parameter field is documented."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from eval_pipelines.grading.registry import graders_by_name, known_types
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite

DOC = Path(__file__).resolve().parents[2] / "docs" / "assertions.md"
TEXT = DOC.read_text(encoding="utf-8")

_OPENER = re.compile(r"^```yaml suite[ \t]*$")
_FENCE = re.compile(r"^```")


@dataclass(frozen=True)
class Block:
    line: int  # 1-based line of the opening fence
    text: str


def _blocks(text: str) -> list[Block]:
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        if _OPENER.match(lines[i]):
            start = i
            i += 1
            body = []
            while i < len(lines) and not _FENCE.match(lines[i]):
                body.append(lines[i])
                i += 1
            assert i < len(lines), f"docs/assertions.md:{start + 1}: unclosed ```yaml suite block"
            blocks.append(Block(start + 1, "\n".join(body) + "\n"))
        i += 1
    return blocks


BLOCKS = _blocks(TEXT)
CANONICAL = sorted({grader.type for grader in graders_by_name().values()})
HEADINGS = [line for line in TEXT.splitlines() if line.startswith(("## ", "### "))]


def test_doc_has_examples() -> None:
    assert len(BLOCKS) >= len(CANONICAL)
    # Every opener was parsed as a block (no stray or indented variants).
    assert len(BLOCKS) == TEXT.count("```yaml suite")


@pytest.mark.parametrize("block", BLOCKS, ids=[f"line{b.line}" for b in BLOCKS])
def test_example_loads(block: Block, tmp_path: Path) -> None:
    file = tmp_path / "eval.yaml"
    file.write_text(block.text, encoding="utf-8")
    # The judge scripts an example names exist beside it (a missing one is refused at load).
    for script in re.findall(r"[\"']?(?:script|customScript)[\"']?:\s*[\"']?([^\s\"'#,\[]+)", block.text):
        (tmp_path / script).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / script).write_text("print('{\"score\": 1}')\n", encoding="utf-8")
    try:
        suite, _ = load_suite(file)
    except SpecErrors as exc:
        pytest.fail(f"example at docs/assertions.md:{block.line} does not load:\n{exc}")
    assert suite.tests, f"example at docs/assertions.md:{block.line} has no tests"


def _type_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"^\s*(?:-\s+)?type:\s*[\"']?{re.escape(name)}[\"']?\s*(?:#.*)?$", re.MULTILINE)


@pytest.mark.parametrize("type_name", CANONICAL)
def test_every_type_has_an_example_and_a_heading(type_name: str) -> None:
    assert any(_type_pattern(type_name).search(b.text) for b in BLOCKS), (
        f"no ```yaml suite example uses `type: {type_name}`")
    assert any(f"`{type_name}`" in heading for heading in HEADINGS), (
        f"no ## or ### heading mentions `{type_name}`")


def _section(type_name: str) -> str:
    """The text under the ``### `type` `` heading, up to the next heading."""
    match = re.search(rf"^### `{re.escape(type_name)}`[^\n]*\n(.*?)(?=^##)", TEXT + "\n##",
                      re.MULTILINE | re.DOTALL)
    assert match, f"no ### `{type_name}` section"
    return match.group(1)


def _field_name(name: str, field) -> str:
    alias = field.validation_alias
    if alias is not None and hasattr(alias, "choices"):
        return str(alias.choices[0])
    return str(alias or field.alias or name)


@pytest.mark.parametrize("type_name", CANONICAL)
def test_every_field_and_alias_is_documented(type_name: str) -> None:
    grader = next(g for g in graders_by_name().values() if g.type == type_name)
    section = _section(type_name)
    fields = [_field_name(n, f) for n, f in grader.Params.model_fields.items()]
    undocumented = [f for f in fields if f"`{f}`" not in section and f"`{f}." not in section]
    assert not undocumented, f"`{type_name}` section does not document {undocumented}"
    missing_aliases = [a for a in grader.aliases if f"`{a}`" not in section]
    assert not missing_aliases, f"`{type_name}` section does not name aliases {missing_aliases}"


def test_every_registered_name_is_mentioned() -> None:
    missing = [name for name in known_types() if f"`{name}`" not in TEXT]
    assert not missing


def test_index_is_the_registry_metadata() -> None:
    """The index table is derived from the graders, not kept by hand."""
    from eval_pipelines.grading.registry import index_markdown

    assert index_markdown() in TEXT, (
        "docs/assertions.md's index is out of date; paste the output of\n  python -c 'from "
        "eval_pipelines.grading.registry import index_markdown; print(index_markdown())'")

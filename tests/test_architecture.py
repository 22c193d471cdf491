"""The layout's rules, checked on the source: no import cycles, short modules,
Dagster only in its thin layer, grader metadata that matches what graders do."""

from __future__ import annotations

import ast
import re
import inspect
import sys
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "eval_pipelines"
MAX_LINES = 450
DAGSTER_ALLOWED = ("eval_pipelines.defs", "eval_pipelines.definitions", "eval_pipelines.cli")
# The orchestration and its front ends; everything else is the evaluation core, which never
# imports them (data flows down).
UPPER = ("eval_pipelines.pipeline.stages", "eval_pipelines.pipeline.checks", *DAGSTER_ALLOWED)
CORE = ("eval_pipelines.suite", "eval_pipelines.formats", "eval_pipelines.grading", "eval_pipelines.run",
        "eval_pipelines.analysis", "eval_pipelines.store", "eval_pipelines.reports", "eval_pipelines.pipeline.project")


def _within(name: str, packages: tuple[str, ...]) -> bool:
    """``name`` is one of ``packages`` or inside one (``eval_pipelines.cli_x`` is not in ``eval_pipelines.cli``)."""
    return any(name == p or name.startswith(p + ".") for p in packages)


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imports(name: str, path: Path) -> set[str]:
    """Every module imported anywhere in the file: top level, inside functions, under TYPE_CHECKING."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        for imported in _imports(name, path):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != name:
                graph[name].add(imported)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    sys.setrecursionlimit(10_000)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in list(graph):
        if module not in index:
            visit(module)
    return found


def test_no_import_cycles_counting_imports_inside_functions() -> None:
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("name", sorted(_modules()))
def test_module_is_short_enough_to_read_in_one_sitting(name: str) -> None:
    lines = len(_modules()[name].read_text().splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines (at most {MAX_LINES})"


def test_dagster_is_imported_only_by_the_dagster_layer() -> None:
    offenders = sorted(
        name for name, path in _modules().items()
        if not _within(name, DAGSTER_ALLOWED)
        and any(i == "dagster" or i.startswith(("dagster.", "dagster_")) for i in _imports(name, path)))
    assert offenders == []


def test_data_flows_down_the_layers() -> None:
    """The evaluation core never reaches up into the orchestration (stages, checks, defs, cli)."""
    graph = _graph()
    offenders = sorted((m, t) for m in graph if _within(m, CORE) for t in graph[m] if _within(t, UPPER))
    assert offenders == []
    analysis = [(m, t) for m in graph if m.startswith("eval_pipelines.analysis")
                for t in graph[m] if not t.startswith(("eval_pipelines.analysis", "eval_pipelines.suite.models"))]
    assert analysis == [], "analysis/ is pure functions: no I/O, no store"


def test_grader_metadata_matches_what_each_grader_does() -> None:
    """A grader that asks the judge declares ``needs_judge`` (reports then count it as
    model-graded); nothing keeps a separate list that a new grader could be missing from."""
    from eval_pipelines.grading.registry import all_graders
    from eval_pipelines.reports.data import grader_family

    for grader in all_graders():
        source = inspect.getsource(sys.modules[type(grader).__module__])
        uses_judge = "inp.judge" in source
        assert grader.needs_judge == uses_judge, f"{grader.type}: needs_judge={grader.needs_judge}"
        assert grader_family(grader.type) == grader.grader_family()
    families = {g.type: g.grader_family() for g in all_graders()}
    assert {t for t, f in families.items() if f == "model"} >= {"llm_judge", "rubrics", "model", "agent_judge"}
    assert families["human"] == "human" and families["equals"] == "code"


def test_architecture_doc_lists_every_package_as_the_tree_has_it() -> None:
    """docs/architecture.md's package table is made from the tree; a package or module added
    without regenerating it (``python -m tests.support.architecture_doc``) fails here."""
    from tests.support.architecture_doc import DOC, packages, with_table

    doc = DOC.read_text()
    missing = [rel for rel, _, _ in packages() if f"| `{rel}` |" not in doc]
    assert missing == [], f"docs/architecture.md does not list {missing}"
    assert doc == with_table(doc), "docs/architecture.md's package table is stale: python -m tests.support.architecture_doc"


def test_every_format_family_is_a_documented_package() -> None:
    families = [p for p in (PACKAGE / "formats").iterdir() if p.is_dir() and p.name != "__pycache__"]
    assert {p.name for p in families} >= {"eval_yaml", "skill_tests", "harness", "prompt_modes", "skills",
                                          "agentv", "promptfoo"}
    for family in families:
        init = family / "__init__.py"
        assert init.is_file() and ast.get_docstring(ast.parse(init.read_text())), f"{family.name}: no docstring"


def test_third_party_families_state_their_field_rule_through_compat() -> None:
    """promptfoo, AgentV and skill-creator files follow one rule (formats/compat.py): no family
    refuses unknown keys or writes "accepted but not used" warnings on its own."""
    graph = _graph()
    for family in ("promptfoo", "agentv", "skills"):
        prefix = f"eval_pipelines.formats.{family}"
        users = [m for m in graph if _within(m, (prefix,)) and "eval_pipelines.formats.compat" in graph[m]]
        assert users, f"formats/{family} does not use formats/compat.py"
        for name, path in _modules().items():
            if _within(name, (prefix,)):
                source = path.read_text()
                assert "ctx.unknown_keys(" not in source, f"{name} refuses unknown keys itself"
                assert not re.search(r"warnings\.append\(f\"\{doc\.file\}: [^\"]*: accepted (but not used|without effect)",
                                     source), f"{name} writes the third-party warning itself"

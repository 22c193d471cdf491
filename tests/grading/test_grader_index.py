"""grader_index.py names every grader module's assertion names (the registry imports by it)."""

from __future__ import annotations

from pathlib import Path

from eval_pipelines.grading import registry


def test_the_index_is_current() -> None:
    written = Path(registry.__file__).with_name("grader_index.py").read_text()
    assert written == registry.index_source(), \
        "a grader was added, renamed or given another alias: run python -m eval_pipelines.grading.registry"


def test_lookups_by_the_index_match_the_full_scan() -> None:
    scanned = registry.graders_by_name()
    for name, (_, canonical) in registry.GRADERS.items():
        assert registry.canonical_type(name) == canonical == scanned[name].type
        assert registry.get_grader(name.upper().replace("_", "-")) is scanned[name]
    assert registry.get_grader("no_such_assertion") is None
    assert set(registry.known_types()) == set(scanned)

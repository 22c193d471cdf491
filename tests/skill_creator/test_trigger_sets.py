"""Issue 32 item 5 (the format part): trigger eval sets read in both shapes, from the paths real
packages use, with one-line refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval_pipelines.formats.skills.triggers import TRIGGER_SET_PATHS, find_trigger_sets, load_trigger_set
from eval_pipelines.suite.errors import SpecErrors

CORPUS = Path(__file__).resolve().parents[1] / "data" / "skills_corpus"


def write(root: Path, name: str, data: object) -> Path:
    file = root / name
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return file


def test_a_real_packages_trigger_set_loads() -> None:
    skill = CORPUS / "Altstaq-Apps__d2-diagram-skill" / "skill"
    (file,) = find_trigger_sets(skill)
    assert file.name == "trigger_queries.json"
    triggers = load_trigger_set(file)
    assert (len(triggers.queries), triggers.positives) == (26, 14)
    assert triggers.queries[0].query.startswith("I need to diagram our microservices architecture")
    assert triggers.queries[0].line == 2 and triggers.warnings == []


def test_both_shapes_and_every_known_path(tmp_path: Path) -> None:
    listed = write(tmp_path, "a/evals/trigger-evals.json",
                   [{"query": "draw a diagram", "should_trigger": True, "reason": "core use"},
                    {"query": "what is 2+2", "should_trigger": False}])
    triggers = load_trigger_set(listed)
    assert [(q.query, q.should_trigger) for q in triggers.queries] == [("draw a diagram", True), ("what is 2+2", False)]
    assert triggers.queries[0].extra == {"reason": "core use"}
    assert len(triggers.warnings) == 1 and "evals/trigger-evals.json" in triggers.warnings[0] \
        and "[0].reason: skill-creator ignores this field too" in triggers.warnings[0]
    wrapped = write(tmp_path, "b/evals/triggers.json", {"evals": [{"prompt": "sketch it", "should_trigger": True}]})
    assert [q.query for q in load_trigger_set(wrapped).queries] == ["sketch it"]
    for path in TRIGGER_SET_PATHS:
        write(tmp_path / "c", path, [{"query": "q", "should_trigger": True}])
    assert [p.relative_to(tmp_path / "c").as_posix() for p in find_trigger_sets(tmp_path / "c")] == list(
        TRIGGER_SET_PATHS)


@pytest.mark.parametrize("data, message", [
    ({"queries": []}, "evals: required field is missing"),
    ("just text", "got str"),
    ([], "no queries"),
    ([{"query": "q", "should_trigger": "yes"}], "[0].should_trigger: got 'yes' (expected true or false)"),
    ([{"query": "q"}], "should_trigger: required field is missing"),
    ([{"should_trigger": True}], "[0].query: required field is missing"),
    ([{"query": "q", "prompt": "p", "should_trigger": True}], "both `query` and `prompt` given"),
    ([{"query": "q", "should_triger": True}], "did you mean 'should_trigger'"),
])
def test_a_bad_trigger_set_is_refused_in_one_line(tmp_path: Path, data: object, message: str) -> None:
    file = write(tmp_path, "evals/trigger-eval.json", data)
    with pytest.raises(SpecErrors) as caught:
        load_trigger_set(file)
    text = str(caught.value)
    assert message in text and "trigger-eval.json" in text, text
    assert "Traceback" not in text

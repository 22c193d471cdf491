"""A big suite's memory (issue 33): the loaded cases share what they repeat (suite/base_model.py),
and the test_cases rows are written in batches; neither changes a value or a stored row."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from eval_pipelines.formats.loader import load_skill
from eval_pipelines.store import tables
from eval_pipelines.store.connection import connect, replace_partitions
from eval_pipelines.store.partition import Partition
from eval_pipelines.suite.models import Suite, TestCase

CASES = 5


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201 - a LoadedSkill
    root = tmp_path_factory.mktemp("project")
    (root / "datasets").mkdir()
    with (root / "datasets" / "cases.jsonl").open("w") as out:
        for i in range(CASES):
            out.write(json.dumps({"id": f"case-{i}", "input": f"say {i}", "category": "maths",
                                  "assert": [{"type": "equals", "value": f"ok {i}"}]}) + "\n")
    skill = root / "skills" / "many" / "1.0.0"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: many\ndescription: Many cases.\nversion: 1.0.0\n---\nAnswer.\n")
    (skill / "eval.yaml").write_text("name: many\nexecution:\n  targets: [bot]\ntests:\n"
                                     "  - file://datasets/cases.jsonl\n")
    (skill / "targets.yaml").write_text("targets:\n  - name: bot\n    type: openai\n    model: m\n")
    return load_skill(skill, datasets_dir=root / "datasets", extract_dir=root / "x")


def test_cases_share_their_fields_sets_and_repeated_strings(loaded) -> None:  # noqa: ANN001
    first, second = loaded.suite.tests[:2]
    assert first.model_fields_set is second.model_fields_set
    assert first.input[0].model_fields_set is second.input[0].model_fields_set
    assert first.assertions[0].model_fields_set is second.assertions[0].model_fields_set
    assert first.source_file is second.source_file and first.category is second.category
    # A field assigned afterwards is the instance's own: the others' fields sets do not change.
    one, other = (TestCase(id=name, input=[{"content": "hi"}]) for name in ("one", "other"))
    assert one.model_fields_set is other.model_fields_set == {"id", "input"}
    one.retries = 2
    assert "retries" in one.model_fields_set and "retries" not in other.model_fields_set
    assert "retries" not in first.model_fields_set
    # Values, dumps and a round trip are those of the suite as validated.
    again = Suite.model_validate_json(loaded.suite.model_dump_json())
    assert again == loaded.suite
    assert again.model_dump_json() == loaded.suite.model_dump_json()


def test_test_cases_written_in_batches_are_the_rows_of_one_frame(loaded, store: str) -> None:  # noqa: ANN001
    partition = Partition("2026-01-01", "many@1.0.0")
    whole = tables.encode_test_cases(loaded.suite, partition, "r1")
    batches = list(tables.encode_test_case_batches(loaded.suite, partition, "r1", size=2))
    assert [len(b) for b in batches] == [2, 2, 1]
    pd.testing.assert_frame_equal(pd.concat(batches, ignore_index=True), whole)
    with connect(store) as con:
        written = replace_partitions(con, partition, {"test_cases": iter(batches)})
        stored = con.execute("SELECT test_id, input, assertions FROM test_cases ORDER BY test_id").fetchall()
    assert written == {"test_cases": CASES}
    assert stored == [(r.test_id, r.input, r.assertions) for r in whole.sort_values("test_id").itertuples()]


def test_an_empty_suite_writes_no_test_case_rows(loaded, store: str) -> None:  # noqa: ANN001
    empty = loaded.suite.model_copy(update={"tests": []})
    partition = Partition("2026-01-01", "many@1.0.0")
    with connect(store) as con:
        written = replace_partitions(con, partition, {"test_cases": tables.encode_test_case_batches(
            empty, partition, "r1")})
    assert written == {"test_cases": 0}
    assert Path(loaded.package.root).is_dir()


def test_a_big_frame_is_inserted_in_slices_with_every_row(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from eval_pipelines.store import connection

    monkeypatch.setattr(connection, "INSERT_BATCH_ROWS", 2)
    partition = Partition("2026-01-01", "many@1.0.0")
    frame = tables.encode_case_metrics({("bot", f"case-{i}"): {"pass_rate": i / 4} for i in range(CASES)},
                                       partition, "r1", "many")
    with connect(store) as con:
        assert replace_partitions(con, partition, {"case_metrics": frame}) == {"case_metrics": CASES}
        stored = con.execute("SELECT test_id, value FROM case_metrics ORDER BY test_id").fetchall()
    assert stored == [(f"case-{i}", i / 4) for i in range(CASES)]

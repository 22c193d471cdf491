"""External test rows: CSV (promptfoo ``__expected`` columns), JSONL, YAML."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.formats.datasets import read_test_rows
from eval_pipelines.suite.errors import SpecError, SpecErrors
from eval_pipelines.formats.loader import load_suite


def errors_of(file: Path) -> list[SpecError]:
    with pytest.raises(SpecErrors) as info:
        read_test_rows(file)
    return info.value.errors


def test_csv_expected_columns_become_assertions(tmp_path: Path) -> None:
    f = tmp_path / "cases.csv"
    f.write_text(
        "id,input,__expected1,__expected2,difficulty,tags\n"
        'c1,"Screen: Huawei",contains: DENIED,regex: ^DEN,hard,"a, b"\n'
        "c2,Say ok,ok,,easy,\n"
        "c3,Is json,is-json,icontains: Yes,,\n",
        encoding="utf-8",
    )
    doc = read_test_rows(f)
    c1, c2, c3 = doc.data
    assert c1["assert"] == [{"type": "contains", "value": "DENIED"}, {"type": "regex", "value": "^DEN"}]
    assert c1["metadata"] == {"difficulty": "hard"} and c1["tags"] == ["a", "b"]
    assert c1["input"] == "Screen: Huawei"
    # Bare value = equals; empty cell adds nothing.
    assert c2["assert"] == [{"type": "equals", "value": "ok"}]
    assert c3["assert"] == [{"type": "is_json"}, {"type": "contains", "value": "Yes", "case_sensitive": False}]
    assert doc.line_of((0,)) == 2 and doc.line_of((2,)) == 4


def test_csv_row_lines_account_for_multiline_cells(tmp_path: Path) -> None:
    f = tmp_path / "cases.csv"
    f.write_text('id,input\na,"line one\nline two"\nb,plain\n', encoding="utf-8")
    doc = read_test_rows(f)
    assert doc.data[0]["input"] == "line one\nline two"
    assert doc.line_of((1,)) == 4


def test_csv_suite_through_eval_yaml(tmp_path: Path) -> None:
    (tmp_path / "cases.csv").write_text("id,input,__expected\nc1,hi,contains: hello\n", encoding="utf-8")
    (tmp_path / "eval.yaml").write_text("tests: cases.csv\n", encoding="utf-8")
    suite, _ = load_suite(tmp_path / "eval.yaml")
    (case,) = suite.tests
    assert case.id == "c1" and case.user_text == "hi"
    assert [(a.type, a.config) for a in case.assertions] == [("contains", {"value": "hello"})]
    assert case.source_file == str(tmp_path / "cases.csv") and case.source_line == 2


def test_csv_with_nul_byte(tmp_path: Path) -> None:
    f = tmp_path / "cases.csv"
    f.write_bytes(b"id,input\nc1,ok\nc2,bad\x00value\n")
    (err,) = errors_of(f)
    assert err.message == "file contains a NUL byte" and err.line == 3
    assert str(err) == f"{f}:3: (root): file contains a NUL byte (expected CSV text)"


def test_csv_broken_quoting_reports_the_line(tmp_path: Path) -> None:
    f = tmp_path / "cases.csv"
    f.write_text('id,input\nc1,fine\nc2,"quoted\nstill"oops,x\nc3,after\n', encoding="utf-8")
    (err,) = errors_of(f)
    assert err.message.startswith("broken CSV:")
    # The stray character after the closing quote is on line 4 (record starts on 3),
    # never the header line.
    assert err.line == 4


def test_csv_without_input_column(tmp_path: Path) -> None:
    f = tmp_path / "cases.csv"
    f.write_text("id,prompt\nc1,x\n", encoding="utf-8")
    (err,) = errors_of(f)
    assert "no `input` column" in err.message and err.line == 1


def test_csv_row_with_extra_cells(tmp_path: Path) -> None:
    f = tmp_path / "cases.csv"
    f.write_text("id,input\nc1,x\nc2,y,extra\n", encoding="utf-8")
    (err,) = errors_of(f)
    assert err.message == "row has more cells than the header" and err.line == 3


def test_jsonl_bad_line_is_named(tmp_path: Path) -> None:
    f = tmp_path / "cases.jsonl"
    f.write_text('{"id": "a", "input": "x"}\n\n{"id": "b", "input": \n{"id": "c", "input": "z"}\n{oops}\n',
                 encoding="utf-8")
    errors = errors_of(f)
    assert [e.line for e in errors] == [3, 5]
    assert all(e.message.startswith("invalid JSON:") and e.file == str(f) for e in errors)
    assert str(errors[0]).startswith(f"{f}:3: [1]: invalid JSON:")


def test_jsonl_bad_line_through_suite_loader(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text('{"input": "ok"}\nnot json\n', encoding="utf-8")
    (tmp_path / "eval.yaml").write_text("tests: ./cases.jsonl\n", encoding="utf-8")
    with pytest.raises(SpecErrors) as info:
        load_suite(tmp_path / "eval.yaml")
    (err,) = info.value.errors
    assert err.file == str(tmp_path / "cases.jsonl") and err.line == 2


def test_jsonl_row_problem_points_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text(
        '{"id": "a", "input": "ok"}\n{"id": "b", "input": "x", "assert": [{"type": "nope"}]}\n',
        encoding="utf-8")
    (tmp_path / "eval.yaml").write_text("tests: ./cases.jsonl\n", encoding="utf-8")
    with pytest.raises(SpecErrors) as info:
        load_suite(tmp_path / "eval.yaml")
    (err,) = info.value.errors
    assert err.file == str(tmp_path / "cases.jsonl") and err.line == 2
    assert err.path == (1, "assert", 0, "type")


def test_jsonl_sidecar_convention(tmp_path: Path) -> None:
    (tmp_path / "data.jsonl").write_text('{"id": "a", "input": "x"}\n', encoding="utf-8")
    (tmp_path / "data.yaml").write_text("assert:\n  - type: contains\n    value: x\n", encoding="utf-8")
    suite, _ = load_suite(tmp_path / "data.jsonl")
    assert [a.type for a in suite.tests[0].assertions] == ["contains"]


def test_yaml_dataset_must_be_a_list(tmp_path: Path) -> None:
    f = tmp_path / "cases.yaml"
    f.write_text("id: a\ninput: x\n", encoding="utf-8")
    (err,) = errors_of(f)
    assert err.message == "expected a list of tests"


def test_unsupported_dataset_type(tmp_path: Path) -> None:
    f = tmp_path / "cases.txt"
    f.write_text("x", encoding="utf-8")
    (err,) = errors_of(f)
    assert "unsupported dataset type '.txt'" in err.message

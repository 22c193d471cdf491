"""External test data: ``.jsonl``, ``.csv`` and ``.yaml`` files of test rows.

Rows come back as raw test mappings plus a :class:`Document` whose line map
points each row at its line, so the suite loader reports problems in a row at
``cases.jsonl:17``. CSV follows promptfoo's conventions: ``__expected`` columns
hold assertions (``contains: X``, ``regex: X``, ``is-json``, ``equals: X``, or a
bare value meaning equals); other unknown columns become metadata.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from eval_pipelines.suite.errors import SpecError, SpecErrors
from eval_pipelines.suite.source import Document, load_document, read_text

DATASET_SUFFIXES = (".jsonl", ".csv", ".yaml", ".yml", ".json")
CSV_TEST_COLUMNS = {"id", "name", "description", "input", "criteria", "expected_output",
                    "expected", "expected_outcome", "category", "tags"}


def _csv_assertion(cell: str) -> dict[str, Any]:
    text = cell.strip()
    kind, sep, rest = text.partition(":")
    kind_key = kind.strip().lower().replace("-", "_")
    if kind_key in ("is_json",) and not rest.strip():
        return {"type": "is_json"}
    if sep and kind_key in ("contains", "icontains", "regex", "equals", "starts_with", "ends_with"):
        value = rest.strip()
        if kind_key == "icontains":
            return {"type": "contains", "value": value, "case_sensitive": False}
        return {"type": kind_key, "value": value}
    return {"type": "equals", "value": text}


def _read_jsonl(file: Path) -> Document:
    text = read_text(file)
    rows: list[Any] = []
    lines: dict[tuple[Any, ...], int] = {}
    errors: list[SpecError] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(SpecError(str(file), (len(rows),), f"invalid JSON: {exc.msg}", number))
            rows.append(None)
            continue
        except RecursionError:
            errors.append(SpecError(str(file), (len(rows),), "nesting too deep", number))
            rows.append(None)
            continue
        lines[(len(rows),)] = number
        rows.append(row)
    if errors:
        raise SpecErrors(errors)
    return Document(file, rows, lines)


def _read_csv(file: Path) -> Document:
    text = read_text(file)
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise SpecErrors.single(file, "file contains a NUL byte", line=line, expected="CSV text")
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    rows: list[Any] = []
    lines: dict[tuple[Any, ...], int] = {}
    try:
        header = reader.fieldnames or []
        if "input" not in header:
            raise SpecErrors.single(file, "CSV header has no `input` column", line=1,
                                    expected="columns like id,input,expected_output,__expected")
        start = 2
        for record in reader:
            if None in record:
                raise SpecErrors.single(file, "row has more cells than the header",
                                        line=start, expected=f"{len(header)} cells")
            test: dict[str, Any] = {}
            asserts: list[dict[str, Any]] = []
            metadata: dict[str, Any] = {}
            for column, cell in record.items():
                if cell is None:
                    continue
                if column.startswith("__expected"):
                    if cell.strip():
                        asserts.append(_csv_assertion(cell))
                elif column == "tags":
                    test["tags"] = [t.strip() for t in cell.split(",") if t.strip()]
                elif column in CSV_TEST_COLUMNS:
                    if cell != "" or column == "input":
                        test["expected_output" if column == "expected" else column] = cell
                else:
                    metadata[column] = cell
            if asserts:
                test["assert"] = asserts
            if metadata:
                test["metadata"] = metadata
            lines[(len(rows),)] = start
            rows.append(test)
            start = reader.line_num + 1
    except csv.Error as exc:
        raise SpecErrors.single(file, f"broken CSV: {exc}", line=reader.reader.line_num) from None
    return Document(file, rows, lines)


def read_test_rows(file: Path) -> Document:
    """Rows of a dataset file as a Document whose data is a list of test mappings."""
    suffix = file.suffix.lower()
    if suffix not in DATASET_SUFFIXES:
        raise SpecErrors.single(file, f"unsupported dataset type {suffix!r}",
                                expected="one of " + ", ".join(DATASET_SUFFIXES))
    if not file.is_file():
        raise SpecErrors.single(file, "dataset file not found")
    if suffix == ".jsonl":
        return _read_jsonl(file)
    if suffix == ".csv":
        return _read_csv(file)
    doc = load_document(file)
    if isinstance(doc.data, dict) and isinstance(doc.data.get("tests"), list):
        # A YAML file of cases may wrap them in `tests:`; re-key the line map.
        lines = {k[1:]: v for k, v in doc.lines.items() if k[:1] == ("tests",)}
        return Document(file, doc.data["tests"], lines)
    if not isinstance(doc.data, list):
        raise SpecErrors.single(file, "expected a list of tests", line=1,
                                expected="a YAML list, or a mapping with `tests:`")
    return doc

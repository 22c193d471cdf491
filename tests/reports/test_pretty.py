"""``pretty`` (reports/html/format.py): its fast path for flat objects gives json.dumps's own text."""

from __future__ import annotations

import json

import pytest

from eval_pipelines.reports.html.format import pretty


@pytest.mark.parametrize("value", [
    {}, {"expected": "ok c000001", "actual": "ok c000001"},
    {"b": 'quote " newline \n tab \t backslash \\', "a": None, "c": True, "d": False, "e": -5, "é": "ü ✔"},
    {"control": "\x00\x1f", "separator": "\u2028"}, {"big": 10**30},
    # not flat, or not plain JSON scalars: json.dumps itself
    {"score": 0.5}, {"nested": {"a": [1, 2]}}, {1: "int key"}, [1, "x"],
])
def test_pretty_is_json_dumps_indented(value: object) -> None:
    assert pretty(value) == json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)

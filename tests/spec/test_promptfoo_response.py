"""promptfoo configs using the response-field and metric assertion types, through the loader:
each maps onto our grader with promptfoo's defaults (src/assertions/*.ts), or fails in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_pipelines.spec.errors import SpecErrors
from eval_pipelines.spec.loader import load_suite


def load(tmp_path: Path, asserts: str):
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: ['Say {{ word }}']\nproviders: [echo]\ntests:\n  - vars: {word: hello}\n    assert:\n" + asserts)
    return load_suite(tmp_path / "promptfooconfig.yaml")


def assertions(tmp_path: Path, asserts: str) -> list[tuple[str, bool, dict]]:
    suite, _ = load(tmp_path, asserts)
    return [(a.type, a.negate, a.config) for a in suite.tests[0].assertions]


def one_line_error(tmp_path: Path, asserts: str) -> str:
    with pytest.raises(SpecErrors) as caught:
        load(tmp_path, asserts)
    text = str(caught.value)
    assert "Traceback" not in text
    return text.splitlines()[0]


def test_similar_metrics_map_onto_semantic_sim(tmp_path: Path) -> None:
    got = assertions(tmp_path, """
      - {type: similar:cosine, value: Say hello}
      - {type: similar:dot, value: Say hello, threshold: 0.9}
      - {type: not-similar:euclidean, value: 'Say {{ word }}'}
      - {type: similar:euclidean, value: Say hello, threshold: 1.2}
""")
    assert got == [
        ("semantic_sim", False, {"value": "Say hello", "threshold": 0.75, "metric": "cosine"}),
        ("semantic_sim", False, {"value": "Say hello", "threshold": 0.9, "metric": "dot"}),
        ("semantic_sim", True, {"value": "Say hello", "threshold": 0.75, "metric": "euclidean"}),
        ("semantic_sim", False, {"value": "Say hello", "threshold": 1.2, "metric": "euclidean"}),
    ]


@pytest.mark.parametrize("asserts, message", [
    ("      - {type: similar:dot, value: x, threshold: 1.5}\n", "similar:dot: `threshold` above 1 is not supported"),
    ("      - {type: similar:euclidean, value: x, threshold: -1}\n", "`threshold` must be 0 or more"),
    ("      - {type: similar:cosine, value: {a: 1}}\n", "`value` must be text"),
    ("      - {type: similar:manhattan, value: x}\n", "'similar:manhattan' is not supported"),
])
def test_similar_metric_refusals(tmp_path: Path, asserts: str, message: str) -> None:
    assert message in one_line_error(tmp_path, asserts)

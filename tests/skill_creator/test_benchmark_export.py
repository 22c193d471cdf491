"""Issue 32 item 4: ``eval-pipelines export --format skill-creator`` writes skill-creator's
benchmark.json, every documented field present with its type (BENCHMARK_FIELDS is the list of
references/schemas.md and aggregate_benchmark.py, see docs/skill-creator.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from eval_pipelines.cli import EXIT_OK, main
from eval_pipelines.analysis.configurations import stats
from eval_pipelines.reports.skill_creator import BENCHMARK_FIELDS
from tests.skill_creator.support import make_package, respond
from tests.support.fake_openai import FakeOpenAIServer


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
        monkeypatch.delenv(name, raising=False)
    with FakeOpenAIServer(latency_s=0.0) as fake:
        fake.responder = respond
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-32")
        yield fake


def values_at(data: Any, path: str) -> list[Any]:
    """Every value at a dotted path; ``[]`` walks a list, ``<configuration>`` every configuration
    of run_summary, ``<stat>`` each of pass_rate/time_seconds/tokens."""
    found = [data]
    for part in path.split("."):
        many = part.endswith("[]")
        key = part.removesuffix("[]")
        step: list[Any] = []
        for item in found:
            if key == "<configuration>":
                step += [v for k, v in item.items() if k != "delta"]
            elif key == "<stat>":
                step += [item[s] for s in ("pass_rate", "time_seconds", "tokens")]
            else:
                assert key in item, f"{path}: no {key!r} in {sorted(item)}"
                step.append(item[key])
        found = [x for v in step for x in v] if many else step
    return found


def test_benchmark_json_has_every_documented_field_with_its_type(capsys, tmp_path: Path) -> None:
    skill = make_package(tmp_path, settings="trials: 2\n")
    db = tmp_path / "results.duckdb"
    main(["--root", str(tmp_path), "run", str(skill), "--db", str(db)])
    out = tmp_path / "bench"
    capsys.readouterr()
    assert main(["--root", str(tmp_path), "export", "--format", "skill-creator", "--out", str(out),
                 "--db", str(db)]) == EXIT_OK
    benchmark = json.loads((out / "benchmark.json").read_text())
    for path, kind in BENCHMARK_FIELDS.items():
        values = values_at(benchmark, path)
        assert values, f"{path}: no value"
        for value in values:
            assert isinstance(value, kind) and not (kind is int and isinstance(value, bool)), \
                f"{path}: {value!r} is not {kind}"

    # The values: 2 evals x 2 trials x 2 configurations of a chat target (with and without SKILL.md as its
    # system prompt: the baseline of an Agent Skills package by default).
    meta = benchmark["metadata"]
    assert (meta["skill_name"], meta["evals_run"], meta["runs_per_configuration"]) == ("csv-summary", [1, 2], 2)
    assert meta["executor_model"] == "skill-model" and meta["analyzer_model"] == "judge-model"
    runs = benchmark["runs"]
    assert [(r["eval_id"], r["configuration"], r["run_number"]) for r in runs] == [
        (i, c, n) for i in (1, 2) for c in ("with_skill", "without_skill") for n in (1, 2)]
    second = runs[4]
    assert second["eval_name"] == "Eval 2" and runs[0]["eval_name"] == "south region"
    assert {k: second["result"][k] for k in ("pass_rate", "passed", "failed", "total")} == {
        "pass_rate": 0.3333, "passed": 1, "failed": 2, "total": 3}
    assert second["expectations"][1] == {"text": "Shows the sum 30", "passed": False, "evidence": "no sign of item 2"}
    summary = benchmark["run_summary"]
    assert set(summary) == {"with_skill", "without_skill", "delta"}
    assert summary["with_skill"]["pass_rate"] == stats([1.0, 1.0, 0.3333, 0.3333])
    # Filled from the stored rows: the prompt with SKILL.md costs tokens the baseline does not spend.
    assert summary["with_skill"]["tokens"]["mean"] > summary["without_skill"]["tokens"]["mean"]
    assert summary["delta"]["pass_rate"] == "+0.00" and summary["delta"]["tokens"].startswith("+")


def test_stats_are_aggregate_benchmarks() -> None:
    assert stats([]) == {"mean": 0.0, "stddev": 0.0, "min": 0.0, "max": 0.0}
    assert stats([0.5]) == {"mean": 0.5, "stddev": 0.0, "min": 0.5, "max": 0.5}
    assert stats([1.0, 0.0]) == {"mean": 0.5, "stddev": 0.7071, "min": 0.0, "max": 1.0}  # sample stddev


def _row(test_id: str, target: str, trial: int, passed: list[bool], latency_ms: float) -> dict[str, Any]:
    graded = {"expectations": [{"text": f"e{i}", "passed": p, "evidence": "seen"} for i, p in enumerate(passed)]}
    return {"test_id": test_id, "name": None, "target": target, "trial": trial, "verdict": None, "status": "graded",
            "error": None, "latency_ms": latency_ms, "prompt_tokens": 100, "completion_tokens": 20,
            "tool_calls": 3, "graded": json.dumps(graded), "judge_model": "j"}


def test_configurations_are_the_stored_ones_and_delta_is_with_minus_without() -> None:
    from eval_pipelines.reports.skill_creator import build_benchmark

    targets = {"agent": {"name": "agent", "type": "agent", "model": "m"}}
    rows = [_row("1", "agent", 0, [True, True], 2000.0) | {"configuration": "with_skill"},
            _row("1", "agent", 0, [True, False], 1000.0) | {"configuration": "without_skill"}]
    benchmark = build_benchmark(rows, targets, skill_name="s", skill_path="p", timestamp="t")
    assert [r["configuration"] for r in benchmark["runs"]] == ["with_skill", "without_skill"]
    assert list(benchmark["run_summary"]) == ["with_skill", "without_skill", "delta"]
    assert benchmark["run_summary"]["delta"] == {"pass_rate": "+0.50", "time_seconds": "+1.0", "tokens": "+0"}
    # Several targets: each target's runs are a configuration of their own.
    two = build_benchmark([rows[0], rows[0] | {"target": "chat"}], targets, skill_name="s", skill_path="p",
                          timestamp="t")
    assert [r["configuration"] for r in two["runs"]] == ["with_skill/agent", "with_skill/chat"]

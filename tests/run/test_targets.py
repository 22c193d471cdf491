"""The model phase against the local OpenAI-compatible server: cache, trials,
retries, faults, cost limits, concurrency and workspaces (real client, real HTTP)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from eval_pipelines.store.tables import StoredSuite
from tests.support.stages import model_outputs, run_suite
from eval_pipelines.analysis.metrics import pass_at_k, pass_hat_k
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.store.connection import Partition, connect
from eval_pipelines.run.targets import openai_compat
from eval_pipelines.run.targets.config import CommandTargetConfig, OpenAITargetConfig
from tests.support.fake_openai import FakeOpenAIServer

PARTITION = Partition("2026-11-22", "demo@1.0.0")


@pytest.fixture(autouse=True)
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openai_compat, "BACKOFF_BASE_S", 0.01)


def suite_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "eval.yaml"
    path.write_text(body)
    return path


def stored(tmp_path: Path, body: str, server: FakeOpenAIServer, **target: object) -> StoredSuite:
    suite, _ = load_suite(suite_file(tmp_path, body))
    config = OpenAITargetConfig(name="m", model="fake", base_url=server.base_url, **target)
    suite.execution.targets = ["m"]
    return StoredSuite(suite, {"m": config}, tmp_path)


def cases(n: int, assertion: str = "contains", value: str = "ok") -> str:
    lines = ["tests:"]
    for i in range(n):
        lines += [f"  - id: c{i}", f"    input: q{i}", "    assert:",
                  f"      - type: {assertion}", f"        value: {value}"]
    return "\n".join(lines) + "\n"


def run(stored_suite: StoredSuite, db: Path | None = None, **kwargs: object):
    return model_outputs(stored_suite, db, **kwargs)  # type: ignore[arg-type]


def test_second_run_is_served_from_the_cache(tmp_path: Path, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.responder = lambda body: "ok " + body["messages"][-1]["content"]
    db = tmp_path / "c.duckdb"
    s = stored(tmp_path, cases(5), fake_openai, price_input_per_million=1.0)
    first = run(s, db)
    assert fake_openai.request_count == 5 and not any(o.cached for o in first)
    second = run(s, db)
    assert fake_openai.request_count == 5  # zero new requests
    assert all(o.cached for o in second)
    assert [o.output for o in second] == [o.output for o in first]
    assert [o.prompt_tokens for o in second] == [o.prompt_tokens for o in first]
    # Bypassing the cache pays again.
    third = run(s, db, use_cache=False)
    assert fake_openai.request_count == 10 and not any(o.cached for o in third)


def test_cache_key_covers_the_request_and_failures_are_not_cached(tmp_path: Path, fake_openai: FakeOpenAIServer) -> None:
    db = tmp_path / "c.duckdb"
    s = stored(tmp_path, cases(2), fake_openai, max_retries=0)
    fake_openai.fail_plan = ["500"]
    first = run(s, db)
    assert sum(o.error is not None for o in first) == 1
    run(s, db)
    assert fake_openai.request_count == 3  # only the failed call was made again
    s2 = stored(tmp_path, cases(2), fake_openai, max_retries=0, temperature=0.7)
    run(s2, db)
    assert fake_openai.request_count == 5  # other settings, other key
    with connect(db) as con:
        assert con.execute("SELECT count(*) FROM response_cache").fetchone()[0] == 4


def test_cache_off_in_the_suite(tmp_path: Path, fake_openai: FakeOpenAIServer) -> None:
    db = tmp_path / "c.duckdb"
    s = stored(tmp_path, "execution:\n  cache: false\n" + cases(2), fake_openai)
    run(s, db)
    run(s, db)
    assert fake_openai.request_count == 4


def test_trials_give_pass_at_k_and_pass_hat_k_as_the_formulas(tmp_path: Path, fake_openai: FakeOpenAIServer) -> None:
    seen: dict[str, int] = {}

    def alternate(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        seen[prompt] = seen.get(prompt, 0) + 1
        return "ok" if seen[prompt] <= 2 else "no"  # 2 passes of 3 per case

    fake_openai.responder = alternate
    db = tmp_path / "t.duckdb"
    s = stored(tmp_path, "execution:\n  trials:\n    count: 3\n" + cases(2), fake_openai, concurrency=1)
    ctx = run_suite(s, tmp_path, {"model_outputs", "grades", "test_results", "metrics"}, use_cache=False)
    outputs = ctx.outputs()
    assert len(outputs) == 6 and sorted({o.trial for o in outputs}) == [0, 1, 2]
    metrics, per_case = ctx.rows("metrics"), ctx.rows("case_metrics")
    overall = {r["metric"]: r["value"] for r in metrics.to_dict("records") if r["target"] == "*"}
    assert overall["pass_at_1"] == pytest.approx(pass_at_k(3, 2, 1)) == pytest.approx(2 / 3)
    assert overall["pass_at_2"] == pytest.approx(pass_at_k(3, 2, 2)) == pytest.approx(1.0)
    assert overall["pass_hat_3"] == pytest.approx(pass_hat_k(3, 2, 3)) == 0.0  # unbiased: not all 3 passed
    assert overall["case_pass_rate"] == 1.0 and overall["flaky_cases"] == 2  # pass_at_k strategy
    c0 = {r["metric"]: r["value"] for r in per_case.to_dict("records") if r["test_id"] == "c0"}
    assert (c0["trials"], c0["passes"], c0["pass_hat_2"]) == (3, 2, pytest.approx(1 / 3))  # C(2,2)/C(3,2)


def test_cost_limit_stops_further_trials(tmp_path: Path, fake_openai: FakeOpenAIServer) -> None:
    s = stored(tmp_path, "execution:\n  trials:\n    count: 4\n    cost_limit_usd: 0.000001\n" + cases(1),
               fake_openai, concurrency=1, price_input_per_million=1.0, price_output_per_million=1.0)
    outputs = run(s)
    assert len(outputs) == 4  # every trial has a row
    assert fake_openai.request_count == 1
    assert all("cost_limit_usd" in o.error for o in outputs[1:])


def test_suite_retry_setting_overrides_the_target(tmp_path: Path, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.fail_plan = ["500", "500", "500"]
    s = stored(tmp_path, "settings:\n  retry_count: 0\n" + cases(1), fake_openai, max_retries=5)
    (out,) = run(s)
    assert out.error and "500" in out.error and fake_openai.request_count == 1


def test_twenty_percent_server_errors_lose_no_case(tmp_path: Path) -> None:
    with FakeOpenAIServer(fault_rate=0.2, faults=["500"], seed=7) as server:
        s = stored(tmp_path, cases(40), server, max_retries=1)
        ctx = run_suite(s, tmp_path, {"model_outputs", "grades", "test_results"}, use_cache=False)
        outputs, results = ctx.outputs(), ctx.rows("test_results")
    assert len(outputs) == 40 and sorted(o.test_id for o in outputs) == sorted(f"c{i}" for i in range(40))
    assert set(results["status"]) <= {"graded", "error"}
    errors = results[results["status"] == "error"]
    assert (errors["reason"].str.contains("500")).all()
    assert server.request_count > 40  # retries happened


def test_concurrency_overlaps_calls_up_to_the_limit(tmp_path: Path) -> None:
    # 32 calls of 0.2 s at concurrency 8: the server sees several at once, never more than 8.
    # (Counted, not timed: a wall-clock bound breaks on a loaded machine.)
    with FakeOpenAIServer(latency_s=0.2) as server:
        s = stored(tmp_path, cases(32), server, concurrency=8)
        run(s)
    assert server.request_count == 32
    assert 2 <= server.max_in_flight <= 8, server.max_in_flight


WORKSPACE_SUITE = """
workspace:
  template: ./template
  setup:
    script: [python, setup.py]
    timeout_ms: 10000
  teardown:
    script: [python, teardown.py]
tests:
  - id: reads-workspace
    input: hello
    assert:
      - type: contains
        value: "prepared by setup: template file"
"""


def test_workspace_setup_template_and_teardown(tmp_path: Path) -> None:
    (tmp_path / "template").mkdir()
    (tmp_path / "template" / "seed.txt").write_text("template file")
    (tmp_path / "setup.py").write_text(
        "import os, pathlib\nws = pathlib.Path(os.environ['EVAL_WORKSPACE'])\n"
        "(ws / 'ready.txt').write_text('prepared by setup: ' + (ws / 'seed.txt').read_text())\n")
    (tmp_path / "teardown.py").write_text(
        "import os, pathlib\npathlib.Path(os.environ['EVAL_WORKSPACE'], 'done.txt').write_text('bye')\n")
    (tmp_path / "answer.py").write_text(
        "import os, pathlib\nprint(pathlib.Path(os.environ['EVAL_WORKSPACE'], 'ready.txt').read_text())\n")
    suite, _ = load_suite(suite_file(tmp_path, WORKSPACE_SUITE))
    suite.execution.targets = ["cmd"]
    s = StoredSuite(suite, {"cmd": CommandTargetConfig(name="cmd", command=[sys.executable, "answer.py"])},
                             tmp_path)
    folder = tmp_path / "run-ws"
    (out,) = run(s, workspace=folder)
    assert out.error is None and out.output == "prepared by setup: template file"
    assert (folder / "done.txt").read_text() == "bye"  # teardown ran


def test_failing_setup_turns_every_case_into_an_error_row(tmp_path: Path) -> None:
    (tmp_path / "template").mkdir()
    (tmp_path / "setup.py").write_text("import sys\nprint('no database', file=sys.stderr)\nsys.exit(3)\n")
    (tmp_path / "teardown.py").write_text("")
    suite, _ = load_suite(suite_file(tmp_path, WORKSPACE_SUITE + "  - id: second\n    input: x\n"))
    suite.execution.targets = ["cmd"]
    s = StoredSuite(suite, {"cmd": CommandTargetConfig(name="cmd", command=[sys.executable, "-c", "1"])},
                             tmp_path)
    outputs = run(s, workspace=tmp_path / "ws")
    assert len(outputs) == 2
    assert all("setup exited with 3: no database" in o.error for o in outputs)


def test_the_core_does_not_import_dagster() -> None:
    import subprocess

    code = "import sys, eval_pipelines.pipeline.stages, eval_pipelines.run.cache; print('dagster' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.slow
def test_a_killed_run_does_not_pay_again_for_finished_calls(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess

    from eval_pipelines.store.connection import connect as db_connect

    n = 60
    with FakeOpenAIServer(latency_s=0.1) as server:
        skill = tmp_path / "skills" / "paid"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text("---\nname: paid\ndescription: d\nversion: 1.0.0\n---\nAnswer.\n")
        (skill / "eval.yaml").write_text(cases(n))
        (skill / "targets.yaml").write_text(
            f"targets:\n  - name: m\n    type: openai\n    model: fake\n    base_url: {server.base_url}\n"
            "    concurrency: 2\n")
        db = tmp_path / "k.duckdb"
        argv = [sys.executable, "-m", "eval_pipelines.cli", "--root", str(tmp_path), "run", str(skill),
                "--db", str(db)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while server.request_count < 30 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)  # mid model phase, no chance to clean up
        proc.wait()
        first = server.request_count
        assert 30 <= first < n
        with db_connect(db) as con:
            cached = con.execute("SELECT count(*) FROM response_cache").fetchone()[0]
            assert con.execute("SELECT count(*) FROM model_outputs").fetchone()[0] == 0  # nothing half-written
        assert cached > 0  # flushed while the run was going
        server.reset_counts()
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        assert server.request_count == n - cached  # only calls that had not been stored
        with db_connect(db) as con:
            rows = con.execute("SELECT count(*), count(*) FILTER (WHERE cached) FROM model_outputs").fetchone()
        assert rows == (n, cached)

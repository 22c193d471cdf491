"""The nightly and agent benchmarks' parts (no timing assertions: figures live in docs/benchmarks-*.md).

The nightly batch itself needs a daemon and a schedule tick (minutes), so it is not run here;
its project, its one-tick cron and the benchmark server's scripted tool calls are. The agent
benchmark checks its own request and tool-call counts on every run (benchmarks/agent.py).
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timezone
from pathlib import Path

import openai
import pytest
import yaml
from aiohttp.test_utils import TestServer

from benchmarks import suites
from benchmarks.nightly import BatchFigures, RunFigures, tick_cron, write_nightly_project
from benchmarks.nightly_doc import summary
from benchmarks.server import build_app


def test_nightly_figures_are_per_skill_version_whatever_the_runs() -> None:
    """A run over two versions and a run of one: CPU, model phase and overhead per version."""
    runs = [RunFigures(queued_s=1.0, worker_wall_s=10.0, model_phases_s=[1.0, 3.0]),
            RunFigures(queued_s=2.0, worker_wall_s=5.0, model_phases_s=[2.0])]
    row = summary(BatchFigures(versions=3, cases=40, wall_s=12.0, statuses={"SUCCESS": 2}, worker_cpu_s=3.0,
                               tree_cpu_s=6.0, runs=runs), model_cpu_s=0.5)
    assert row["tree_cpu_per_run_s"] == 2.0 and row["overhead_cpu_per_run_s"] == 1.5
    assert row["median_model_phase_s"] == 2.0 and row["median_versions_per_run"] == 1.5
    assert row["median_overhead_wall_s"] == 3.0  # (10 - 4) / 2 and (5 - 2) / 1
    assert row["tree_cpu_per_case_ms"] == 50.0


def test_nightly_project_holds_one_loadable_version_per_skill_and_the_projects_instance(tmp_path: Path) -> None:
    from eval_pipelines.formats.loader import load_skill
    from eval_pipelines.pipeline.project import ProjectPaths

    keys = write_nightly_project(tmp_path, 3, 5)
    assert keys == [f"night-00{i}@{suites.BENCH_VERSION}" for i in range(3)]
    paths = ProjectPaths.from_root(tmp_path, str(tmp_path / "x.duckdb"))
    prompts = []
    for key in keys:
        name, version = key.split("@")
        loaded = load_skill(tmp_path / "skills" / name / version, datasets_dir=paths.datasets_dir,
                            extract_dir=paths.work_dir, project_targets=paths.project_targets())
        assert len(loaded.suite.tests) == 5 and set(loaded.targets) == {"bench"}
        prompts.append(loaded.suite.tests[0])
    # Each skill's prompts are its own: no skill is answered from another's cache entries.
    assert len({json.dumps(case.model_dump(mode="json"), sort_keys=True, default=str) for case in prompts}) == 3
    # The project's own instance settings: queued runs, four at once.
    assert yaml.safe_load((tmp_path / "dagster.yaml").read_text())["concurrency"]["runs"]["max_concurrent_runs"] == 4


def test_tick_cron_fires_once_a_day_at_a_minute_ahead() -> None:
    minute, hour, *rest = tick_cron(90).split()
    assert rest == ["*", "*", "*"]
    now = datetime.now(timezone.utc)
    ahead = (int(hour) * 60 + int(minute) - (now.hour * 60 + now.minute)) % (24 * 60)
    assert 2 <= ahead <= 3


@pytest.fixture
def bench_url():
    loop = asyncio.new_event_loop()
    server = TestServer(build_app(0), host="127.0.0.1")
    loop.run_until_complete(server.start_server())
    yield loop, f"http://127.0.0.1:{server.port}"
    loop.run_until_complete(server.close())
    loop.close()


def test_bench_server_answers_an_agents_turns_with_the_tool_plan_then_the_text(bench_url) -> None:
    loop, root = bench_url
    plan = [{"name": "list_files", "arguments": {"path": "."}}, {"name": "run_command", "arguments": {"command": "echo"}}]
    tools = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
             for n in ("list_files", "run_command")]

    async def turns() -> list:
        client = openai.AsyncOpenAI(api_key="bench", base_url=f"{root}/v1", max_retries=0)
        async with client:
            await client.post(f"{root}/config", cast_to=object, body={"tool_plan": plan})  # the server's own route
            messages = [{"role": "user", "content": "Reply with the code: c7"}]
            answers = []
            for _ in range(3):
                message = (await client.chat.completions.create(model="m", messages=messages, tools=tools)).choices[0].message
                answers.append(message)
                messages.append(message.model_dump(exclude_none=True))
                for call in message.tool_calls or []:
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": "done"})
            plain = await client.chat.completions.create(model="m", messages=messages[:1])
            return answers, plain

    answers, plain = loop.run_until_complete(turns())
    assert [a.tool_calls[0].function.name for a in answers[:2]] == ["list_files", "run_command"]
    assert json.loads(answers[1].tool_calls[0].function.arguments) == {"command": "echo"}
    assert answers[2].tool_calls is None and answers[2].content == "ok c7"
    assert plain.choices[0].message.content == "ok c7"  # no tools offered: the plain answer


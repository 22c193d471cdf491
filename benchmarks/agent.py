"""The agent target's own cost: overhead per turn and per tool call, beside raw model calls.

    python -m benchmarks.agent                 # 20 cases, 3 repeats, 50 ms latency
    python -m benchmarks.agent --out X.md

One skill package run through ``run_model_phase`` (the model stage every path
uses) against the benchmark server (benchmarks/server.py), which answers an
agent's turn with the next tool call of a fixed plan, then with the text the
case's ``equals`` assertion expects. Concurrency 1, so wall time per case is the
sum of its turns. Plans:

- ``no tools``: one turn per case (the agent answers at once);
- ``file tools``: ``list_files``, ``read_file`` (the skill's SKILL.md), ``write_file``, then the answer: 3 tool calls, 4 turns;
- ``run_command``: two ``echo`` commands in the sandbox, then the answer: 2 tool calls, 3 turns.

Raw: the same number of model requests through the plain ``openai`` target
(one case per request). Figures are medians of the repeats, each in the
benchmark's own process: wall (``perf_counter``), CPU (``process_time``) and the
sandbox's CPU (``RUSAGE_CHILDREN``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from benchmarks import suites
from benchmarks.machine import cpu_model
from benchmarks.server import MODEL, BenchServer

REPO = Path(__file__).resolve().parent.parent
SKILL = "agent-bench"
PLANS = {
    "no tools": [],
    "file tools": [{"name": "list_files", "arguments": {"path": "."}},
                   {"name": "read_file", "arguments": {"path": f"skills/{SKILL}/SKILL.md"}},
                   {"name": "write_file", "arguments": {"path": "notes.txt", "content": "checked"}}],
    "run_command": [{"name": "run_command", "arguments": {"command": "echo one"}},
                    {"name": "run_command", "arguments": {"command": "echo two"}}],
}


def log(message: str) -> None:
    print(f"[{datetime.now():%H:%M:%S}] {message}", flush=True)


def write_package(root: Path, name: str, target: str, cases: int) -> Path:
    """A skill package whose suite runs ``cases`` exact-match cases on ``target``."""
    folder = root / "skills" / name / suites.BENCH_VERSION
    folder.mkdir(parents=True)
    (root / "datasets").mkdir(exist_ok=True)
    dataset = root / "datasets" / f"{name}.jsonl"
    with dataset.open("w") as out:
        for i in range(cases):
            test_id, prompt, expected = suites.case(i)
            out.write(json.dumps({"id": test_id, "input": prompt,
                                  "assert": [{"type": "equals", "value": expected}]}) + "\n")
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Agent benchmark skill.\n"
                                     f"version: {suites.BENCH_VERSION}\n---\nAnswer with 'ok' and the code.\n")
    (folder / "eval.yaml").write_text(f"name: {name}\nexecution:\n  targets: [{target}]\n  trials:\n    count: 1\n"
                                      f"tests:\n  - file://datasets/{dataset.name}\n")
    return folder


def write_project(root: Path, cases: int, raw_cases: int) -> dict[str, Path]:
    (root / "targets.yaml").write_text(
        "targets:\n"
        f"  - name: agent\n    type: agent\n    model: {MODEL}\n    api_key_env: BENCH_API_KEY\n"
        "    base_url_env: BENCH_BASE_URL\n    concurrency: 1\n    max_retries: 0\n"
        f"  - name: chat\n    type: openai\n    model: {MODEL}\n    api_key_env: BENCH_API_KEY\n"
        "    base_url_env: BENCH_BASE_URL\n    concurrency: 1\n    max_retries: 0\n    temperature: 0\n")
    return {"agent": write_package(root, SKILL, "agent", cases),
            "raw": write_package(root, "raw-bench", "chat", raw_cases)}


def load(root: Path, folder: Path):  # noqa: ANN201
    from eval_pipelines.formats.loader import load_skill
    from eval_pipelines.pipeline.project import ProjectPaths

    paths = ProjectPaths.from_root(root, str(root / "unused.duckdb"))
    return load_skill(folder, datasets_dir=paths.datasets_dir, extract_dir=paths.work_dir,
                      project_targets=paths.project_targets())


def timed_phase(loaded, server: BenchServer, env: dict[str, str], expected_requests: int) -> dict[str, float]:  # noqa: ANN001
    from eval_pipelines.run.engine import run_model_phase

    server.reset()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    started, cpu = time.perf_counter(), time.process_time()
    outputs = asyncio.run(run_model_phase(loaded.suite, loaded.targets, loaded.package.root, env))
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    bad = [o for o in outputs if o.error or o.output != suites.case(int(o.test_id[5:]))[2]]
    if bad or server.requests() != expected_requests:
        raise RuntimeError(f"{len(bad)} wrong outputs (first: {bad[0].error or bad[0].output!r}) "
                           f"or {server.requests()} requests for {expected_requests}" if bad else
                           f"{server.requests()} requests for {expected_requests}")
    return {"wall_s": wall, "cpu_s": cpu,
            "child_cpu_s": (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime),
            "tool_calls": sum(o.tool_calls or 0 for o in outputs)}


def measure(server: BenchServer, work: Path, cases: int, repeats: int) -> dict:
    root = work / "agent"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    turns_most = 1 + max(len(p) for p in PLANS.values())
    folders = write_project(root, cases, cases * turns_most)
    env = {"BENCH_BASE_URL": server.base_url, "BENCH_API_KEY": "bench"}
    agent, raw = load(root, folders["agent"]), load(root, folders["raw"])
    results: dict[str, list[dict]] = {name: [] for name in PLANS}
    results["raw"] = []
    server.set_tool_plan([])
    timed_phase(agent, server, env, cases)  # warm-up: imports (Pydantic AI) and connections
    timed_phase(raw, server, env, cases * turns_most)
    for repeat in range(repeats):
        for name, plan in PLANS.items():
            server.set_tool_plan(plan)
            results[name].append(timed_phase(agent, server, env, cases * (1 + len(plan))))
        server.set_tool_plan([])
        results["raw"].append(timed_phase(raw, server, env, cases * turns_most))
        log(f"repeat {repeat + 1}/{repeats} done")
    raw_requests = cases * turns_most
    med = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in results.items()}
    per_request = {"wall_ms": med["raw"]["wall_s"] * 1000 / raw_requests,
                   "cpu_ms": med["raw"]["cpu_s"] * 1000 / raw_requests}
    rows = {}
    base = None
    for name, plan in PLANS.items():
        m, turns, calls = med[name], 1 + len(plan), len(plan)
        row = {"turns": turns, "tool_calls": calls,
               "wall_ms_per_case": m["wall_s"] * 1000 / cases, "cpu_ms_per_case": m["cpu_s"] * 1000 / cases,
               "sandbox_cpu_ms_per_case": m["child_cpu_s"] * 1000 / cases}
        row["raw_wall_ms_same_requests"] = turns * per_request["wall_ms"]
        row["wall_ratio_to_raw"] = row["wall_ms_per_case"] / row["raw_wall_ms_same_requests"]
        row["overhead_wall_ms_per_turn"] = (row["wall_ms_per_case"] - row["raw_wall_ms_same_requests"]) / turns
        row["overhead_cpu_ms_per_turn"] = (row["cpu_ms_per_case"] - turns * per_request["cpu_ms"]) / turns
        if base is None:
            base = row
        else:  # a tool call: its execution plus the extra turn's loop work, beyond that turn's model request
            for unit in ("wall", "cpu"):
                extra = row[f"{unit}_ms_per_case"] - base[f"{unit}_ms_per_case"] - calls * per_request[f"{unit}_ms"]
                row[f"overhead_{unit}_ms_per_tool_call"] = extra / calls
        rows[name] = row
    return {"cases": cases, "repeats": repeats, "raw_requests": raw_requests, "raw_per_request": per_request,
            "plans": rows, "samples": results}


def write_doc(out: Path, figures: dict, meta: dict) -> None:
    raw = figures["raw_per_request"]
    lines = [
        "# Agent target overhead",
        "",
        "Written by `python -m benchmarks.agent` from one run (medians of "
        f"{figures['repeats']} repeats; no figure edited by hand). {figures['cases']} cases per plan, concurrency 1,",
        f"a local OpenAI-compatible server answering after {meta['latency_ms']:g} ms that scripts the agent's tool "
        "calls (benchmarks/server.py, `tool_plan`). The agent is the `type: agent` target (Pydantic AI loop, "
        "a fresh workspace per case, `run_command` in the sandbox); raw is the plain `openai` target making "
        f"the same kind of request ({figures['raw_requests']} requests, one per case).",
        "",
        f"Machine: {meta['cpu']}, {meta['cores']} cores, Python {meta['python']}. Load average (1, 5, 15 min) at "
        f"start {meta['load_start']}, at end {meta['load_end']} (a shared machine: wall figures are upper bounds).",
        "",
        f"Raw model call (openai target): {raw['wall_ms']:.1f} ms wall, {raw['cpu_ms']:.2f} ms CPU per request.",
        "",
        "| plan | turns | tool calls | wall per case | vs raw calls (same requests) | CPU per case | sandbox CPU per case "
        "| overhead per turn (wall / CPU) | overhead per tool call (wall / CPU) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in figures["plans"].items():
        per_call = (f"{r['overhead_wall_ms_per_tool_call']:.1f} ms / {r['overhead_cpu_ms_per_tool_call']:.1f} ms"
                    if "overhead_wall_ms_per_tool_call" in r else "-")
        lines.append(
            f"| {name} | {r['turns']} | {r['tool_calls']} | {r['wall_ms_per_case']:.1f} ms | "
            f"{r['raw_wall_ms_same_requests']:.1f} ms ({r['wall_ratio_to_raw']:.2f}x) | {r['cpu_ms_per_case']:.1f} ms | "
            f"{r['sandbox_cpu_ms_per_case']:.1f} ms | {r['overhead_wall_ms_per_turn']:.1f} ms / "
            f"{r['overhead_cpu_ms_per_turn']:.1f} ms | {per_call} |")
    lines += [
        "",
        "Overhead per turn = (agent case - the same number of raw requests) / turns: the agent loop, "
        "the workspace staged and removed per case, the transcript recorded. Overhead per tool call = "
        "(case with k tool calls - case without tools - k raw requests) / k: the tool itself plus the loop's "
        "work for the extra turn. The sandbox's CPU (`run_command`'s processes) is counted apart, from "
        "`RUSAGE_CHILDREN`.",
        "",
    ]
    out.write_text("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--work-dir", default=os.path.join(tempfile.gettempdir(), "eval-pipelines-agent-bench"))
    parser.add_argument("--out", default=str(REPO / "docs" / "benchmarks-agent.md"))
    args = parser.parse_args(argv)
    meta = {"cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
            "latency_ms": args.latency_ms, "load_start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
            "started": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    with BenchServer(latency_ms=args.latency_ms) as server:
        figures = measure(server, Path(args.work_dir), args.cases, args.repeats)
    meta["load_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps({"machine": meta, **figures}, indent=1))
    write_doc(out, figures, meta)
    log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Generated benchmark suites: the same N cases for eval-pipelines, promptfoo and inspect_ai.

Case i asks "Reply with the code for case i: c<i>"; the benchmark server answers
"ok c<i>", and every tool checks it with one exact-match assertion (ours
``equals``, promptfoo ``equals``, inspect ``exact()``), so all three do the same
work per case.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from benchmarks.server import MODEL

BENCH_VERSION = "1.0.0"


def case(i: int) -> tuple[str, str, str]:
    code = f"c{i:06d}"
    return f"case-{i:06d}", f"Reply with the code for case {i}: {code}", f"ok {code}"


def skill_name(n: int) -> str:
    return f"bench-{n}"


def write_project(root: Path, n: int, concurrency: int = 16) -> str:
    """A project folder (skills/, datasets/) holding one skill version with N cases.

    Returns the partition's skill version key (``bench-N@1.0.0``).
    """
    name = skill_name(n)
    skill = root / "skills" / name / BENCH_VERSION
    skill.mkdir(parents=True, exist_ok=True)
    (root / "datasets").mkdir(parents=True, exist_ok=True)
    dataset = root / "datasets" / f"bench_{n}.jsonl"
    with dataset.open("w") as out:
        for i in range(n):
            test_id, prompt, expected = case(i)
            out.write(json.dumps({"id": test_id, "input": prompt,
                                  "assert": [{"type": "equals", "value": expected}]}) + "\n")
    (skill / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: Benchmark skill with {n} cases.\nversion: {BENCH_VERSION}\n---\n"
        "Answer with 'ok' and the code.\n")
    (skill / "eval.yaml").write_text(
        f"name: {name}\ndescription: {n} generated exact-match cases\nexecution:\n  targets: [bench]\n  trials:\n    count: 1\n"
        f"tests:\n  - file://datasets/{dataset.name}\n")
    (skill / "targets.yaml").write_text(
        "targets:\n  - name: bench\n    type: openai\n    model: " + MODEL + "\n"
        "    api_key_env: BENCH_API_KEY\n    base_url_env: BENCH_BASE_URL\n"
        f"    concurrency: {concurrency}\n    temperature: 0\n    max_retries: 4\n")
    return f"{name}@{BENCH_VERSION}"


def write_promptfoo(root: Path, n: int, base_url: str) -> Path:
    """promptfooconfig.yaml + tests.csv (promptfoo's ``__expected`` column convention)."""
    root.mkdir(parents=True, exist_ok=True)
    with (root / "tests.csv").open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["prompt", "__expected"])
        for i in range(n):
            _, prompt, expected = case(i)
            writer.writerow([prompt, f"equals:{expected}"])
    config = {
        "description": f"bench {n}",
        "prompts": ["{{prompt}}"],
        "providers": [{"id": f"openai:chat:{MODEL}",
                       "config": {"apiBaseUrl": base_url, "apiKey": "bench", "temperature": 0}}],
        "tests": "file://tests.csv",
    }
    path = root / "promptfooconfig.yaml"
    path.write_text(json.dumps(config, indent=2))  # JSON is YAML
    return path


def write_inspect(root: Path, n: int) -> Path:
    """An inspect_ai task: generate() then exact() against the same answers."""
    root.mkdir(parents=True, exist_ok=True)
    with (root / "samples.jsonl").open("w") as out:
        for i in range(n):
            test_id, prompt, expected = case(i)
            out.write(json.dumps({"id": test_id, "input": prompt, "target": expected}) + "\n")
    path = root / "bench_task.py"
    path.write_text(
        "from inspect_ai import Task, task\n"
        "from inspect_ai.dataset import json_dataset\n"
        "from inspect_ai.scorer import exact\n"
        "from inspect_ai.solver import generate\n\n\n"
        "@task\n"
        "def bench():\n"
        "    return Task(dataset=json_dataset('samples.jsonl'), solver=[generate()], scorer=exact())\n")
    return path

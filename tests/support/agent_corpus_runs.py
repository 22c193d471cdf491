"""Runs of the real skill packages of the corpus with the agent target, in worker processes
(tests/run/agent/test_agent_corpus.py).

Each worker starts its own fake OpenAI server, points the environment at it and runs its share of
the packages one after the other with the real command (`eval-pipelines run`) into ONE DuckDB file
of its own; it returns, per package, the run id, the exit code and the requests its server got
during that run. Two workers halve the wall time of the ~50 runs (each run is about one second of
mostly waiting: the agent's turns and the sandboxed command) without changing what a run does.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

STANDIN = "mkdir -p out\nfind . -type f | sort > out/standin.txt\ncat out/standin.txt\n"
WRITTEN = "The stand-in ran; see out/standin.txt."


def _runnable(item: Any, evals_file: Path) -> bool:
    """An eval the loader runs (not kept as an error row): it has a task and its input files exist,
    looked up as the loader does (from the skill folder, the evals folder or the repository root)."""
    if not isinstance(item, dict) or not (item.get("prompt") or item.get("input")):
        return False
    folders = [evals_file.parent.parent, evals_file.parent, *evals_file.parents]
    for entry in item.get("files") or []:
        path = entry.get("path") if isinstance(entry, dict) else entry
        if not isinstance(path, str) or not any((folder / path).exists() for folder in folders):
            return False
    return True


def one_eval(evals_file: Path) -> None:
    """Keep one runnable eval of the copy: the first naming input files, else the first."""
    data = json.loads(evals_file.read_text(encoding="utf-8-sig"))
    wrapper = None if isinstance(data, list) else next(k for k in ("evals", "cases", "test_cases") if k in data)
    items = data if wrapper is None else data[wrapper]
    runnable = [e for e in items if _runnable(e, evals_file)] or items
    chosen = [next((e for e in runnable if isinstance(e, dict) and e.get("files")), runnable[0])]
    if wrapper is None:
        data = chosen
    else:
        data[wrapper] = chosen
    evals_file.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")


def package_copy(corpus: Path, folder: Path, base: Path) -> Path:
    """A copy of the package (its whole repository folder) under `base`, cut down to one eval."""
    top = folder.relative_to(corpus).parts[0]
    if not (base / top).exists():
        shutil.copytree(corpus / top, base / top)
    copy = base / folder.relative_to(corpus)
    one_eval(min(copy.rglob("evals.json"), key=lambda p: (len(p.parts), str(p))))
    # Trigger sets (a 20-query file would add 60 agent runs) are tested in test_trigger_runs.py.
    for trigger_set in [p for p in copy.rglob("*.json") if p.name.startswith("trigger")]:
        trigger_set.unlink()
    return copy


def run_packages(corpus: str, folders: list[str], base: str, project_targets: str) -> dict[str, Any]:
    """Worker: run each package (a folder of the corpus) and return {folder: run record}."""
    from eval_pipelines.cli import main
    from eval_pipelines.formats.loader import load_skill
    from tests.formats.test_skills_corpus import TARGETS
    from tests.support.agent_skill import ScriptedAgent
    from tests.support.fake_openai import FakeOpenAIServer
    from tests.support.field_projects import sql

    work = Path(base)
    project = work / "project"
    project.mkdir(parents=True)
    (project / "targets.yaml").write_text(project_targets)
    db = work / "results.duckdb"
    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
        os.environ.pop(name, None)
    os.environ["OPENAI_API_KEY"] = "sk-operator-SECRET-corpus"
    records: dict[str, Any] = {}
    with FakeOpenAIServer(latency_s=0.0) as server:
        os.environ["OPENAI_BASE_URL"] = server.base_url
        for i, raw in enumerate(folders):
            copy = package_copy(Path(corpus), Path(raw), work / "copies")
            loaded = load_skill(copy, datasets_dir=None, extract_dir=work / f"x{i}", project_targets=TARGETS)
            skill_dir = loaded.package.skill_folder
            (skill_dir / "scripts").mkdir(exist_ok=True)
            (skill_dir / "scripts" / "standin.sh").write_text(STANDIN)
            name = loaded.package.name
            server.requests.clear()
            ScriptedAgent(server, [
                ("list_files", {"path": "."}),
                ("read_file", {"path": f"skills/{name}/SKILL.md"}),
                ("run_command", {"command": f"sh skills/{name}/scripts/standin.sh"}),
                ("write_file", {"path": "out/result.md", "content": WRITTEN}),
                "Done: out/result.md written.",
            ])
            seen = {r for (r,) in sql(db, "SELECT DISTINCT run_id FROM model_outputs")} if db.exists() else set()
            code = main(["--root", str(project), "run", str(copy), "--db", str(db), "--configurations", "with_skill", "--no-cache", "-q",
                         "--no-progress"])
            new = {r for (r,) in sql(db, "SELECT DISTINCT run_id FROM model_outputs")} - seen
            records[raw] = {"db": str(db), "copy": str(copy), "run_ids": sorted(new), "exit_code": code,
                            "requests": list(server.requests)}
    return records

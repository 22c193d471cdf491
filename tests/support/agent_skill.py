"""A skill package run by an agent target against the fake OpenAI server (issue 31).

``make_agent_project`` writes a project: ``targets.yaml`` with an agent target (``default``) and a
judge, and ``skills/demo/1.0.0/`` with SKILL.md (its body holds ``BODY_MARK``), a bundled script,
a reference, and ``evals/evals.json`` whose eval takes a text file, a directory and a binary file.

``ScriptedAgent`` answers the agent's requests as a model would, one step per request (the step is
the number of assistant messages already in the conversation): list the files, read SKILL.md, run
the bundled script, write a file, answer. Requests without tools are the judge's: every criterion
gets the top score. The server's recorded requests show what reached the model and the judge.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

from tests.support.fake_openai import FakeOpenAIServer

BODY_MARK = "BODY-MARK-7f3a: run scripts/inventory.py on the input files"
REFERENCE_MARK = "REFERENCE-MARK-91c2"
BINARY = bytes(range(256)) * 4 + b"\0PDF-ish\0"

TARGETS = """\
targets:
  - name: default
    type: agent
    model: scripted-agent
    max_retries: 0
    max_turns: 12
    max_tool_calls: 20
    timeout_s: 120
    command_timeout_s: 60
    price_input_per_million: 1.0
    price_output_per_million: 2.0
  - name: judge
    type: openai
    model: judge-model
    max_retries: 0
"""

SKILL_MD = f"""---
name: demo
description: Takes stock of input files and writes a JSON inventory.
version: 1.0.0
---
# Inventory

{BODY_MARK}: `python3 skills/demo/scripts/inventory.py evals/files > out/report.json`.
Read references/format.md for the report's format.
"""

INVENTORY = r'''
import hashlib, json, os, sys
top = sys.argv[1]
files = []
for folder, dirs, names in os.walk(top):
    dirs.sort()
    for name in sorted(names):
        path = os.path.join(folder, name)
        data = open(path, "rb").read()
        files.append({"path": path, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
print(json.dumps({"files": files, "count": len(files)}))
'''

EVALS = {
    "skill_name": "demo",
    "evals": [{
        "id": 1,
        "prompt": "Take stock of the input files.",
        "expected_output": "A JSON inventory of every input file in out/report.json.",
        "files": ["evals/files/notes.txt", "evals/files/tree", "evals/files/scan.bin"],
        "expectations": ["out/report.json lists every input file", "The skill's script was run"],
    }],
}


def make_agent_project(root: Path, *, script: str = INVENTORY, evals: dict | None = None,
                       targets: str = TARGETS) -> Path:
    """The project folder (targets.yaml) and its skill package; returns the package folder."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "targets.yaml").write_text(targets)
    skill = root / "skills" / "demo" / "1.0.0"
    (skill / "scripts").mkdir(parents=True)
    (skill / "references").mkdir()
    (skill / "evals" / "files" / "tree" / "sub").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD)
    (skill / "scripts" / "inventory.py").write_text(script)
    (skill / "references" / "format.md").write_text(f"{REFERENCE_MARK}: one object per file.\n")
    (skill / "evals" / "files" / "notes.txt").write_text("alpha beta gamma\n")
    (skill / "evals" / "files" / "tree" / "a.csv").write_text("x,y\n1,2\n")
    (skill / "evals" / "files" / "tree" / "sub" / "b.md").write_text("# b\n")
    (skill / "evals" / "files" / "scan.bin").write_bytes(BINARY)
    (skill / "evals" / "evals.json").write_text(json.dumps(evals or EVALS, indent=2))
    return skill


def default_steps(command: str) -> list[tuple[str, dict[str, Any]] | str]:
    return [
        ("list_files", {"path": "."}),
        ("read_file", {"path": "skills/demo/SKILL.md"}),
        ("run_command", {"command": command}),
        ("write_file", {"path": "out/notes.md", "content": "Inventory written by the demo skill."}),
        "Done: out/report.json holds the inventory.",
    ]


INVENTORY_COMMAND = "mkdir -p out && python3 skills/demo/scripts/inventory.py evals/files > out/report.json && cat out/report.json"


class ScriptedAgent:
    """The fake server's responder: the agent's steps in order, the judge's top scores."""

    def __init__(self, server: FakeOpenAIServer, steps: list | None = None) -> None:
        self.server = server
        self.steps = steps or default_steps(INVENTORY_COMMAND)
        server.responder = self.answer

    def answer(self, body: dict[str, Any]) -> Any:
        if not body.get("tools"):
            return judge_reply(body)
        step = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")
        item = self.steps[min(step, len(self.steps) - 1)]
        if isinstance(item, str):
            return item
        name, args = item
        return {"tool_calls": [{"name": name, "arguments": args}]}

    def agent_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.server.requests if r and r.get("tools")]

    def judge_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.server.requests if r and "messages" in r and not r.get("tools")]


def judge_reply(body: dict[str, Any]) -> str:
    prompt = "\n".join(str(m.get("content")) for m in body.get("messages") or [])
    if "## Expectations" in prompt:
        listed = re.findall(r"^\d+\. (.+)$", prompt.split("## Expectations", 1)[1].split("## Response Format")[0],
                            re.MULTILINE)
        return json.dumps({"expectations": [{"text": t, "passed": True, "evidence": "met"} for t in listed]})
    return json.dumps({"score": 1.0, "passed": True, "reasoning": "meets the criteria"})


def tool_messages(request: dict[str, Any]) -> list[str]:
    return [str(m.get("content")) for m in request.get("messages") or [] if m.get("role") == "tool"]


Check = Callable[[dict[str, Any]], bool]

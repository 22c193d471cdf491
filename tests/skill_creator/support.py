"""A chat-target skill package with evals.json and a judge that plants expectation verdicts.

The judge (the fake OpenAI server's responder) passes an expectation whose text holds ``MET``
and fails the others, with evidence naming the expectation's number; the target answers
``answer to: <prompt>``.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

TARGETS = """\
targets:
  - {name: default, type: openai, model: skill-model, max_retries: 0}
  - {name: judge, type: openai, model: judge-model, max_retries: 0}
"""

EVALS = {
    "skill_name": "csv-summary",
    "evals": [
        {"id": 1, "name": "south region", "prompt": "Which region sold most?",
         "expected_output": "South.", "expectations": ["MET names the south region", "MET gives 20"]},
        {"id": 2, "prompt": "Total sales?",
         "expectations": ["MET gives a number", "Shows the sum 30", "Mentions both regions"]},
    ],
}


def make_package(root: Path, evals: dict | None = None, settings: str | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    skill = root / "skills" / "csv-summary" / "1.0.0"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text(textwrap.dedent("""\
        ---
        name: csv-summary
        description: Summarises CSV files.
        version: 1.0.0
        ---
        Summarise the CSV you are given.
    """), encoding="utf-8")
    (skill / "evals" / "evals.json").write_text(json.dumps(evals or EVALS, indent=2), encoding="utf-8")
    if settings is not None:
        (skill / "eval-pipelines.yaml").write_text(settings, encoding="utf-8")
    return skill


def is_judge(body: dict[str, Any]) -> bool:
    return body.get("model") == "judge-model"


def respond(body: dict[str, Any]) -> str:
    prompt = str((body.get("messages") or [{}])[-1].get("content"))
    if not is_judge(body):
        return f"answer to: {prompt}"
    section = prompt.split("## Expectations", 1)[1].split("## Response Format")[0]
    listed = re.findall(r"^(\d+)\. (.+)$", section, re.MULTILINE)
    return json.dumps({"expectations": [
        {"text": text, "passed": "MET" in text,
         "evidence": f"found item {n} in the answer" if "MET" in text else f"no sign of item {n}"}
        for n, text in listed]})

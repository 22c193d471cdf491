"""A skill package with a trigger set, run against the fake OpenAI server (issue 32 item 5).

``make_trigger_project`` writes the agent project of ``agent_skill`` (skill ``demo``) plus
``evals/trigger-evals.json``: 10 queries that should trigger and 10 that should not, and an
``eval-pipelines.yaml`` with ``triggers:`` settings. ``PlantedTriggers`` answers the agent's
requests: for a query in ``loads`` the first turn reads ``skills/demo/SKILL.md``, for the others it
answers at once; judge requests get top marks. Planted: 9 of 10 should-trigger queries load the
skill, 1 of 10 should-not does, so precision = recall = accuracy = 0.9.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.agent_skill import judge_reply, make_agent_project
from tests.support.fake_openai import FakeOpenAIServer, last_user_message

SHOULD = [f"Take stock of the files in folder {i} and write an inventory" for i in range(10)]
SHOULD_NOT = [f"What is the capital of country number {i}?" for i in range(10)]
LOADS = set(SHOULD[:9]) | {SHOULD_NOT[0]}
SETTINGS = """\
triggers:
  runs: {runs}
  max_turns: 2
  project_skills: false
  distractors:
    - {{name: pdf-forms, description: Fills in PDF forms.}}
    - {{name: slide-maker, description: Makes slide decks from outlines.}}
  min_accuracy: {min_accuracy}
"""


def make_trigger_project(root: Path, runs: int = 3, min_accuracy: float = 0.8, targets: str | None = None) -> Path:
    skill = make_agent_project(root, **({"targets": targets} if targets else {}))
    queries = [{"query": q, "should_trigger": True} for q in SHOULD] + \
              [{"query": q, "should_trigger": False} for q in SHOULD_NOT]
    (skill / "evals" / "trigger-evals.json").write_text(json.dumps(queries, indent=1))
    (skill / "eval-pipelines.yaml").write_text(SETTINGS.format(runs=runs, min_accuracy=min_accuracy))
    return skill


class PlantedTriggers:
    def __init__(self, server: FakeOpenAIServer, loads: set[str] = LOADS) -> None:
        self.server = server
        self.loads = loads
        server.responder = self.answer

    def answer(self, body: dict[str, Any]) -> Any:
        if not body.get("tools"):
            return judge_reply(body)
        query = next((m.get("content") for m in body.get("messages") or [] if m.get("role") == "user"), "")
        if query in self.loads and not any(m.get("role") == "assistant" for m in body["messages"]):
            return {"tool_calls": [{"name": "read_file", "arguments": {"path": "skills/demo/SKILL.md"}}]}
        return f"Answered without a skill: {last_user_message(body)[:40]}"

    def trigger_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.server.requests if r and r.get("tools") and "pdf-forms" in
                str(r["messages"][0].get("content"))]
